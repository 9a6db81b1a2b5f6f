/**
 * Issue 15 made the common request cheaper by skipping work when the input shows it is not
 * needed (header values that need no decoding or escaping, ...). These tests hold each shortcut
 * to the result of the general path: the same JSON text, the same findings.
 */
import { describe, expect, it } from 'vitest';
import {
  isAbsoluteUri,
  isJsonContentType,
  isUriReference,
} from '../../../functions/core/cloudevents/attribute-syntax.js';
import {
  arrayElementSpans,
  memberValueSpan,
  topLevelMemberCount,
} from '../../../functions/core/cloudevents/json-spans.js';
import {
  acceptedEvent,
  batchRequest,
  binaryRequest,
  invalidIssues,
  nlEvent,
  parse,
  problemOf,
  structuredRequest,
} from './fixtures.js';

const NL_HEADERS = {
  'ce-specversion': '1.0',
  'ce-type': 'nl.overheid.zaken.zaakstatus-gewijzigd',
  'ce-source': 'urn:nld:oin:00000001823288444000:systeem:BRP-component',
  'ce-id': 'f3dce042-cd6e-4977-844d-05be8dce7cea',
};

describe('issue 15: binary mode builds the JSON format text without JSON.stringify when nothing needs escaping', () => {
  const cases: [string, Record<string, string>][] = [
    ['plain values', { 'ce-subject': '999990000', 'ce-nlbrpnationaliteit': '0083' }],
    ['a raw quote', { 'ce-subject': 'zaak "12"' }],
    ['a raw backslash', { 'ce-subject': 'C:\\zaken' }],
    ['a percent-encoded value', { 'ce-subject': 'caf%C3%A9' }],
    ['a name that is an array index, which objects order first', { 'ce-7': 'zeven', 'ce-subject': 's' }],
    ['a Content-Type with a quoted parameter', { 'content-type': 'application/json; profile="urn:x"' }],
  ];
  for (const [name, headers] of cases) {
    it(`issue 15, HTTP-2: ${name} gives the text JSON.stringify gives`, () => {
      const body = '{"zaak":"ZAAK-1"}';
      const event = acceptedEvent(
        parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'application/json', ...headers }, body)),
      );
      expect(event.json).toBe(`{${JSON.stringify(event.attributes).slice(1, -1)},"data":${body}}`);
      expect(JSON.parse(event.json)).toEqual({ ...event.attributes, data: { zaak: 'ZAAK-1' } });
    });
  }

  it('issue 15, CE-2: a tab in a header value, allowed on the wire, is still a control character in the attribute', () => {
    expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': 'a\tb' })))).toEqual([
      'CE-2 string-characters subject',
    ]);
    expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-myext': 'a\tb' })))).toEqual([
      'CE-2 string-characters myext',
    ]);
  });

  it('issue 15, CE-2: a percent-encoded control character is found after decoding', () => {
    expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': 'a%7Fb' })))).toEqual([
      'CE-2 string-characters subject',
    ]);
    expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': 'a%00b' })))).toEqual([
      'CE-2 string-characters subject',
    ]);
  });
});

describe('issue 15: a body of printable ASCII without escapes skips the CE-2 character pass, and only such a body', () => {
  // Each text has one offending attribute and otherwise plain ASCII, so only the shortcut's own
  // conditions (an escape, DEL, a non-ASCII character) can send it down the general path.
  const offending: [string, string][] = [
    ['an escaped control character', '"subject":"a\\u0007b"'],
    ['a raw DEL', '"subject":"a\u007fb"'],
    ['a raw noncharacter', '"subject":"a\ufffeb"'],
    ['an escaped control character in an extension', '"myext":"a\\u001bb"'],
  ];
  for (const [name, member] of offending) {
    it(`issue 15, CE-2: ${name} is still found in structured mode`, () => {
      const text = `${JSON.stringify(nlEvent({ data: { zaak: 'ZAAK-1' } })).slice(0, -1)},${member}}`;
      const attribute = member.slice(1, member.indexOf('"', 1));
      expect(invalidIssues(parse(structuredRequest(text)))).toEqual([`CE-2 string-characters ${attribute}`]);
    });

    it(`issue 15, CE-2: ${name} is still found in a batch member`, () => {
      const text = `[${JSON.stringify(nlEvent())},${JSON.stringify(nlEvent()).slice(0, -1)},${member}}]`;
      const attribute = member.slice(1, member.indexOf('"', 1));
      expect(invalidIssues(parse(batchRequest(text)))).toEqual([`CE-2 string-characters ${attribute} #1`]);
    });
  }

  it('issue 15, CE-2: an escape in data alone does not make valid attributes invalid', () => {
    const event = acceptedEvent(
      parse(structuredRequest(nlEvent({ subject: 'zaak', data: { tekst: 'regel\nregel "twee"' } }))),
    );
    expect(event.attributes['subject']).toBe('zaak');
  });
});

