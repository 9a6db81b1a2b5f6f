/**
 * Review findings #3-#8 and #11 (issue 8): what the ingest's parser does with input built to
 * hurt it — oversized bodies, inputs that make regular expressions backtrack or recursion run
 * deep, headers that cannot be decoded, members that mean different things to different parsers,
 * and requests whose problem answer would grow without bound.
 */
import { describe, expect, it } from 'vitest';
import {
  charsetOf,
  isAbsoluteUri,
  isBase64,
  isCloudEventsString,
  isHeaderText,
  isInt32String,
  isMediaType,
  isNldUrn,
  isReverseDnsName,
  isRfc3339Timestamp,
  isUriReference,
  typeVersionProblem,
} from '../../../functions/core/cloudevents/attribute-syntax.js';
import { toBinaryMessage } from '../../../functions/core/cloudevents/index.js';
import { MAX_LISTED_ISSUES, MAX_PROBLEM_BYTES, problemResponse } from '../../../functions/core/http/problems.js';
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
import { problemTypeUri } from '../../support/problem-types.js';

/** The deployed per-event limit: 256 KiB (SQS) minus 8 KiB for the delivery envelope. */
const LIMITS = { maxEventBytes: 248 * 1024, maxEventsPerBatch: 1000 };
const MB = 1024 * 1024;

const NL_HEADERS = {
  'ce-specversion': '1.0',
  'ce-type': 'nl.overheid.zaken.zaakstatus-gewijzigd',
  'ce-source': 'urn:nld:oin:00000001823288444000:systeem:BRP-component',
  'ce-id': 'f3dce042-cd6e-4977-844d-05be8dce7cea',
};

