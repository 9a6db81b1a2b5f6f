import { describe, expect, it } from 'vitest';
import { validateEventObject } from '../../../functions/core/cloudevents/index.js';
import { acceptedEvent, invalidIssues, nlEvent, parse, structuredRequest, summary } from './fixtures.js';
import { NL_GOV_EXAMPLE_EVENT } from '../../support/nl-gov-example-event.js';

/** Findings for the NL example event with `overrides` applied. */
function check(overrides: Record<string, unknown>): { errors: string[]; warnings: string[] } {
  const { errors, warnings } = validateEventObject(nlEvent(overrides));
  return { errors: summary(errors), warnings: summary(warnings) };
}

function without(...names: string[]): Record<string, unknown> {
  const event = nlEvent();
  for (const name of names) delete event[name];
  return event;
}

describe('validateEventObject', () => {
  it('EDU-3: accepts the NL GOV profile example event without findings', () => {
    expect(
      check({
        subject: '999990342',
        time: '2021-12-10T17:31:00Z',
        datacontenttype: 'application/json',
        data: { bsn: '999990342' },
      }),
    ).toEqual({
      errors: [],
      warnings: [],
    });
  });

  it("EDU-3: accepts the profile's full example event (dataref, sequence, sequencetype, a null extension) without findings, byte for byte", () => {
    expect(validateEventObject(JSON.parse(NL_GOV_EXAMPLE_EVENT))).toEqual({ errors: [], warnings: [] });
    const event = acceptedEvent(parse(structuredRequest(NL_GOV_EXAMPLE_EVENT)));
    // What is routed and delivered is the text received; the null extension counts as unset (JSON-1).
    expect(event.json).toBe(NL_GOV_EXAMPLE_EVENT);
    const {
      data: _data,
      geheimnummer: _unset,
      ...attributes
    } = JSON.parse(NL_GOV_EXAMPLE_EVENT) as Record<string, unknown>;
    expect(event.attributes).toEqual(attributes);
    expect(event.attributes).toMatchObject({
      dataref: 'https://gemeenteX/api/persoon/123456789',
      sequence: '1234',
      sequencetype: 'integer',
    });
  });

  it('reports every violation, not only the first', () => {
    const { errors } = validateEventObject({
      specversion: '0.3',
      id: '',
      type: 'x',
      source: 'a b',
      time: 'noon',
      MyExt: 1,
    });
    expect(summary(errors)).toEqual([
      'CE-5 specversion specversion',
      'CE-3 non-empty id',
      'CE-6 reverse-dns type',
      'CE-4 uri-reference source',
      'CE-10 timestamp time',
      'CE-1 attribute-name MyExt',
    ]);
  });

  it('HTTP-1: a value that is not a JSON object is not an event', () => {
    expect(summary(validateEventObject(['not', 'an', 'event']).errors)).toEqual(['HTTP-1 event-object -']);
    expect(summary(validateEventObject('text').errors)).toEqual(['HTTP-1 event-object -']);
  });

  it('HTTP-1: past the errors a problem lists, validation of the event ends, so a later member is not looked at', () => {
    // The 400 lists at most 100 errors; the rest of the event would only cost time, and a warning
    // found after that point would reach the 400 too.
    const invalidNames = Object.fromEntries(Array.from({ length: 101 }, (_, n) => [`X${n}`, 'x']));
    const { errors, warnings } = validateEventObject(
      nlEvent({ ...invalidNames, abcdefghijklmnopqrstuvwxyz: 'a long but valid name' }),
    );
    expect(errors).toHaveLength(100);
    expect(summary(errors).at(-1)).toBe('CE-1 attribute-name X99');
    expect(warnings).toEqual([]);
  });
});

