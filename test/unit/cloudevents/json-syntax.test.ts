/**
 * Issue 15: `data` is proven to be JSON by a pattern instead of being built by JSON.parse
 * (json-syntax.ts, event-object-text.ts). Everything rests on one promise: what the pattern
 * proves, JSON.parse accepts. These tests hold it to that on generated and mutated texts and on
 * RFC 8259's corners, and check that the events read this way are the ones read before.
 */
import { describe, expect, it } from 'vitest';
import {
  parseEventBatch,
  parseEventObject,
} from '../../../functions/core/cloudevents/http-binding/event-object-text.js';
import { MALFORMED } from '../../../functions/core/cloudevents/http-binding/parse-results.js';
import {
  afterMemberName,
  afterScalarMember,
  isProvenJsonText,
  jsonValueEnd,
} from '../../../functions/core/cloudevents/json-syntax.js';
import { mulberry32 } from '../../support/malformed-requests.js';
import {
  acceptedEvent,
  acceptedEvents,
  batchRequest,
  binaryRequest,
  invalidIssues,
  nlEvent,
  parse,
  problemOf,
  structuredRequest,
  summary,
} from './fixtures.js';

const STRING_PARTS = [
  'a',
  'zaak',
  ' ',
  '\\"',
  '\\\\',
  '\\/',
  '\\b',
  '\\f',
  '\\n',
  '\\r',
  '\\t',
  '\\u0041',
  '\\uD800',
  'é',
  '€',
  '😀',
  '\u007f',
  '}',
  ']',
  ',',
  ':',
];
const NUMBERS = ['0', '-0', '1', '-12', '3.25', '0.5e10', '1E-7', '6.02e+23', '12345678901234567890', '1e400'];
const WHITESPACE = ['', '', '', ' ', '\n', '\t', '\r\n  '];

/** JSON text of a random value up to `depth` levels deep, with random whitespace between tokens. */
function jsonText(next: () => number, depth: number): string {
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const ws = () => pick(WHITESPACE);
  const string = () => `"${Array.from({ length: Math.floor(next() * 5) }, () => pick(STRING_PARTS)).join('')}"`;
  const kind = depth === 0 ? Math.floor(next() * 4) : Math.floor(next() * 6);
  switch (kind) {
    case 0:
      return string();
    case 1:
      return pick(NUMBERS);
    case 2:
      return pick(['true', 'false', 'null']);
    case 3:
      return pick(['{}', '[]', `{${ws()}}`, `[${ws()}]`]);
    case 4: {
      const members = Array.from(
        { length: 1 + Math.floor(next() * 4) },
        () => `${ws()}${string()}${ws()}:${ws()}${jsonText(next, depth - 1)}${ws()}`,
      );
      return `{${members.join(',')}}`;
    }
    default:
      return `[${Array.from({ length: 1 + Math.floor(next() * 4) }, () => `${ws()}${jsonText(next, depth - 1)}${ws()}`).join(',')}]`;
  }
}

/** Characters that matter to JSON's grammar, for mutations. */
const SIGNIFICANT = [
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '"',
  '\\',
  ' ',
  '\u0000',
  '\u001f',
  '\u000c',
  '\u00a0',
  '0',
  '1',
  '-',
  '+',
  '.',
  'e',
  'E',
  't',
  'n',
  'u',
  'x',
];

function mutated(text: string, next: () => number): string {
  const at = Math.floor(next() * (text.length + 1));
  const char = SIGNIFICANT[Math.floor(next() * SIGNIFICANT.length)]!;
  const how = Math.floor(next() * 3);
  if (how === 0) return text.slice(0, at) + text.slice(at + 1);
  if (how === 1) return text.slice(0, at) + char + text.slice(at);
  return text.slice(0, at) + char + text.slice(at + 1);
}