describe('review #3: sizes are checked before costly validation', () => {
  it('review #3: a 5 MB structured event with data_base64 gets 413, not a stack overflow', () => {
    const event = nlEvent({
      datacontenttype: 'application/octet-stream',
      data_base64: Buffer.alloc(3_750_000, 7).toString('base64'),
    });
    const problem = problemOf(parse(structuredRequest(event), LIMITS));
    expect(problem).toMatchObject({
      status: 413,
      type: problemTypeUri('payload-too-large'),
      maxEventBytes: LIMITS.maxEventBytes,
    });
    expect(problem['eventBytes']).toBeGreaterThan(5_000_000);
  });

  it('review #3: data_base64 of 5 MB is checked by a loop that neither throws nor backtracks', () => {
    const base64 = Buffer.alloc(3_750_000, 0xfb).toString('base64');
    expect(isBase64(base64)).toBe(true);
    expect(isBase64(`${base64.slice(0, -4)}AA*=`)).toBe(false);
    expect(isBase64(`${base64}=`)).toBe(false);
    for (const valid of ['', 'TWE=', 'TWFu', 'TQ==', '+/+/']) expect(isBase64(valid), valid).toBe(true);
    for (const invalid of ['T', 'TQ=', 'TQ=A', '====', 'A===', 'T-E=', 'TWE\n'])
      expect(isBase64(invalid), invalid).toBe(false);
  });

  it('review #3: a batch member of 5 MB gets 413 naming its index before any member is validated', () => {
    const big = nlEvent({
      id: 'groot',
      datacontenttype: 'application/octet-stream',
      data_base64: Buffer.alloc(3_750_000).toString('base64'),
    });
    // The first member is invalid: had it been validated first, the answer would be a 400.
    const problem = problemOf(parse(batchRequest([nlEvent({ id: '' }), big]), LIMITS));
    expect(problem).toMatchObject({ status: 413, index: 1, eventId: 'groot' });
  });

  it('review #3: a batch of more than 1,000 members gets 413 before any member is validated', () => {
    const problem = problemOf(parse(batchRequest(Array.from({ length: 1001 }, () => 0)), LIMITS));
    expect(problem.status).toBe(413);
    expect(problem.detail).toContain('1000');
  });

  it('review #3: a binary body larger than an event may be gets 413 before its headers are validated', () => {
    const problem = problemOf(
      parse(
        binaryRequest({ 'ce-specversion': '1.0', 'content-type': 'application/octet-stream' }, Buffer.alloc(5 * MB)),
        LIMITS,
      ),
    );
    expect(problem).toMatchObject({ status: 413, eventBytes: 5 * MB });
  });

  it('review #3: deeply nested data (100,000 levels) is accepted and forwarded without recursion', () => {
    const depth = 100_000;
    const data = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const text = `{"specversion":"1.0","id":"diep","source":"urn:nld:oin:1:systeem:x","type":"nl.x.diep","data":${data}}`;
    const event = acceptedEvent(parse(structuredRequest(text), LIMITS));
    expect(event.json).toBe(text);
    expect(acceptedEvents(parse(batchRequest(`[${text},${text}]`), LIMITS))).toHaveLength(2);
    expect(toBinaryMessage(text).body.toString()).toBe(data);
  });

  it('review #3: attribute values of 200 KB are validated, valid or not', () => {
    const long = 'a'.repeat(200_000);
    // A type's labels are at most 63 characters each (issue 28), so its 200 KB are many labels.
    const labels = `${'a'.repeat(63)}.`.repeat(3125);
    for (const valid of [
      { source: `urn:nld:oin:1:systeem:${long}` },
      { subject: long },
      { comexampleext: long },
      { type: `nl.${labels}v1` },
    ]) {
      expect(acceptedEvent(parse(structuredRequest(nlEvent(valid)), LIMITS)).id).toBe(nlEvent()['id']);
    }
    const invalid = { source: `${long} ` };
    expect(invalidIssues(parse(structuredRequest(nlEvent(invalid)), LIMITS))).toEqual(['CE-4 uri-reference source']);
    expect(invalidIssues(parse(structuredRequest(nlEvent({ type: `nl.${labels}v1.v2` })), LIMITS))).toEqual([
      'CE-6 single-version type',
    ]);
    expect(
      invalidIssues(parse(structuredRequest(nlEvent({ time: `2021-12-10T17:31:00.${'1'.repeat(200_000)}Q` })), LIMITS)),
    ).toEqual(['CE-10 timestamp time']);
  });

  // Twice the per-event limit. A generous timeout: this asserts that every call returns, not how fast.
  it(
    'review #3: every validator returns on 512 KB adversarial input (no catastrophic backtracking, no stack overflow)',
    { timeout: 60_000 },
    () => {
      const n = MB / 2;
      const a = 'a'.repeat(n);
      const adversarial = [
        `${a}\u0000`,
        `${a} `,
        '%'.repeat(n),
        '%A'.repeat(n / 2),
        `//${a}@`,
        `//${'a:'.repeat(n / 2)}x`,
        `//${a}:${'1'.repeat(n)}x`,
        `a:${'/a'.repeat(n / 2)} `,
        `a:?${'/?'.repeat(n / 2)}#${'?'.repeat(n)} `,
        `${'a/'.repeat(n / 2)}:`,
        `a/b${';a=b'.repeat(n / 4)};`,
        `a/b${' ; a="x"'.repeat(n / 8)} ;`,
        `a/b;a="${'\\"'.repeat(n / 2)}`,
        `a/b;a="${'\\'.repeat(n)}`,
        `${'a-'.repeat(n / 2)}.`,
        `a.${'a-'.repeat(n / 2)}!`,
        `a.b${'.a'.repeat(n / 2)}!`,
        `${'v1.'.repeat(n / 3)}v`,
        `2021-12-10T17:31:00${'.1'.repeat(n / 2)}`,
        `2021-12-10T17:31:00.${'1'.repeat(n)}Q`,
        `-${'0'.repeat(n)}`,
        `;charset=${' '.repeat(n)}`,
        `${'; charset'.repeat(n / 9)}`,
        `\uD800${a}`,
        `urn:nld:${a}`,
      ];
      const validators: ((value: string) => unknown)[] = [
        isUriReference,
        isAbsoluteUri,
        isMediaType,
        isReverseDnsName,
        isRfc3339Timestamp,
        isCloudEventsString,
        isBase64,
        isInt32String,
        isNldUrn,
        isHeaderText,
        typeVersionProblem,
        charsetOf,
      ];
      for (const value of adversarial) {
        for (const validator of validators)
          expect(() => validator(value), `${validator.name}(${JSON.stringify(value.slice(0, 20))}…)`).not.toThrow();
      }
    },
  );
});