describe('CE-1 attribute names', () => {
  it('CE-1: lower-case letters and digits are accepted as extension names', () => {
    expect(check({ nlbrpnationaliteit: '0083', ext2: 'x' })).toEqual({ errors: [], warnings: [] });
  });

  it('CE-1: names with capitals, punctuation, underscores or nothing at all are rejected', () => {
    expect(check({ MyExtension: 'bad', 'my.extension': 'bad', my_ext: 'bad', '': 'bad' }).errors).toEqual([
      'CE-1 attribute-name MyExtension',
      'CE-1 attribute-name my.extension',
      'CE-1 attribute-name my_ext',
      'CE-1 attribute-name ',
    ]);
  });

  it('CE-1: a name longer than 20 characters is accepted with a warning', () => {
    const name = 'abcdefghijklmnopqrstu';
    expect(name).toHaveLength(21);
    expect(check({ [name]: 'x', abcdefghijklmnopqrst: 'twenty is fine' })).toEqual({
      errors: [],
      warnings: [`CE-1 attribute-name-length ${name}`],
    });
  });

  it('CE-1: a __proto__ member is rejected and does not reach the attributes', () => {
    const outcome = parse(
      structuredRequest(
        `{"specversion":"1.0","id":"1","source":"urn:nld:x","type":"nl.x.y","__proto__":{"polluted":"yes"}}`,
      ),
    );
    expect(invalidIssues(outcome)).toEqual(['CE-1 attribute-name __proto__', 'CE-2 attribute-type __proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('CE-1, JSON-1, issue 28: an invalid extension name is refused whatever its value, null included', () => {
    expect(check({ 'Bad-Name': null, my_ext: null, '': null, okname: null }).errors).toEqual([
      'CE-1 attribute-name Bad-Name',
      'CE-1 attribute-name my_ext',
      'CE-1 attribute-name ',
    ]);
    expect(invalidIssues(parse(structuredRequest(JSON.stringify(nlEvent({ 'Bad-Name': null })))))).toEqual([
      'CE-1 attribute-name Bad-Name',
    ]);
    expect(
      invalidIssues(
        parse(
          structuredRequest(`{"specversion":"1.0","id":"1","source":"urn:nld:x","type":"nl.x.y","__proto__":null}`),
        ),
      ),
    ).toEqual(['CE-1 attribute-name __proto__']);
  });

  it('CE-1: an extension named like an Object.prototype member is an ordinary extension', () => {
    expect(check({ constructor: 5 })).toEqual({ errors: [], warnings: [] });
    expect(acceptedEvent(parse(structuredRequest(nlEvent({ constructor: 'x' })))).attributes['constructor']).toBe('x');
  });
});

describe('CE-2 type system', () => {
  it('CE-2: extension values may be strings, 32-bit integers and booleans', () => {
    expect(
      check({
        extstring: 'text',
        extinteger: 10,
        extmax: 2147483647,
        extmin: -2147483648,
        extboolean: true,
        extfalse: false,
        extbinary: 'TWE=',
      }).errors,
    ).toEqual([]);
  });

  it('CE-2: strings may hold any character outside the forbidden ranges, including surrogate pairs', () => {
    expect(check({ subject: 'Bergen (L) — café 😀 \u00A0\u00FF\uFFFD' }).errors).toEqual([]);
  });

  it('CE-2: integers outside the signed 32-bit range and non-integer numbers are rejected', () => {
    expect(check({ big: 2147483648, small: -2147483649, half: 1.5 }).errors).toEqual([
      'CE-2 integer big',
      'CE-2 integer small',
      'CE-2 integer half',
    ]);
  });

  it('CE-2: objects and arrays are not attribute values', () => {
    expect(check({ obj: { a: 1 }, arr: [1], subject: { text: 'x' } }).errors).toEqual([
      'CE-2 attribute-type obj',
      'CE-2 attribute-type arr',
      'CE-9 string subject',
    ]);
  });

  it('CE-2: control characters, noncharacters and unpaired surrogates are rejected in every string', () => {
    expect(
      check({
        subject: 'line\nbreak',
        nul: 'a\u0000b',
        del: '\u007F',
        c1: 'x\u0085',
        nonchar: '\uFDD0',
        fffe: '\uFFFE',
        plane1: String.fromCodePoint(0x1fffe),
        lone: '\uDEAD',
        highonly: 'a\uD800',
      }).errors,
    ).toEqual([
      'CE-2 string-characters subject',
      'CE-2 string-characters nul',
      'CE-2 string-characters del',
      'CE-2 string-characters c1',
      'CE-2 string-characters nonchar',
      'CE-2 string-characters fffe',
      'CE-2 string-characters plane1',
      'CE-2 string-characters lone',
      'CE-2 string-characters highonly',
    ]);
  });

  it('CE-2: a string made only of control characters below U+0020 is rejected', () => {
    // No character above U+007E and none printable: only the low end of the printable range sends these to the full check.
    expect(check({ subject: '\u0001', note: '\t\n' }).errors).toEqual([
      'CE-2 string-characters subject',
      'CE-2 string-characters note',
    ]);
  });

  it('CE-2: an escaped lone surrogate in the JSON text is rejected, an escaped pair accepted', () => {
    const base = '{"specversion":"1.0","id":"1","source":"urn:nld:x","type":"nl.x.y"';
    expect(invalidIssues(parse(structuredRequest(`${base},"subject":"\\uDEAD"}`)))).toEqual([
      'CE-2 string-characters subject',
    ]);
    expect(acceptedEvent(parse(structuredRequest(`${base},"subject":"\\uD800\\uDEAD"}`))).attributes['subject']).toBe(
      '\uD800\uDEAD',
    );
  });
});

describe('CE-3 id', () => {
  it('CE-3: a non-empty string id is accepted', () => {
    expect(check({ id: 'doc2021033441' }).errors).toEqual([]);
  });

  it('CE-3: a missing, empty, null or non-string id is rejected', () => {
    expect(summary(validateEventObject(without('id')).errors)).toEqual(['CE-3 required id']);
    expect(check({ id: '' }).errors).toEqual(['CE-3 non-empty id']);
    expect(check({ id: null }).errors).toEqual(['CE-3 required id']);
    expect(check({ id: 25 }).errors).toEqual(['CE-3 string id']);
  });
});

describe('CE-4 source', () => {
  it('CE-4: an nld URN is accepted without a warning', () => {
    expect(check({ source: 'urn:nld:kvknr:09220932.burgerzakensysteem' })).toEqual({ errors: [], warnings: [] });
    expect(check({ source: 'urn:nld:gemeente-Bergen%20%28L%29.burgerzakensysteem' })).toEqual({
      errors: [],
      warnings: [],
    });
  });

  it('CE-4: other URI-references are accepted with a profile warning', () => {
    for (const source of [
      'https://github.com/cloudevents',
      'mailto:cncf-wg-serverless@lists.cncf.io',
      'urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66',
      '/cloudevents/spec/pull/123',
      '1-555-123-4567',
      '#fragment',
      '//[2001:db8::1]:8080/x?q=1',
    ]) {
      expect(check({ source }), source).toEqual({ errors: [], warnings: ['CE-4 nld-urn source'] });
    }
  });

  it('CE-4: a missing, empty or malformed source is rejected', () => {
    expect(summary(validateEventObject(without('source')).errors)).toEqual(['CE-4 required source']);
    expect(check({ source: '' }).errors).toEqual(['CE-4 non-empty source']);
    for (const source of ['has space', 'caf\u00e9', '1a:b', 'http://a/%zz', '//a@b@c', 'x"y']) {
      expect(check({ source }).errors, source).toEqual(['CE-4 uri-reference source']);
    }
  });

  it('CE-4: urn:nld: with nothing after it names no organisation, so it gets the profile warning', () => {
    expect(check({ source: 'urn:nld:' })).toEqual({ errors: [], warnings: ['CE-4 nld-urn source'] });
    expect(check({ source: 'urn:nld:x' })).toEqual({ errors: [], warnings: [] });
  });
});

describe('CE-5 specversion', () => {
  it('CE-5: specversion 1.0 is accepted', () => {
    expect(check({ specversion: '1.0' }).errors).toEqual([]);
  });

  it('CE-5: any other specversion is rejected with a message that names the accepted version', () => {
    for (const specversion of ['0.3', '1', '1.0.2', '', ' 1.0']) {
      const { errors } = validateEventObject(nlEvent({ specversion }));
      expect(summary(errors), specversion).toEqual(['CE-5 specversion specversion']);
      expect(errors[0]!.message).toContain("'1.0' only");
    }
    expect(check({ specversion: 1.0 }).errors).toEqual(['CE-5 string specversion']);
    expect(summary(validateEventObject(without('specversion')).errors)).toEqual(['CE-5 required specversion']);
  });
});

describe('CE-6 type', () => {
  it('CE-6: reverse domain names, with at most one v<digits> version, are accepted', () => {
    for (const type of [
      'nl.brp.persoon-verhuisd',
      'com.github.pull_request.opened',
      'com.example.object.deleted.v2',
      'nl.amsterdam.erfpacht.overdracht',
      'io.cloudevents.test',
      'nl.brp.v12.verhuizing',
    ]) {
      expect(check({ type }).errors, type).toEqual([]);
    }
  });

  it('CE-6: a missing or empty type is rejected', () => {
    expect(summary(validateEventObject(without('type')).errors)).toEqual(['CE-6 required type']);
    expect(check({ type: '' }).errors).toEqual(['CE-6 non-empty type']);
  });

  it('CE-6: a type that is not in reverse domain name notation is rejected (NL profile MUST)', () => {
    for (const type of [
      'zaakstatus-gewijzigd',
      'nl',
      'nl.',
      '.nl.brp',
      'nl..brp',
      'nl.brp.persoon verhuisd',
      'urn:nld:type',
      '1nl.brp.x',
      'nl.-brp.x',
    ]) {
      expect(check({ type }).errors, type).toEqual(['CE-6 reverse-dns type']);
    }
  });

  it('CE-6, issue 28: every label keeps the DNS label rules: none empty, none starting or ending with a hyphen, none over 63 characters', () => {
    const long = 'a'.repeat(64);
    for (const type of [
      'nl.example.fuzz-',
      'nl.example.-fuzz',
      'nl.example.fuzz-.opened',
      'nl.example.-',
      'nl-.example.x',
      'nl.example-.x',
      'nl.example..x',
      'nl.example.x.',
      `nl.example.${long}`,
      `nl.${long}.x`,
      `${long}.example.x`,
    ]) {
      const { errors } = validateEventObject(nlEvent({ type }));
      expect(summary(errors), type).toEqual(['CE-6 reverse-dns type']);
      expect(errors[0]!.message).toContain('none starting or ending with a hyphen');
    }
    for (const type of [
      `nl.example.${long.slice(1)}`,
      `nl.${long.slice(1)}.x`,
      'nl.example.fuzz-test',
      'nl.example.pull_request',
      'nl.9292.reis-gepland',
      'nl.example.x-1.y_',
    ]) {
      expect(check({ type }).errors, type).toEqual([]);
    }
  });

  it('CE-6: more than one version, or a version not written v<digits>, is rejected', () => {
    expect(check({ type: 'com.example.v1.deleted.v2' }).errors).toEqual(['CE-6 single-version type']);
    for (const type of [
      'com.example.deleted.V2',
      'com.example.deleted.v2_1',
      'com.example.deleted.v1-beta',
      'com.example.deleted.v1.2',
    ]) {
      expect(check({ type }).errors, type).toEqual(['CE-6 version-format type']);
    }
  });
});

describe('CE-7 datacontenttype', () => {
  it('CE-7: RFC 2046 media types are accepted; non-JSON ones carry the profile warning', () => {
    expect(check({ datacontenttype: 'application/json' })).toEqual({ errors: [], warnings: [] });
    expect(check({ datacontenttype: 'application/cloudevents+json; charset="utf-8"' })).toEqual({
      errors: [],
      warnings: [],
    });
    expect(check({ datacontenttype: 'text/plain; charset=us-ascii' })).toEqual({
      errors: [],
      warnings: ['CE-7 json-preferred datacontenttype'],
    });
    expect(check({ datacontenttype: 'application/vnd.apache.thrift.binary', data_base64: 'YWFw' }).errors).toEqual([]);
  });

  it('CE-7: values that are not media types are rejected', () => {
    for (const datacontenttype of [
      'xyz',
      '',
      'text/',
      '/json',
      'text/plain;',
      'text/plain; charset',
      'text /plain',
      'application/json; a=b c',
    ]) {
      expect(check({ datacontenttype }).errors, datacontenttype).toEqual(['CE-7 media-type datacontenttype']);
    }
  });
});

describe('CE-8 dataschema', () => {
  it('CE-8: an absolute URI is accepted', () => {
    expect(check({ dataschema: 'https://cloudevents.io/dataschema' }).errors).toEqual([]);
    expect(check({ dataschema: 'urn:nld:schema:zaakstatus:v1' }).errors).toEqual([]);
  });

  it('CE-8: an empty, relative or fragment-bearing dataschema is rejected', () => {
    expect(check({ dataschema: '' }).errors).toEqual(['CE-8 non-empty dataschema']);
    expect(check({ dataschema: '/schemas/zaak.json' }).errors).toEqual(['CE-8 absolute-uri dataschema']);
    const fragment = validateEventObject(nlEvent({ dataschema: 'https://example.com/schema.json#/defs/x' })).errors;
    expect(summary(fragment)).toEqual(['CE-8 absolute-uri dataschema']);
    expect(fragment[0]!.message).toContain('no fragment');
  });

  it('CE-8: a relative dataschema is told it lacks a scheme, not that it has a fragment', () => {
    // The message names the fault to fix; "no fragment" is only right for an otherwise valid URI with a scheme.
    const [relative] = validateEventObject(nlEvent({ dataschema: '/schemas/zaak.json' })).errors;
    expect(relative!.message).toContain('a scheme');
    expect(relative!.message).not.toContain('fragment');
  });
});

describe('CE-9 subject', () => {
  it('CE-9: a non-empty subject is accepted', () => {
    expect(check({ subject: '999990342' }).errors).toEqual([]);
  });

  it('CE-9: an empty subject is rejected', () => {
    expect(check({ subject: '' }).errors).toEqual(['CE-9 non-empty subject']);
  });
});

describe('CE-10 time', () => {
  it('CE-10: RFC 3339 timestamps are accepted', () => {
    for (const time of [
      '2018-04-05T17:31:00Z',
      '2018-04-05T17:31:00.000000000Z',
      '2018-04-05T18:31:00+01:00',
      '2018-04-05T16:31:00-01:00',
      '2024-02-29T00:00:00Z',
      '2016-12-31T23:59:60Z',
      '2018-04-05t17:31:00z',
      '2018-04-05T17:31:00.5+14:00',
    ]) {
      expect(check({ time }).errors, time).toEqual([]);
    }
  });

  it('CE-10: a time without seconds is rejected', () => {
    expect(check({ time: '2018-04-05T18:31Z' }).errors).toEqual(['CE-10 timestamp time']);
  });

  it('CE-10: bad offsets, impossible dates and other shapes are rejected', () => {
    for (const time of [
      'lunchtime',
      '2018-04-05T18:31:00X',
      '2018-04-05T18:31:00+25:00',
      '2018-04-05T18:31:00+xx:00',
      '2018-04-05T18:31:00+05',
      '2018-04-05T18:31:00',
      '2018-04-05',
      '2023-02-29T00:00:00Z',
      '2018-13-01T00:00:00Z',
      '2018-04-31T00:00:00Z',
      '2018-04-05T24:00:00Z',
      '2018-04-05 17:31:00Z',
      '2018-04-05T17:31:00.Z',
      '2018-04-05T17:31:00+01:60',
    ]) {
      expect(check({ time }).errors, time).toEqual(['CE-10 timestamp time']);
    }
  });

  it('CE-10: January and the last day of a month are valid; day 00, and a 31st of April even in a leap year, are not', () => {
    for (const time of ['2018-01-05T17:31:00Z', '2018-01-31T00:00:00Z', '2024-12-31T00:00:00Z']) {
      expect(check({ time }).errors, time).toEqual([]);
    }
    for (const time of ['2018-04-00T00:00:00Z', '2024-04-31T00:00:00Z', '2024-01-32T00:00:00Z']) {
      expect(check({ time }).errors, time).toEqual(['CE-10 timestamp time']);
    }
  });
});

describe('CE-11 dataref', () => {
  it('CE-11: absolute and relative URI-references are accepted', () => {
    expect(check({ dataref: 'https://gemeenteX/api/persoon/999990342' }).errors).toEqual([]);
    expect(check({ dataref: '/payloads/42' }).errors).toEqual([]);
  });

  it('CE-11: a dataref that is not a URI-reference is rejected', () => {
    expect(check({ dataref: 'https://gemeente X/api' }).errors).toEqual(['CE-11 uri-reference dataref']);
    expect(check({ dataref: 42 }).errors).toEqual(['CE-11 string dataref']);
  });
});

describe('CE-12 sequence', () => {
  it('CE-12: a sequence, with or without a sequencetype, is accepted', () => {
    expect(check({ sequence: '1234', sequencetype: 'Integer' })).toEqual({ errors: [], warnings: [] });
    expect(check({ sequence: '-2147483648', sequencetype: 'Integer' }).errors).toEqual([]);
    expect(check({ sequence: '2147483647', sequencetype: 'Integer' }).errors).toEqual([]);
    expect(check({ sequence: '000042-b' }).errors).toEqual([]);
    expect(check({ sequence: 'abc', sequencetype: 'lexical' }).errors).toEqual([]);
  });

  it('CE-12: an empty sequence or sequencetype is rejected', () => {
    expect(check({ sequence: '' }).errors).toEqual(['CE-12 non-empty sequence']);
    expect(check({ sequence: '1', sequencetype: '' }).errors).toEqual(['CE-12 non-empty sequencetype']);
  });

  it('CE-12: with sequencetype Integer the sequence must be a signed 32-bit integer string', () => {
    for (const sequence of ['2147483648', '-2147483649', 'abc', '1.0', '007', '+1', '1e3', '99999999999']) {
      expect(check({ sequence, sequencetype: 'Integer' }).errors, sequence).toEqual([
        'CE-12 integer-sequence sequence',
      ]);
    }
  });

  it('CE-12: a sequencetype without a sequence gets a warning', () => {
    expect(check({ sequencetype: 'Integer' })).toEqual({
      errors: [],
      warnings: ['CE-12 sequence-missing sequencetype'],
    });
  });
});

describe('JSON-1 null means unset', () => {
  it('JSON-1: null optional attributes and extensions are dropped, not rejected', () => {
    const text = JSON.stringify(
      nlEvent({
        subject: null,
        time: null,
        datacontenttype: null,
        dataschema: null,
        geheimnummer: null,
        nlbrpnationaliteit: '0083',
      }),
    );
    const event = acceptedEvent(parse(structuredRequest(text)));
    expect(event.attributes).toEqual({ ...nlEvent(), nlbrpnationaliteit: '0083' });
    expect(event.json).toBe(text);
  });

  it('JSON-1: a null REQUIRED attribute counts as missing', () => {
    expect(check({ source: null, type: null }).errors).toEqual(['CE-4 required source', 'CE-6 required type']);
  });
});

describe('JSON-2 data and data_base64', () => {
  it('JSON-2: data or data_base64 alone is accepted; a null one is unset', () => {
    expect(check({ data: { bsn: '999990342' } }).errors).toEqual([]);
    expect(
      check({ datacontenttype: 'application/vnd.apache.thrift.binary', data_base64: 'YWFwIG5vb3QgbWllcw==' }).errors,
    ).toEqual([]);
    expect(check({ data: null }).errors).toEqual([]);
    expect(check({ data_base64: null }).errors).toEqual([]);
  });

  it('JSON-2, review #6: data and data_base64 exclude each other by presence, even when one is null', () => {
    expect(check({ data: null, data_base64: 'TWE=' }).errors).toEqual(['JSON-2 data-exclusive data']);
    expect(check({ data: 'text', data_base64: null }).errors).toEqual(['JSON-2 data-exclusive data']);
    expect(check({ data: null, data_base64: null }).errors).toEqual(['JSON-2 data-exclusive data']);
  });

  it('JSON-2: an event with both data and data_base64 is rejected', () => {
    expect(check({ data: 'text', data_base64: 'eyAieHl6IjogMTIzIH0=' }).errors).toEqual(['JSON-2 data-exclusive data']);
  });

  it('JSON-2: data_base64 that is not base64 is rejected', () => {
    for (const data_base64 of ['abc', 'TWE', 'TW=E', 'T*E=', 42]) {
      expect(check({ data_base64 }).errors, String(data_base64)).toEqual(['JSON-2 base64 data_base64']);
    }
  });

  it('JSON-2: the base64 alphabet is A-Z, a-z, 0-9, + and / exactly, and = only as padding', () => {
    expect(check({ data_base64: 'AZaz09+/' }).errors).toEqual([]);
    // The neighbours of each range, a character other than = before one =, and an array (its length is 0, like empty base64 text).
    for (const data_base64 of ['@AAA', '[AAA', '`AAA', '{AAA', ':AAA', ',AAA', '.AAA', 'AA*=', []]) {
      expect(check({ data_base64 }).errors, JSON.stringify(data_base64)).toEqual(['JSON-2 base64 data_base64']);
    }
  });

  it('JSON-2: non-string data with a non-JSON datacontenttype gets a warning', () => {
    expect(check({ datacontenttype: 'application/json', data: { a: 1 } }).warnings).toEqual([]);
    expect(check({ datacontenttype: 'text/plain', data: 'fine' }).warnings).toEqual([
      'CE-7 json-preferred datacontenttype',
    ]);
    expect(check({ datacontenttype: 'text/plain', data: { a: 1 } }).warnings).toEqual([
      'CE-7 json-preferred datacontenttype',
      'JSON-2 data-representation data',
    ]);
  });

  it('JSON-2: data null with a non-JSON datacontenttype carries nothing, so there is no representation to warn about', () => {
    expect(check({ datacontenttype: 'text/plain', data: null }).warnings).toEqual([
      'CE-7 json-preferred datacontenttype',
    ]);
  });
});

/** Issue 15 replaced patterns by character loops on the common path; these cases sit at the edges of those loops. */
describe('issue 15: the fast paths keep the grammar at their edges', () => {
  it('CE-1, issue 15: characters next to a-z and 0-9 make an invalid name', () => {
    for (const name of ['a`', 'a{', 'a/', 'a:', 'Ab']) {
      expect(check({ [name]: 'x' }).errors, name).toEqual([`CE-1 attribute-name ${name}`]);
    }
    expect(check({ az09: 'x' }).errors).toEqual([]);
  });

  it('CE-2, issue 15: printable ASCII at both ends and text beyond ASCII are accepted', () => {
    expect(check({ subject: ' ~', note: 'café 🌎', dash: '\u2013' }).errors).toEqual([]);
    expect(check({ subject: 'a\u001f', note: 'café\u009f' }).errors).toEqual([
      'CE-2 string-characters subject',
      'CE-2 string-characters note',
    ]);
  });

  it('CE-6, issue 15: only whole segments starting v/V and a digit are versions', () => {
    for (const type of ['nl.brp.dev2.opened', 'nl.brp.v', 'nl.brp.verhuisd', 'v2.example.opened']) {
      expect(check({ type }).errors, type).toEqual([]);
    }
    expect(check({ type: 'V2.example.opened' }).errors).toEqual(['CE-6 version-format type']);
    expect(check({ type: 'v1.example.v2' }).errors).toEqual(['CE-6 single-version type']);
  });

  it('CE-10, issue 15: fields are read at their places with fractions and offsets', () => {
    for (const time of ['2000-02-29T00:00:00Z', '2018-04-05T17:31:00.123-23:59', '2018-04-05T23:59:59.9+00:00']) {
      expect(check({ time }).errors, time).toEqual([]);
    }
    for (const time of [
      '1900-02-29T00:00:00Z',
      '2018-04-05T17:31:00.123-24:00',
      '2018-04-05T17:60:00Z',
      '2018-04-05T17:31:61Z',
      '2018-00-05T17:31:00Z',
    ]) {
      expect(check({ time }).errors, time).toEqual(['CE-10 timestamp time']);
    }
  });
});
