import { describe, expect, it } from 'vitest';
import {
  summary,
  acceptedEvent,
  acceptedEvents,
  batchRequest,
  binaryRequest,
  invalidIssues,
  nlEvent,
  parse,
  problemOf,
  structuredRequest,
} from './fixtures.js';
import { problemTypeUri } from '../../support/problem-types.js';
import type { ValidationIssue } from '../../../functions/core/http/problems.js';

const NL_HEADERS = {
  'ce-specversion': '1.0',
  'ce-type': 'nl.overheid.zaken.zaakstatus-gewijzigd',
  'ce-source': 'urn:nld:oin:00000001823288444000:systeem:BRP-component',
  'ce-id': 'f3dce042-cd6e-4977-844d-05be8dce7cea',
};

describe('HTTP-1 structured mode', () => {
  it('HTTP-1: an application/cloudevents+json body is one event, kept byte for byte', () => {
    // Formatting, key order, escapes and a number beyond 2^53 must all survive.
    const text =
      '{\n  "specversion" : "1.0", "type":"nl.brp.persoon-verhuisd",\n "source":"urn:nld:oin:1:systeem:BRP", "id":"caf\\u00e9",\n' +
      ' "nlbrpnationaliteit":"0083", "geheimnummer": null, "data": {"bedrag": 12345678901234567890, "tekst": "a\\/b"} }\n';
    const outcome = parse(structuredRequest(text));
    expect(outcome.ok && outcome.mode).toBe('structured');
    const event = acceptedEvent(outcome);
    expect(event.json).toBe(text);
    expect(event).toMatchObject({ id: 'café', source: 'urn:nld:oin:1:systeem:BRP', type: 'nl.brp.persoon-verhuisd' });
    expect(event.attributes).toEqual({
      specversion: '1.0',
      type: 'nl.brp.persoon-verhuisd',
      source: 'urn:nld:oin:1:systeem:BRP',
      id: 'café',
      nlbrpnationaliteit: '0083',
    });
  });

  it('HTTP-1: charset parameters and the case of the media type do not matter', () => {
    for (const contentType of [
      'application/cloudevents+json; charset=utf-8',
      'application/cloudevents+json;charset=UTF-8',
      'Application/CloudEvents+JSON; charset="utf-8"',
      'application/cloudevents+json ; charset=us-ascii',
    ]) {
      expect(acceptedEvent(parse(structuredRequest(nlEvent(), contentType))).id, contentType).toBe(nlEvent()['id']);
    }
  });

  it('HTTP-1: a parameter other than charset leaves the body UTF-8 and the event accepted', () => {
    expect(
      acceptedEvent(parse(structuredRequest(nlEvent(), 'application/cloudevents+json; profile="urn:nld:x"'))).id,
    ).toBe(nlEvent()['id']);
  });

  it('HTTP-1: warnings come back with an accepted event', () => {
    const outcome = parse(structuredRequest(nlEvent({ source: 'https://example.com/zaken' })));
    expect(outcome.ok && outcome.warnings.map((w) => `${w.requirement} ${w.rule}`)).toEqual(['CE-4 nld-urn']);
  });

  it('HTTP-1: malformed JSON is a 400 malformed-json problem that quotes nothing of the body', () => {
    for (const text of ['{"specversion":"1.0", "data": {"secret": x}}', '', '\uFEFF{}', '{"a":1}{"b":2}']) {
      const problem = problemOf(parse(structuredRequest(text)));
      expect(problem).toMatchObject({ status: 400, type: problemTypeUri('malformed-json'), title: 'Malformed JSON' });
      expect(JSON.stringify(problem)).not.toContain('secret');
    }
  });

  it('HTTP-1: a body that is not UTF-8 is malformed JSON', () => {
    const body = Buffer.concat([
      Buffer.from('{"specversion":"1.0","subject":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    expect(problemOf(parse({ headers: { 'content-type': 'application/cloudevents+json' }, body }))).toMatchObject({
      status: 400,
      type: problemTypeUri('malformed-json'),
    });
  });

  it('HTTP-1: charset=utf8, the common spelling without a hyphen, is UTF-8 and accepted', () => {
    // The charset check lists the spellings it accepts one by one; each must be one that is read.
    for (const contentType of [
      'application/cloudevents+json; charset=utf8',
      'application/cloudevents+json; charset=UTF8',
    ]) {
      expect(acceptedEvent(parse(structuredRequest(nlEvent(), contentType))).id, contentType).toBe(nlEvent()['id']);
    }
  });

  it("CE-1, CE-4: a refused event's problem lists its warnings too, and a problem without any has no warnings member", () => {
    // A client fixing the errors should learn of the SHOULD-level findings in the same answer.
    const problem = problemOf(parse(structuredRequest(nlEvent({ id: '', source: 'https://example.com/zaken' }))));
    expect(summary(problem.errors)).toEqual(['CE-3 non-empty id']);
    expect(summary(problem['warnings'] as ValidationIssue[])).toEqual(['CE-4 nld-urn source']);
    expect(problemOf(parse(structuredRequest(nlEvent({ id: '' }))))).not.toHaveProperty('warnings');
  });

  it('HTTP-1: a charset other than UTF-8 is not understood (415)', () => {
    const problem = problemOf(parse(structuredRequest(nlEvent(), 'application/cloudevents+json; charset=iso-8859-1')));
    expect(problem.status).toBe(415);
    expect(problem.detail).toContain('iso-8859-1');
  });

  it('HTTP-1: a structured body that is not an object is an invalid event', () => {
    expect(invalidIssues(parse(structuredRequest([nlEvent()])))).toEqual(['HTTP-1 event-object -']);
    expect(invalidIssues(parse(structuredRequest('"text"')))).toEqual(['HTTP-1 event-object -']);
  });

  it('HTTP-1, issue 15: null, a number or a boolean as the body is an invalid event, not a crash of the duplicate count', () => {
    for (const body of ['null', '5', 'true', ' null ']) {
      expect(invalidIssues(parse(structuredRequest(body))), body).toEqual(['HTTP-1 event-object -']);
    }
  });
});

describe('HTTP-2 binary mode', () => {
  it('HTTP-2: ce- headers are the attributes and a JSON body is spliced in verbatim as data', () => {
    const body = '{ "bsn" : "999990342",\n  "bedrag": 12345678901234567890 }';
    const outcome = parse(
      binaryRequest(
        { ...NL_HEADERS, 'content-type': 'application/json; charset=utf-8', 'ce-nlbrpnationaliteit': '0083' },
        body,
      ),
    );
    expect(outcome.ok && outcome.mode).toBe('binary');
    const event = acceptedEvent(outcome);
    expect(event.attributes).toEqual({
      ...nlEvent(),
      nlbrpnationaliteit: '0083',
      datacontenttype: 'application/json; charset=utf-8',
    });
    expect(event.json).toBe(
      `{"specversion":"1.0","type":"nl.overheid.zaken.zaakstatus-gewijzigd","source":"urn:nld:oin:00000001823288444000:systeem:BRP-component",` +
        `"id":"f3dce042-cd6e-4977-844d-05be8dce7cea","nlbrpnationaliteit":"0083","datacontenttype":"application/json; charset=utf-8","data":${body}}`,
    );
  });

  it('HTTP-2: any +json media type is spliced in as JSON data', () => {
    const event = acceptedEvent(
      parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'application/vnd.zaak+json' }, '[1, 2]')),
    );
    expect(JSON.parse(event.json).data).toEqual([1, 2]);
  });

  it('HTTP-2: header names are case-insensitive', () => {
    const event = acceptedEvent(
      parse(
        binaryRequest(
          {
            'CE-SpecVersion': '1.0',
            'Ce-Type': 'nl.brp.persoon-verhuisd',
            'CE-SOURCE': 'urn:nld:oin:1:systeem:x',
            'ce-Id': '42',
            'Content-Type': 'application/json',
            'CE-MyExt': 'v',
          },
          '{}',
        ),
      ),
    );
    expect(event.attributes).toEqual({
      specversion: '1.0',
      type: 'nl.brp.persoon-verhuisd',
      source: 'urn:nld:oin:1:systeem:x',
      id: '42',
      myext: 'v',
      datacontenttype: 'application/json',
    });
  });

  it('HTTP-2: header values are percent-decoded as UTF-8', () => {
    const event = acceptedEvent(
      parse(
        binaryRequest({
          ...NL_HEADERS,
          'ce-subject': 'caf%C3%A9 %22quoted%22 100%25',
          // The profile's example source holds percent-encoding itself, so on the wire its % is %25.
          'ce-source': 'urn:nld:gemeente-Bergen%2520%2528L%2529.burgerzakensysteem',
        }),
      ),
    );
    expect(event.attributes['subject']).toBe('café "quoted" 100%');
    expect(event.attributes['source']).toBe('urn:nld:gemeente-Bergen%20%28L%29.burgerzakensysteem');
  });

  it('HTTP-2: a value to decode may hold printable US-ASCII up to ~; a raw control character, DEL or anything beyond is refused', () => {
    // The quotes make the value one to decode, so the header-character check, not the plain-value shortcut, decides.
    expect(
      acceptedEvent(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': '~ %22x%22' }))).attributes['subject'],
    ).toBe('~ "x"');
    for (const raw of ['%22\u0001', '%22\u007f', '%22\u00e9']) {
      expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': raw }))), JSON.stringify(raw)).toEqual([
        'HTTP-2 header-characters subject',
      ]);
    }
  });

  it('HTTP-2: decoded values with quotes, backslashes and non-ASCII are escaped in the JSON format text', () => {
    const event = acceptedEvent(
      parse(
        binaryRequest(
          {
            ...NL_HEADERS,
            'ce-subject': '%22a%5Cb%22 caf%C3%A9 %F0%9F%8C%8E',
            'ce-note': 'plain',
            'content-type': 'application/json',
          },
          '{"x":1}',
        ),
      ),
    );
    expect(event.attributes['subject']).toBe('"a\\b" café 🌎');
    expect(JSON.parse(event.json)).toEqual({ ...event.attributes, data: { x: 1 } });
    expect(event.json).toContain(`"subject":"\\"a\\\\b\\" café 🌎","note":"plain"`);
  });

  it('HTTP-2: a value is validated after decoding, so an encoded space is still a space', () => {
    expect(
      invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-source': 'urn:nld:gemeente-Bergen%20%28L%29' }))),
    ).toEqual(['CE-4 uri-reference source']);
  });

  it('HTTP-2: a header that is not valid percent-encoded UTF-8 is rejected', () => {
    expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': '100%', 'ce-other': '%C3%28' })))).toEqual([
      'HTTP-2 percent-encoding subject',
      'HTTP-2 percent-encoding other',
    ]);
  });

  it('HTTP-2: text bodies become string data when they decode as UTF-8 or US-ASCII', () => {
    const utf8 = acceptedEvent(
      parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'text/plain; charset=utf-8' }, 'Hello, 🌎!\n')),
    );
    expect(JSON.parse(utf8.json).data).toBe('Hello, 🌎!\n');
    const xml = acceptedEvent(
      parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'application/xml' }, '<much wow="xml"/>')),
    );
    expect(JSON.parse(xml.json).data).toBe('<much wow="xml"/>');
  });

  it('HTTP-2: a +xml media type is text as well, also with a parameter other than charset', () => {
    const atom = acceptedEvent(
      parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'application/atom+xml; type=feed' }, '<feed/>')),
    );
    expect(JSON.parse(atom.json).data).toBe('<feed/>');
  });

  it('HTTP-2: bodies that are binary, in another charset or undecodable become data_base64', () => {
    const bytes = Buffer.from([0x00, 0xff, 0x10, 0x80]);
    const cases: [string | undefined, Buffer][] = [
      ['application/octet-stream', bytes],
      ['text/plain; charset=iso-8859-1', Buffer.from('caf\u00e9', 'latin1')],
      ['text/plain', bytes],
      ['text/plain; charset=us-ascii', Buffer.from('café')],
      [undefined, Buffer.from('{"world":"hello"}')],
    ];
    for (const [contentType, body] of cases) {
      const headers: Record<string, string> =
        contentType === undefined ? { ...NL_HEADERS } : { ...NL_HEADERS, 'content-type': contentType };
      const stored = JSON.parse(acceptedEvent(parse(binaryRequest(headers, body))).json) as Record<string, unknown>;
      expect(stored['data_base64'], contentType).toBe(body.toString('base64'));
      expect(stored['data']).toBeUndefined();
      expect(stored['datacontenttype']).toBe(contentType);
    }
  });

  it('HTTP-2: an empty body means no data', () => {
    const stored = JSON.parse(
      acceptedEvent(parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'application/json' }))).json,
    ) as Record<string, unknown>;
    expect('data' in stored || 'data_base64' in stored).toBe(false);
    expect(stored['datacontenttype']).toBe('application/json');
  });

  it('HTTP-2, issue 15: a JSON body with a byte order mark or bytes that are not UTF-8 is malformed JSON', () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]);
    const notUtf8 = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0xa0]), Buffer.from('"}')]);
    for (const body of [bom, notUtf8]) {
      expect(
        problemOf(parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'application/json' }, body))),
      ).toMatchObject({
        status: 400,
        type: problemTypeUri('malformed-json'),
      });
    }
  });

  it('HTTP-2: a JSON media type with a body that is not JSON is malformed JSON', () => {
    expect(
      problemOf(parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'application/json' }, 'Hello'))),
    ).toMatchObject({
      status: 400,
      type: problemTypeUri('malformed-json'),
    });
  });

  it('HTTP-2: with invalid attributes too, the malformed JSON data is listed among the errors', () => {
    expect(
      invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-id': '', 'content-type': 'application/json' }, '{oops'))),
    ).toEqual(['CE-3 non-empty id', 'HTTP-2 json-data data']);
  });

  it('HTTP-2: binary attributes are validated like structured ones', () => {
    expect(
      invalidIssues(
        parse(binaryRequest({ 'ce-specversion': '0.3', 'ce-type': 'event', 'ce-time': 'now', 'content-type': 'xyz' })),
      ),
    ).toEqual([
      'CE-5 specversion specversion',
      'CE-6 reverse-dns type',
      'CE-10 timestamp time',
      'CE-7 media-type datacontenttype',
      'CE-3 required id',
      'CE-4 required source',
    ]);
  });

  it('HTTP-2: data cannot travel in a ce- header', () => {
    expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-data': 'x' })))).toEqual(['HTTP-2 binary-data data']);
    expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-data_base64': 'eA==' })))).toEqual([
      'HTTP-2 binary-data data_base64',
    ]);
  });

  it('HTTP-2, review #4: a ce-datacontenttype header is refused naming HTTP binding §3.1.1, with or without a Content-Type', () => {
    for (const headers of [{ 'content-type': 'application/json' }, {}] as Record<string, string>[]) {
      const problem = problemOf(
        parse(binaryRequest({ ...NL_HEADERS, 'ce-datacontenttype': 'text/plain', ...headers }, '1')),
      );
      expect(summary(problem.errors)).toEqual(['HTTP-2 binary-content-type datacontenttype']);
      expect(problem.errors![0]!.message).toContain('§3.1.1');
    }
  });

  it('CE-7, HTTP-2, issue 28: a Content-Type header that is present but empty is a 400, not an event without datacontenttype', () => {
    // HTTP binding §3.1.1: Content-Type is datacontenttype, and an empty value is no RFC 2046 media type.
    for (const body of ['', 'empty content type']) {
      const problem = problemOf(parse(binaryRequest({ ...NL_HEADERS, 'content-type': '' }, body)));
      expect(problem.status).toBe(400);
      expect(summary(problem.errors)).toEqual(['CE-7 media-type datacontenttype']);
      expect(problem.errors![0]!.message).toContain('Content-Type header is empty');
    }
    // Without the header the event simply has no datacontenttype.
    const event = acceptedEvent(parse(binaryRequest({ ...NL_HEADERS })));
    expect(event.attributes).toEqual(nlEvent());
    expect(JSON.parse(event.json)).toEqual(nlEvent());
  });

  it('HTTP-2, issue 28: a ce- header sent twice, which API Gateway and the laptop hand over joined by a comma, is a 400 naming the header', () => {
    // Two `ce-id` lines reach the function as one value `first,second` (payload format 2.0; the
    // laptop's local/api-gateway.ts joins them the same way, test/integration/local-api-gateway.test.ts).
    for (const [header, value] of [
      ['ce-id', 'first,second'],
      ['ce-source', 'urn:nld:oin:1:systeem:a,urn:nld:oin:1:systeem:b'],
      ['ce-specversion', '1.0,1.0'],
      ['ce-comexampleext', 'x,x'],
      ['ce-subject', 'caf%C3%A9,caf%C3%A9'],
    ] as const) {
      const problem = problemOf(parse(binaryRequest({ ...NL_HEADERS, [header]: value })));
      expect(problem.status, header).toBe(400);
      const repeated = problem.errors!.filter((issue) => issue.rule === 'repeated-header');
      expect(summary(repeated), header).toEqual([`HTTP-2 repeated-header ${header.slice(3)}`]);
      expect(repeated[0]!.message).toContain(`The ${header} header came more than once`);
    }
    // A comma the value itself holds travels percent-encoded; the binding lets any character be (§3.1.3.2).
    expect(
      acceptedEvent(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': 'Jansen%2C%20Piet' }))).attributes['subject'],
    ).toBe('Jansen, Piet');
  });

  it('HTTP-2, issue 28: a quoted ce- header value is unquoted before percent-decoding; an unbalanced one is a 400, an empty one the empty string', () => {
    // HTTP binding §3.1.3.2: "any HTTP header value MUST first be unescaped with respect to double-quoted strings" (RFC 9110 §5.6.4).
    const quoted = acceptedEvent(
      parse(binaryRequest({ ...NL_HEADERS, 'ce-id': '"abc"', 'ce-subject': '"caf%C3%A9 \\"x\\" \\\\ y"' })),
    );
    expect(quoted.attributes['id']).toBe('abc');
    expect(quoted.attributes['subject']).toBe('café "x" \\ y');
    expect(JSON.parse(quoted.json)).toMatchObject({ id: 'abc', subject: 'café "x" \\ y' });
    // Unbalanced: text after the closing quote, no closing quote, or a closing quote escaped away.
    for (const value of ['"a"b"', '"abc', '"', '"abc\\"', '"abc\\', '""x']) {
      const problem = problemOf(parse(binaryRequest({ ...NL_HEADERS, 'ce-id': value })));
      expect(summary(problem.errors), value).toEqual(['HTTP-2 quoted-string id']);
      expect(problem.errors![0]!.message).toContain('ce-id header begins with a double quote');
    }
    // Empty: the empty string, which id may not be (CE-3); for an extension it is a value like any other.
    expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-id': '""' })))).toEqual(['CE-3 non-empty id']);
    expect(
      acceptedEvent(parse(binaryRequest({ ...NL_HEADERS, 'ce-comexampleext': '""' }))).attributes['comexampleext'],
    ).toBe('');
    // A value that does not begin with a quote is taken as it is, as older senders wrote a raw quote inside one.
    expect(acceptedEvent(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': 'a"b' }))).attributes['subject']).toBe(
      'a"b',
    );
  });

  it('HTTP-2: a text body is string data for charset=utf8 and for US-ASCII text; an ASCII body in another charset stays data_base64', () => {
    const dataOf = (contentType: string, body: string): Record<string, unknown> =>
      JSON.parse(
        acceptedEvent(parse(binaryRequest({ ...NL_HEADERS, 'content-type': contentType }, Buffer.from(body, 'latin1'))))
          .json,
      );
    expect(dataOf('text/plain; charset=utf8', 'Hallo')).toMatchObject({ data: 'Hallo' });
    expect(dataOf('text/plain; charset=us-ascii', 'Hallo')).toMatchObject({ data: 'Hallo' });
    // Koerier decodes UTF-8 only: bytes in any other charset are kept as they came, even when they happen to be ASCII.
    const latin1 = dataOf('text/plain; charset=iso-8859-1', 'Hallo');
    expect(latin1['data']).toBeUndefined();
    expect(latin1['data_base64']).toBe(Buffer.from('Hallo').toString('base64'));
  });

  it('HTTP-2: a JSON body longer than the 256 KB the syntax pattern proves is still spliced in as data', () => {
    // Past that length JSON.parse decides instead of the pattern; valid JSON must not be refused for its length alone.
    const body = `{"tekst":"${'x'.repeat(300 * 1024)}"}`;
    const event = acceptedEvent(
      parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'application/json' }, body), { maxEventBytes: 1024 * 1024 }),
    );
    expect(event.json.endsWith(`,"data":${body}}`)).toBe(true);
    expect(JSON.parse(event.json).data).toEqual(JSON.parse(body));
  });

  it('HTTP-2: a ce-__proto__ header is an invalid attribute name, not a prototype', () => {
    expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-__proto__': 'x' })))).toEqual([
      'CE-1 attribute-name __proto__',
    ]);
  });
});