function jsonParseAccepts(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('issue 15: what the syntax pattern proves, JSON.parse accepts', () => {
  it('issue 15: 4,000 generated JSON texts up to 7 levels deep are all proven, and the end of each value is found', () => {
    const next = mulberry32(15);
    for (let n = 0; n < 4000; n++) {
      const text = jsonText(next, Math.floor(next() * 8));
      expect(jsonParseAccepts(text), text).toBe(true);
      expect(isProvenJsonText(text), text).toBe(true);
      expect(isProvenJsonText(` \n${text}\t `), text).toBe(true);
      expect(jsonValueEnd(`${text},"after":1}`, 0), text).toBe(text.length);
    }
  });

  it('issue 15: of 40,000 texts with one character deleted, inserted or replaced, none is proven that JSON.parse refuses', () => {
    const next = mulberry32(7);
    let proven = 0;
    let refused = 0;
    for (let n = 0; n < 40_000; n++) {
      const text = mutated(jsonText(next, Math.floor(next() * 6)), next);
      const accepted = jsonParseAccepts(text);
      if (isProvenJsonText(text)) {
        proven++;
        expect(accepted, JSON.stringify(text)).toBe(true);
      }
      if (!accepted) refused++;
    }
    // Both sides well represented, or the test would prove little.
    expect(proven).toBeGreaterThan(5000);
    expect(refused).toBeGreaterThan(10_000);
  });

  it("issue 15: RFC 8259's corners get JSON.parse's answer, or are left to it", () => {
    const valid = [
      '-0',
      '0.0e+0',
      '1E5',
      '"\\/"',
      '"\\uD800"',
      '"\u007f"',
      '"\u2028"',
      '[]',
      '{}',
      '[[[[[[[[1]]]]]]]]',
      '{"":{"":{"":{"":{"":null}}}}}',
      '{"a":1,"a":2}',
    ];
    const invalid = [
      '01',
      '1.',
      '.5',
      '+1',
      '-',
      '1e',
      '"\\u00"',
      '"\\x41"',
      '"a\tb"',
      '"\u0000"',
      'tru',
      'nul',
      'True',
      '[1 2]',
      '{"a" 1}',
      '{"a":1,}',
      '[,1]',
      '[1,]',
      '{,}',
      '{1:2}',
      "'a'",
      '\u000c1',
      '\u00a01',
      '\ufeff{}',
      '[1]]',
      '{"a":[}',
      '[{"a":1]}',
    ];
    for (const text of valid) {
      expect(jsonParseAccepts(text), text).toBe(true);
      expect(isProvenJsonText(text), text).toBe(true);
    }
    for (const text of invalid) {
      expect(jsonParseAccepts(text), text).toBe(false);
      expect(isProvenJsonText(text), text).toBe(false);
    }
  });

  it('issue 15: below the three levels the pattern takes whole, the loop refuses what JSON.parse refuses', () => {
    const deep = (inner: string) => `[[[${inner}]]]`;
    const valid = ['{"a":{"b":1}}', '[[1],[2,[3]]]', '{"a":[],"b":{"c":[{}]}}', '[{"a":[[1]]}, {"b":2}]'];
    const invalid = [
      '{1:{"b":1}}',
      '{"a":{"b":1},2:3}',
      '{"a":{"b":1}"c":3}',
      '[[1],[2,[3]]',
      '[[1] [2]]',
      '{"a":[[1]],}',
      '[[[1]],]',
      '{"a" [[1]]}',
      '[[[1]]}',
    ];
    for (const inner of valid) {
      expect(jsonParseAccepts(deep(inner)), deep(inner)).toBe(true);
      expect(isProvenJsonText(deep(inner)), deep(inner)).toBe(true);
    }
    for (const inner of invalid) {
      expect(jsonParseAccepts(deep(inner)), deep(inner)).toBe(false);
      expect(isProvenJsonText(deep(inner)), deep(inner)).toBe(false);
    }
  });

  it('issue 15, review #3: past 256 KB the member patterns, too, leave the text to JSON.parse', () => {
    const member = `"data":"${'a'.repeat(256 * 1024)}"`;
    expect(afterScalarMember(member, 0)).toBe(-1);
    expect(afterMemberName(member, 0)).toBe(-1);
    expect(afterScalarMember(member.slice(0, 200_000) + '"', 0)).toBe(200_001);
    expect(afterMemberName(member.slice(0, 1000), 0)).toBe(7);
  });

  it('issue 15, review #3: 256 KB of hostile nesting, repetition and escapes returns, never throws, and agrees with JSON.parse where it proves', () => {
    const size = 256 * 1024;
    const texts = [
      `[${Array.from({ length: size / 8 - 1 }, () => '{"":""}').join(',')}]`,
      `[${'1,'.repeat(size / 2 - 2)}1]`,
      `${'['.repeat(size / 2)}${']'.repeat(size / 2)}`,
      `${'{"a":'.repeat(size / 6)}1${'}'.repeat(size / 6)}`,
      `"${'\\n'.repeat(size / 2 - 1)}"`,
      `[${'1,'.repeat(size / 2 - 1)}`,
      `[${'1,'.repeat(size / 2 - 1)}]`,
      `"${'\\n'.repeat(size / 2 - 2)}\\x"`,
      `${'['.repeat(1000)}${Array.from({ length: 20_000 }, () => '{"a":[1,2]}').join(',')}${']'.repeat(1000)}`,
      `${'['.repeat(size / 2)}${'}'.repeat(size / 2)}`,
    ];
    for (const text of texts) {
      expect(text.length).toBeLessThanOrEqual(size);
      let proven = false;
      expect(() => (proven = isProvenJsonText(text)), text.slice(0, 20)).not.toThrow();
      if (proven) expect(jsonParseAccepts(text)).toBe(true);
    }
    // Proven where JSON.parse accepts, too: the loop takes any depth.
    expect(isProvenJsonText(texts[2]!)).toBe(true);
    expect(isProvenJsonText(texts[3]!)).toBe(true);
    // Past the pattern's limit the answer is left to JSON.parse.
    expect(isProvenJsonText(`[${'1,'.repeat(size)}1]`)).toBe(false);
  });
});

describe('issue 15: parseEventObject and parseEventBatch leave data out of what JSON.parse builds', () => {
  const long = {
    bsn: '999990001',
    adressen: Array.from({ length: 12 }, (_, n) => ({ straat: `Weertsstraat ${n}`, postcode: `65${10 + n}AB` })),
  };

  it('issue 15: a long event comes back with an empty object or array where its data was, and its member count', () => {
    for (const data of [long, [long]]) {
      const text = JSON.stringify(nlEvent({ data, subject: 's' }));
      expect(parseEventObject(text)).toEqual({
        value: { ...nlEvent({ subject: 's' }), data: Array.isArray(data) ? [] : {} },
        members: 6,
      });
    }
    // Data that is a string, number or literal is parsed with the rest.
    const text = JSON.stringify(nlEvent({ data: 'x'.repeat(600) }));
    expect(parseEventObject(text)).toEqual({ value: nlEvent({ data: 'x'.repeat(600) }), members: 5 });
  });

  it('issue 15: a short event, or one with data under an escaped name, is parsed whole', () => {
    expect(parseEventObject(JSON.stringify(nlEvent({ data: { a: 1 } })))).toEqual({
      value: nlEvent({ data: { a: 1 } }),
      members: 5,
    });
    const escaped = JSON.stringify(nlEvent({ data: long })).replace('"data"', '"d\\u0061ta"');
    expect(parseEventObject(escaped)).toEqual({ value: nlEvent({ data: long }), members: 5 });
  });

  it('issue 15: only data is left out; another member with an object value is parsed as it is', () => {
    const text = JSON.stringify({ ...nlEvent({ data: long }), myext: { a: [1] } });
    expect(parseEventObject(text)).toEqual({ value: { ...nlEvent({ data: {} }), myext: { a: [1] } }, members: 6 });
    const before = JSON.stringify({ myext: { a: [1] }, ...nlEvent({ data: long }) });
    expect(parseEventObject(before)).toEqual({ value: { myext: { a: [1] }, ...nlEvent({ data: {} }) }, members: 6 });
  });

  it('issue 15, review #7: repeated names are counted each time, also a second data', () => {
    const text = JSON.stringify(nlEvent({ data: long }));
    expect(parseEventObject(`${text.slice(0, -1)},"id":"2","data":[]}`)).toMatchObject({ members: 7 });
  });

  it("issue 15: a long batch comes back with each member's data left out, its spans and its member counts", () => {
    const members = [nlEvent({ data: long }), nlEvent({ id: 'b', data: [long] }), nlEvent({ id: 'c' })];
    const text = `[ ${members.map((member) => JSON.stringify(member)).join(' , ')} ]`;
    const parsed = parseEventBatch(text);
    expect(parsed).toMatchObject({
      value: [nlEvent({ data: {} }), nlEvent({ id: 'b', data: [] }), nlEvent({ id: 'c' })],
      members: { counts: [5, 5, 4] },
    });
    const spans = parsed === MALFORMED ? [] : (parsed.members?.spans ?? []);
    expect(spans.map(([start, end]) => text.slice(start, end))).toEqual(
      members.map((member) => JSON.stringify(member)),
    );
  });

  it('issue 15: a long batch with a member that is no object, or a short batch, is parsed whole for the span scanner', () => {
    const member = JSON.stringify(nlEvent({ data: long }));
    expect(parseEventBatch(`[${member},1]`)).toEqual({ value: [nlEvent({ data: long }), 1] });
    expect(parseEventBatch(`[${JSON.stringify(nlEvent())}]`)).toEqual({ value: [nlEvent()] });
    expect(parseEventBatch(`[${member},]`)).toBe(MALFORMED);
    expect(parseEventObject(`${member} x`)).toBe(MALFORMED);
  });
});

describe('issue 15: a structured event whose data is proven, not built, is the event read before', () => {
  /** Over the length below which an event is parsed whole, with data four levels deep. */
  const data = {
    bsn: '999990001',
    adressen: Array.from({ length: 12 }, (_, n) => ({
      straat: `Weertsstraat ${n}`,
      postcode: `65${10 + n}AB`,
      historie: [{ vanaf: '2010-01-01', bron: { code: n } }],
    })),
  };

  it('issue 15, CE-13: the event text is the body byte for byte, its attributes as JSON.parse reads them', () => {
    const text = JSON.stringify(nlEvent({ subject: 'zaak-1', data }), null, 2);
    expect(text.length).toBeGreaterThan(1024);
    const event = acceptedEvent(parse(structuredRequest(text)));
    expect(event.json).toBe(text);
    const { data: _data, ...attributes } = JSON.parse(text) as Record<string, unknown>;
    expect(event.attributes).toEqual(attributes);
  });

  it('issue 15, HTTP-1: malformed data in a long event is still a 400 malformed-json', () => {
    const text = JSON.stringify(nlEvent({ data })).replace('"postcode":"6515AB"', '"postcode":"6515AB",');
    expect(problemOf(parse(structuredRequest(text)))).toMatchObject({ status: 400, title: 'Malformed JSON' });
  });

  it('issue 15, HTTP-1, review #7: a duplicate before or after long data, or a second data, is still found', () => {
    const text = JSON.stringify(nlEvent({ data }));
    expect(invalidIssues(parse(structuredRequest(`${text.slice(0, -1)},"id":"2"}`)))).toEqual([
      'HTTP-1 duplicate-member id',
    ]);
    expect(invalidIssues(parse(structuredRequest(`{"type":"nl.x.y",${text.slice(1)}`)))).toEqual([
      'HTTP-1 duplicate-member type',
    ]);
    expect(invalidIssues(parse(structuredRequest(`${text.slice(0, -1)},"data":{}}`)))).toEqual([
      'HTTP-1 duplicate-member data',
    ]);
    expect(invalidIssues(parse(structuredRequest(`${text.slice(0, -1)},"d\\u0061ta":[]}`)))).toEqual([
      'HTTP-1 duplicate-member data',
    ]);
  });

  it('issue 15, JSON-2: an object as data with a datacontenttype that is not JSON still gets its warning', () => {
    const outcome = parse(structuredRequest(nlEvent({ datacontenttype: 'text/plain', data })));
    expect(acceptedEvent(outcome).attributes['datacontenttype']).toBe('text/plain');
    expect(summary(outcome.ok ? outcome.warnings : [])).toContain('JSON-2 data-representation data');
  });

  it('issue 15, JSON-2: data and data_base64 together are still refused when data is long', () => {
    expect(invalidIssues(parse(structuredRequest(nlEvent({ data, data_base64: 'AAAA' }))))).toEqual([
      'JSON-2 data-exclusive data',
    ]);
  });

  it('issue 15, HTTP-3, CE-13: each member of a long batch is its own slice of the text, its attributes as JSON.parse reads them', () => {
    const members = [
      nlEvent({ id: 'a', data }),
      nlEvent({ id: 'b', data: [data, data] }),
      nlEvent({ id: 'c', data: 'tekst' }),
      nlEvent({ id: 'd' }),
    ];
    const texts = members.map((member) => JSON.stringify(member, null, 1));
    const events = acceptedEvents(parse(batchRequest(`[ ${texts.join(' ,\n')} ]`)));
    expect(events.map((event) => event.json)).toEqual(texts);
    expect(events.map((event) => event.attributes)).toEqual(
      members.map(({ data: _data, ...attributes }) => attributes),
    );
  });

  it('issue 15, HTTP-3, review #7: a duplicate in one member of a long batch is found and named with its index', () => {
    const member = JSON.stringify(nlEvent({ data }));
    const batch = `[${member},${member.slice(0, -1)},"source":"urn:nld:y"},${member},${member}]`;
    expect(invalidIssues(parse(batchRequest(batch)))).toEqual(['HTTP-3 duplicate-member source #1']);
  });

  it('issue 15, HTTP-3: a long batch with a member that is no object, or with malformed data, is refused as before', () => {
    const member = JSON.stringify(nlEvent({ data }));
    expect(invalidIssues(parse(batchRequest(`[${member},42,${member}]`)))).toEqual(['HTTP-3 event-object - #1']);
    expect(
      problemOf(parse(batchRequest(`[${member},${member.replace('"bsn":"999990001"', '"bsn":999990001"')}]`))),
    ).toMatchObject({
      status: 400,
      title: 'Malformed JSON',
    });
  });

  it('issue 15, HTTP-2: a long JSON body in binary mode is proven and spliced in verbatim; a malformed one is a 400', () => {
    const headers = {
      'ce-specversion': '1.0',
      'ce-id': '1',
      'ce-source': 'urn:nld:x',
      'ce-type': 'nl.x.y',
      'content-type': 'application/json',
    };
    const body = JSON.stringify(data, null, 1);
    expect(acceptedEvent(parse(binaryRequest(headers, body))).json).toBe(
      `{"specversion":"1.0","id":"1","source":"urn:nld:x","type":"nl.x.y","datacontenttype":"application/json","data":${body}}`,
    );
    expect(problemOf(parse(binaryRequest(headers, `${body.slice(0, -1)},}`)))).toMatchObject({
      status: 400,
      title: 'Malformed JSON',
    });
  });
});