describe('issue 15: the shortcut for the common URI shape accepts nothing the RFC 3986 grammar refuses', () => {
  // With a scheme and without `?` or `#`, a URI-reference is valid exactly when it is a valid
  // absolute URI, and isAbsoluteUri has no shortcut: it is the grammar to compare with.
  const ALPHABET = 'aZ09:/@-._~!$&\'()*+,;=[] "<>\\^`{|}%é';
  function* candidates(): Generator<string> {
    yield* [
      'urn:nld:oin:1:systeem:x',
      'a:',
      'a:/',
      'a://',
      'a:///x',
      'a://host/p',
      'a:/b//c',
      'a::',
      'a:b c',
      'a:[x]',
      'a:%41',
      'a:%4',
      'a://h:p',
      'a://u@h@x',
    ];
    // A fixed linear congruential sequence: the same strings on every run.
    let seed = 15;
    for (let n = 0; n < 5000; n++) {
      let s = 'urn:';
      const length = n % 12;
      for (let i = 0; i < length; i++) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        s += ALPHABET[seed % ALPHABET.length];
      }
      yield s;
    }
  }

  it('issue 15, CE-4: isUriReference agrees with the full grammar on 5,000 strings with a scheme', () => {
    let accepted = 0;
    for (const candidate of candidates()) {
      expect(isUriReference(candidate), candidate).toBe(isAbsoluteUri(candidate));
      if (isUriReference(candidate)) accepted++;
    }
    // Both answers occur, so the comparison says something.
    expect(accepted).toBeGreaterThan(100);
    expect(accepted).toBeLessThan(4900);
  });

  it('issue 15, CE-7: isJsonContentType answers as the media type does, with or without parameters', () => {
    expect(isJsonContentType('application/json')).toBe(true);
    expect(isJsonContentType('Application/JSON; charset=utf-8')).toBe(true);
    expect(isJsonContentType('application/vnd.zaak+json')).toBe(true);
    expect(isJsonContentType('application/jsonx')).toBe(false);
    expect(isJsonContentType('text/plain')).toBe(false);
  });
});

describe('issue 15: the table of ce- attribute names seen before is bounded, and names past it still work', () => {
  it('issue 15, HTTP-2: 300 different extension names, past the table, each come back as their own attribute', () => {
    for (let n = 0; n < 300; n++) {
      const event = acceptedEvent(parse(binaryRequest({ ...NL_HEADERS, [`ce-ext${n}`]: `value${n}` })));
      expect(event.attributes[`ext${n}`]).toBe(`value${n}`);
      expect(JSON.parse(event.json)[`ext${n}`]).toBe(`value${n}`);
    }
  });
});

describe('issue 15: nested values are passed over by a pattern up to 256 KB of text, and by the loop beyond', () => {
  // Brackets, quotes and backslashes inside strings, flat and deep values, empty ones.
  const data =
    '{"a":"}{][","b":[{"c":"\\"}"},[],{}],"d":{"e":{"f":[[1,2],[3,{"g":"\\\\"}]]}},"h":"[","i":-1.5e3,"j":true}';
  const event = `{"specversion":"1.0","data":${data},"id":"1","source":"urn:nld:x","type":"nl.x.y"}`;
  // The same text past the limit: whitespace after JSON text is still the same JSON.
  const padding = ' '.repeat(300 * 1024);

  it('issue 15, review #7: the member count and the spans are the same on both sides of the limit', () => {
    for (const text of [event, event + padding]) {
      expect(JSON.parse(text).data).toEqual(JSON.parse(data));
      expect(topLevelMemberCount(text)).toBe(5);
      const span = memberValueSpan(text, 'data')!;
      expect(text.slice(span[0], span[1])).toBe(data);
      const batch = `[${event},${data},[${data}]]`;
      const spans = arrayElementSpans(text === event ? batch : batch + padding);
      expect(spans.map(([start, end]) => batch.slice(start, end))).toEqual([event, data, `[${data}]`]);
    }
  });

  it('issue 15, review #7: a duplicate after tricky data is still found, below and above the limit', () => {
    const text = `${event.slice(0, -1)},"id":"2"}`;
    for (const body of [text, text + padding]) {
      expect(invalidIssues(parse(structuredRequest(body), { maxEventBytes: 1024 * 1024 }))).toEqual([
        'HTTP-1 duplicate-member id',
      ]);
    }
  });

  it('issue 15, review #3: 256 KB of tiny objects, the most the pattern is given, is passed over without exhausting its stack', () => {
    const members = Array.from({ length: 256 * 128 }, () => '{"":""}').join(',');
    const text = `{"specversion":"1.0","id":"1","source":"urn:nld:x","type":"nl.x.y","data":[${members}]}`.slice(
      0,
      256 * 1024,
    );
    const fitting = `${text.slice(0, text.lastIndexOf('{"":""}'))}{"":""}]}`;
    expect(fitting.length).toBeLessThanOrEqual(256 * 1024);
    expect(topLevelMemberCount(fitting)).toBe(5);
  });
});

describe('issue 15: the Content-Type kept from the previous request answers only for the same Content-Type', () => {
  it('issue 15, HTTP-1/HTTP-3: alternating Content-Types each get their own media type and charset', () => {
    const event = nlEvent();
    for (let round = 0; round < 2; round++) {
      expect(parse(structuredRequest(event, 'application/cloudevents+json; charset=utf-8')).ok).toBe(true);
      expect(problemOf(parse(structuredRequest(event, 'application/cloudevents+json; charset=latin1'))).status).toBe(
        415,
      );
      expect(parse(batchRequest([event], 'application/cloudevents-batch+json; charset=utf-8'))).toMatchObject({
        ok: true,
        mode: 'batch',
      });
      expect(parse(structuredRequest(event, 'application/cloudevents+json'))).toMatchObject({
        ok: true,
        mode: 'structured',
      });
      expect(problemOf(parse(structuredRequest(event, 'application/cloudevents+xml'))).status).toBe(415);
    }
  });
});