describe('HTTP-3 batch mode', () => {
  const first = nlEvent({ id: 'een', data: { n: 1 } });
  const second = nlEvent({ id: 'twee', datacontenttype: 'text/plain', data: 'tekst' });

  it('HTTP-3: a batch is accepted in order, each member kept as its own slice of the text', () => {
    const member1 =
      '{"specversion":"1.0","type":"nl.brp.persoon-verhuisd","source":"urn:nld:oin:1:systeem:x","id":"een","data":{"big":12345678901234567890}}';
    const member2 = `{ "specversion": "1.0", "type": "nl.brp.persoon-verhuisd", "source": "urn:nld:oin:1:systeem:x", "id": "twee", "note": "a, \\"quoted\\" ] }" }`;
    const outcome = parse(
      batchRequest(`[\n  ${member1} ,\n\t${member2}\n]`, 'application/cloudevents-batch+json; charset=UTF-8'),
    );
    expect(outcome.ok && outcome.mode).toBe('batch');
    const events = acceptedEvents(outcome);
    expect(events.map((e) => e.json)).toEqual([member1, member2]);
    expect(events.map((e) => e.id)).toEqual(['een', 'twee']);
    expect(events[1]!.attributes['note']).toBe('a, "quoted" ] }');
  });

  it('HTTP-3: an empty batch is accepted with no events', () => {
    const outcome = parse(batchRequest([]));
    expect(outcome).toEqual({ ok: true, mode: 'batch', events: [], warnings: [] });
  });

  it('HTTP-3: batch warnings carry the member index', () => {
    const outcome = parse(batchRequest([first, nlEvent({ source: '/relative' })]));
    expect(outcome.ok && outcome.warnings.map((w) => `${w.requirement} ${w.rule} #${w.index}`)).toEqual([
      'CE-4 nld-urn #1',
    ]);
  });

  it('HTTP-3: a batch is all or nothing — every violation of every member is listed with its index', () => {
    expect(
      invalidIssues(
        parse(
          batchRequest([first, nlEvent({ id: '' }), 'not an object', nlEvent({ time: 'noon', type: 'x' }), second]),
        ),
      ),
    ).toEqual([
      'CE-3 non-empty id #1',
      'HTTP-3 event-object - #2',
      'CE-6 reverse-dns type #3',
      'CE-10 timestamp time #3',
    ]);
  });

  it('HTTP-3: all members must share one specversion', () => {
    expect(invalidIssues(parse(batchRequest([first, nlEvent({ specversion: '0.9' })])))).toEqual([
      'HTTP-3 batch-specversion specversion #1',
      'CE-5 specversion specversion #1',
    ]);
  });

  it('HTTP-3: a null member is an invalid member, like any other member that is no object', () => {
    expect(invalidIssues(parse(batchRequest([first, null, second])))).toEqual(['HTTP-3 event-object - #1']);
  });

  it('HTTP-3: a first member that is not an object is reported alone, not as a specversion mismatch of the rest', () => {
    expect(invalidIssues(parse(batchRequest(['not an object', first, second])))).toEqual(['HTTP-3 event-object - #0']);
  });

  it('HTTP-3: a batch body must be an array', () => {
    expect(invalidIssues(parse(batchRequest(first)))).toEqual(['HTTP-3 batch-array -']);
  });

  it('HTTP-3: a malformed batch is malformed JSON', () => {
    expect(problemOf(parse(batchRequest('[{"id":1},')))).toMatchObject({
      status: 400,
      type: problemTypeUri('malformed-json'),
    });
  });
});