describe('review #3, #11: 10,000 ce- headers', () => {
  it('review #3, #11: 10,000 invalid ce- headers give one bounded 400 that says validation stopped', () => {
    const headers: Record<string, string> = { ...NL_HEADERS, 'content-type': 'application/json' };
    for (let i = 0; i < 10_000; i++) headers[`ce-bad_name_${i}`] = 'x';
    const problem = problemOf(parse(binaryRequest(headers, '{}'), LIMITS));
    expect(problem.status).toBe(400);
    expect(problem.errors).toHaveLength(MAX_LISTED_ISSUES);
    expect(problem['validationStopped']).toBe(true);
    expect(problem.detail).toContain('stopped');
    expect(Buffer.byteLength(problemResponse(problem).body)).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
  });

  it('review #3: 10,000 valid extension ce- headers are one accepted event with 10,004 attributes', () => {
    const headers: Record<string, string> = { ...NL_HEADERS, 'content-type': 'application/json' };
    for (let i = 0; i < 10_000; i++) headers[`ce-ext${i}`] = `v${i}`;
    const event = acceptedEvent(parse(binaryRequest(headers, '{}'), LIMITS));
    expect(Object.keys(event.attributes)).toHaveLength(10_005);
  });
});

describe('review #5: ce- header values must decode to UTF-8 text', () => {
  it('HTTP-2, review #5: raw non-ASCII or control characters in a ce- header → 400 header-characters', () => {
    // Node reads header bytes as Latin-1: raw UTF-8 "é" (C3 A9) arrives as "Ã©", a raw 0xE9 as "é".
    for (const raw of ['caf\u00c3\u00a9', 'caf\u00e9', 'a\u0001b', 'a\u007fb', 'a\u0100b']) {
      expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': raw }))), JSON.stringify(raw)).toEqual([
        'HTTP-2 header-characters subject',
      ]);
    }
  });

  it('HTTP-2, review #5: percent-encoded bytes that are not valid UTF-8 → 400 percent-encoding', () => {
    // Overlong U+0020 (the binding's own example), a lone surrogate, a stray continuation byte, 0xFF, a cut sequence.
    for (const encoded of ['%C0%A0', '%ED%A0%80', '%80', '%FF', 'caf%C3', '%E2%82']) {
      expect(invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': encoded }))), encoded).toEqual([
        'HTTP-2 percent-encoding subject',
      ]);
    }
  });

  it('HTTP-2, review #5: a raw space inside a value and percent-encoded UTF-8 are accepted', () => {
    const event = acceptedEvent(parse(binaryRequest({ ...NL_HEADERS, 'ce-subject': 'a b caf%C3%A9 %F0%9F%8C%8E' })));
    expect(event.attributes['subject']).toBe('a b café 🌎');
  });
});

describe('review #7: duplicate member names', () => {
  const text = (members: string) => `{"specversion":"1.0","id":"dubbel","type":"nl.x.y",${members}}`;

  it('HTTP-1, review #7: a structured event naming source twice → 400 naming the member', () => {
    const problem = problemOf(
      parse(structuredRequest(text('"source":"urn:nld:oin:1:systeem:a","source":"urn:nld:oin:2:systeem:b"'))),
    );
    expect(summary(problem.errors)).toEqual(['HTTP-1 duplicate-member source']);
  });

  it('HTTP-1, review #7: names are compared after unescaping, so "\\u0073ource" is source again', () => {
    expect(
      invalidIssues(
        parse(
          structuredRequest(text('"source":"urn:nld:oin:1:systeem:a", "\\u0073ource" : "urn:nld:oin:2:systeem:b"')),
        ),
      ),
    ).toEqual(['HTTP-1 duplicate-member source']);
  });

  it('HTTP-3, review #7: a batch member with a duplicate → 400 with its index; the other members are fine', () => {
    const good = text('"source":"urn:nld:oin:1:systeem:a"');
    const twice = text('"source":"urn:nld:oin:1:systeem:a","data":1,"data":2');
    expect(invalidIssues(parse(batchRequest(`[${good}, ${twice}]`)))).toEqual(['HTTP-3 duplicate-member data #1']);
  });

  it("review #7: duplicates inside data are the payload's own business and are forwarded as received", () => {
    const body = text('"source":"urn:nld:oin:1:systeem:a","data":{"a":1,"a":2,"b":{"c":1,"c":2}}');
    expect(acceptedEvent(parse(structuredRequest(body))).json).toBe(body);
  });
});

describe('review #8: datacontenttype must be able to travel as an HTTP header', () => {
  it('CE-7, review #8: characters beyond visible ASCII, space and tab in datacontenttype → 400', () => {
    for (const datacontenttype of [
      'text/plain; charset="\u0100"',
      'text/plain; a="\u00e9"',
      'text/plain; a="x\u0001"',
      'text/plain; a="x\u007f"',
      'text/plain; a="\u{1F30E}"',
    ]) {
      // Control characters are also CE-2 string-characters findings; every one is a CE-7 media-type finding.
      expect(
        invalidIssues(parse(structuredRequest(nlEvent({ datacontenttype })))),
        JSON.stringify(datacontenttype),
      ).toContain('CE-7 media-type datacontenttype');
    }
  });

  it('CE-7, review #8: quoted parameters with visible ASCII, spaces, tabs and escapes are still accepted', () => {
    for (const datacontenttype of [
      'text/plain; a="b c d"',
      'text/plain ;a=b',
      'text/plain; a="q\\"uote"',
      'application/json; profile="https://x.example/p?a=b"',
    ]) {
      expect(acceptedEvent(parse(structuredRequest(nlEvent({ datacontenttype })))).attributes['datacontenttype']).toBe(
        datacontenttype,
      );
    }
  });

  it('HTTP-2, CE-7, review #8: a binary-mode Content-Type with a Latin-1 character → 400', () => {
    expect(
      invalidIssues(parse(binaryRequest({ ...NL_HEADERS, 'content-type': 'text/plain; a="\u00e9"' }, 'x'))),
    ).toEqual(['CE-7 media-type datacontenttype']);
  });
});

describe('review #11: problem answers are bounded', () => {
  it('review #11: a 400 KB batch of zeros gets a 400 listing 100 issues within the budget', () => {
    const zeros = `[${Array.from({ length: 200_000 }, () => '0').join(',')}]`;
    expect(zeros.length).toBeGreaterThan(399_000);
    const problem = problemOf(parse(batchRequest(zeros), { maxEventBytes: LIMITS.maxEventBytes }));
    expect(problem.status).toBe(400);
    expect(problem.errors).toHaveLength(MAX_LISTED_ISSUES);
    expect(problem['validationStopped']).toBe(true);
    expect(Buffer.byteLength(problemResponse(problem).body)).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
  });

  it('review #11: long attribute names and values are cut in the answer, never echoed whole', () => {
    const long = 'X'.repeat(100_000);
    const members = Array.from({ length: 50 }, (_, i) =>
      nlEvent({ id: `${i}`, [`${long}${i}`]: 1, time: `\u0000${long}` }),
    );
    const problem = problemOf(parse(batchRequest(members), LIMITS));
    const body = problemResponse(problem).body;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
    expect(body).not.toContain('X'.repeat(1000));
    const answered = JSON.parse(body) as { errors: { attribute?: string; message: string }[] };
    expect(answered.errors.length).toBeGreaterThan(0);
    for (const issue of answered.errors) expect((issue.attribute ?? '').length).toBeLessThanOrEqual(65);
  });

  it('review #11: a problem within the budget is sent exactly as built', () => {
    const problem = problemOf(parse(batchRequest([nlEvent({ id: '' }), nlEvent({ source: '/x', time: 'noon' })])));
    expect(problem.errors!.length).toBeGreaterThan(1);
    expect(problemResponse(problem).body).toBe(JSON.stringify(problem));
  });

  it('review #11: issues past the byte budget are counted in errorsNotListed, not dropped silently', () => {
    const errors = Array.from({ length: 5000 }, (_, i) => ({
      attribute: `a${i}`,
      rule: 'r',
      requirement: 'CE-1',
      message: `\u0001`.repeat(5000),
    }));
    const answered = JSON.parse(problemResponse({ type: 't', title: 't', status: 400, errors }).body) as {
      errors: unknown[];
      errorsNotListed: number;
    };
    expect(answered.errors.length).toBeLessThanOrEqual(MAX_LISTED_ISSUES);
    expect(answered.errors.length + answered.errorsNotListed).toBe(5000);
  });
});