describe('HTTP-5 structured mode ignores ce- headers', () => {
  it('HTTP-5: ce- headers that contradict a structured body are ignored', () => {
    const event = acceptedEvent(
      parse(
        structuredRequest(nlEvent(), 'application/cloudevents+json', {
          'ce-id': 'from-header',
          'ce-specversion': '0.3',
          'ce-extra': 'x',
        }),
      ),
    );
    expect(event.id).toBe(nlEvent()['id']);
    expect(event.attributes).toEqual(nlEvent());
  });

  it('HTTP-5: ce- headers do not fill in attributes a structured body lacks', () => {
    const body = nlEvent();
    delete body['id'];
    expect(
      invalidIssues(parse(structuredRequest(body, 'application/cloudevents+json', { 'ce-id': 'from-header' }))),
    ).toEqual(['CE-3 required id']);
  });
});

describe('Content modes not understood (415)', () => {
  it('HTTP-1: another CloudEvents event format is answered 415 naming the format', () => {
    for (const contentType of [
      'application/cloudevents+xml',
      'application/cloudevents+avro',
      'application/cloudevents-batch+protobuf',
      'application/cloudevents',
    ]) {
      const problem = problemOf(parse(structuredRequest(nlEvent(), contentType, NL_HEADERS)));
      expect(problem, contentType).toMatchObject({ status: 415, type: problemTypeUri('unsupported-media-type') });
      expect(problem.detail).toContain(contentType);
    }
  });

  it('HTTP-2: a request without ce-specversion and without a CloudEvents media type is answered 415 explaining the modes', () => {
    const withType = problemOf(parse(binaryRequest({ 'content-type': 'application/json', 'ce-id': '1' }, '{}')));
    expect(withType.status).toBe(415);
    expect(withType.detail).toContain('application/json');
    for (const mode of ['application/cloudevents+json', 'application/cloudevents-batch+json', 'ce-specversion'])
      expect(withType.detail).toContain(mode);
    expect(problemOf(parse(binaryRequest({}, ''))).status).toBe(415);
  });
});

describe('Event size limit (413)', () => {
  const options = { maxEventBytes: 400 };
  const withData = (id: string, bytes: number) => nlEvent({ id, data: { text: 'x'.repeat(bytes) } });

  it('CE-14: an event of exactly the limit is accepted', () => {
    const event = nlEvent({ data: { text: '' } });
    const size = Buffer.byteLength(JSON.stringify(event));
    const exact = nlEvent({ data: { text: 'x'.repeat(400 - size) } });
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(400);
    expect(acceptedEvents(parse(structuredRequest(exact), options))).toHaveLength(1);
  });

  it('CE-14: a larger structured event is answered 413 with its size and the limit, before it is parsed', () => {
    const text = JSON.stringify(withData('te-groot', 400));
    const problem = problemOf(parse(structuredRequest(text), options));
    expect(problem).toMatchObject({
      status: 413,
      type: problemTypeUri('payload-too-large'),
      eventBytes: Buffer.byteLength(text),
      maxEventBytes: 400,
    });
    expect(problem.detail).toContain('400 bytes');
    // Not parsed: an oversized body that is not even JSON is still a 413, not a 400.
    expect(problemOf(parse(structuredRequest(`${text}}}}`), options)).status).toBe(413);
  });

  it('CE-14: the size counts UTF-8 bytes, not characters', () => {
    const euros = nlEvent({ id: 'euro', data: '€'.repeat(100) });
    expect(JSON.stringify(euros).length).toBeLessThan(400);
    expect(problemOf(parse(structuredRequest(euros), options)).status).toBe(413);
  });

  it('CE-14: an oversized batch member is answered 413 with its index', () => {
    expect(problemOf(parse(batchRequest([withData('klein', 10), withData('groot', 400)]), options))).toMatchObject({
      status: 413,
      eventId: 'groot',
      index: 1,
      maxEventBytes: 400,
    });
  });

  it('CE-14, review #3: a binary body over the limit is 413 before its headers are validated; one of exactly the limit is validated first', () => {
    // Without ce-id the headers are invalid: which answer comes shows whether the body was refused unread.
    const { 'ce-id': _id, ...withoutId } = NL_HEADERS;
    const headers = { ...withoutId, 'content-type': 'application/octet-stream' };
    expect(problemOf(parse(binaryRequest(headers, Buffer.alloc(401)), options))).toMatchObject({
      status: 413,
      eventBytes: 401,
      maxEventBytes: 400,
    });
    expect(invalidIssues(parse(binaryRequest(headers, Buffer.alloc(400)), options))).toEqual(['CE-3 required id']);
  });

  it('CE-14: a 413 names the event by an id of up to 256 characters, and by no id that is longer or not a string', () => {
    // The answer names the event, it does not echo whatever the client put in its id.
    const eventIdOf = (id: unknown) =>
      problemOf(parse(batchRequest([withData('klein', 10), nlEvent({ id, data: 'x'.repeat(400) })]), options))[
        'eventId'
      ];
    expect(eventIdOf('i'.repeat(256))).toBe('i'.repeat(256));
    expect(eventIdOf('i'.repeat(257))).toBeUndefined();
    expect(eventIdOf(['een'])).toBeUndefined();
    expect(eventIdOf({ length: 3 })).toBeUndefined();
  });

  it('CE-14: an oversized batch member that is no object is answered 413 with its index and without an id', () => {
    // Any member can be over the limit, whatever its type; null is, under a limit below its four bytes.
    expect(problemOf(parse(batchRequest([null]), { maxEventBytes: 3 }))).toMatchObject({ status: 413, index: 0 });
    expect(problemOf(parse(batchRequest([null]), { maxEventBytes: 3 }))).not.toHaveProperty('eventId');
    expect(problemOf(parse(batchRequest(['x'.repeat(500)]), options))).toMatchObject({ status: 413, index: 0 });
  });

  it('CE-14: an oversized binary event is answered 413 on its JSON format size', () => {
    expect(
      problemOf(
        parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'application/octet-stream' }, Buffer.alloc(300)), options),
      ),
    ).toMatchObject({
      status: 413,
      eventId: NL_HEADERS['ce-id'],
    });
  });
});
