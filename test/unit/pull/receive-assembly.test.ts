/**
 * The pure half of a receive (functions/core/pull/receive-assembly.ts) and the request rules
 * (pull-requests.ts), without emulators.
 */
import { describe, expect, it } from 'vitest';
import { encodeDeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import { KoerierError, problemType } from '../../../functions/core/http/problems.js';
import { parseReceiveRequest, parseSettleRequest } from '../../../functions/core/pull/pull-requests.js';
import {
  assembleAnswer,
  dispositionOf,
  MAX_ANSWER_BYTES,
  type LockView,
} from '../../../functions/core/pull/receive-assembly.js';

const event = (id: string, extra = '') =>
  `{"specversion":"1.0","id":"${id}","source":"urn:x","type":"t.v1","data":{"n":1.50}${extra}}`;
const message = (id: string, receiveCount: number) => ({
  messageId: `m-${id}`,
  receiptHandle: `rh-${id}`,
  receiveCount,
  body: encodeDeliveryMessage({
    version: 1,
    deliveryId: `key-${id}`,
    subscriptionId: 's',
    events: [event(id)],
    createdAt: 1,
  }),
});
const lock = (n: number): LockView => ({
  locktoken: `token-${n}`,
  lockeduntil: '2026-11-23T18:00:00.000Z',
  deliverycount: 1,
  deliverykey: `key-${n}`,
});

describe('which received messages go to the consumer (EDU-17)', () => {
  it('EDU-17: a message within maxdeliverycount is delivered with its own event text and key', () => {
    const disposition = dispositionOf(message('a', 3), 3, new Map());
    expect(disposition).toMatchObject({ kind: 'deliver', delivery: { deliveryId: 'key-a', events: [event('a')] } });
  });

  it('EDU-17: a message received more than maxdeliverycount times goes to the dead letters', () => {
    expect(dispositionOf(message('a', 4), 3, new Map())).toMatchObject({
      kind: 'dead-letter',
      reason: 'max-deliveries',
    });
    expect(dispositionOf(message('a', 2), 1, new Map())).toMatchObject({
      kind: 'dead-letter',
      reason: 'max-deliveries',
    });
  });

  it("EDU-18: a message a reject marked goes to the dead letters with the reject's reason, whatever its count", () => {
    expect(dispositionOf(message('a', 2), 10, new Map([['m-a', 'unknown leerling']]))).toMatchObject({
      kind: 'dead-letter',
      reason: 'rejected',
      detail: 'unknown leerling',
    });
  });

  it('EDU-17: a body that is not a delivery message is left to the redrive policy, never handed out', () => {
    expect(dispositionOf({ ...message('a', 1), body: 'garbage' }, 10, new Map())).toMatchObject({ kind: 'unreadable' });
  });
});

describe('the answer (CE-13)', () => {
  it('CE-13: the events are spliced in byte for byte, the locks beside them in the same order', () => {
    const entries = [event('a'), event('b', ',"ext":"  spaced  "')].map((text, n) => ({ event: text, lock: lock(n) }));
    const { body, included } = assembleAnswer(entries);
    expect(included).toBe(2);
    expect(body).toBe(
      `{"events":[${event('a')},${event('b', ',"ext":"  spaced  "')}],"locks":${JSON.stringify([lock(0), lock(1)])}}`,
    );
    expect(JSON.parse(body)).toMatchObject({
      events: [{ id: 'a' }, { id: 'b' }],
      locks: [{ locktoken: 'token-0' }, { locktoken: 'token-1' }],
    });
    expect(assembleAnswer([])).toEqual({ body: '{"events":[],"locks":[]}', included: 0 });
  });

  it("EDU-17: events stop before the answer, escaped as Lambda's result carries it, would pass the limit", () => {
    const quoted = `{"specversion":"1.0","id":"q","source":"s","type":"t","data":"${'\\"'.repeat(100_000)}"}`;
    const entries = Array.from({ length: 20 }, (_, n) => ({ event: quoted, lock: lock(n) }));
    const { body, included } = assembleAnswer(entries);
    expect(included).toBeGreaterThan(0);
    expect(included).toBeLessThan(20);
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    const oneMore = assembleAnswer(entries.slice(0, included + 1), Number.MAX_SAFE_INTEGER).body;
    expect(Buffer.byteLength(JSON.stringify(oneMore))).toBeGreaterThan(MAX_ANSWER_BYTES);
    expect(MAX_ANSWER_BYTES).toBeLessThan(6 * 1024 * 1024);
  });
});

describe('the answer at any limit (EDU-17)', () => {
  it("EDU-17: at every limit the answer, escaped as Lambda's result carries it, stays within it, and is as full as the count allows", () => {
    // Events that need no escaping, escaped quotes, escaped control characters and non-ASCII text; locks of
    // a realistic size. The count keeps 2 bytes per entry for commas, one more than the last needs.
    const texts = [
      event('a'),
      event('b', `,"q":"${'\\"'.repeat(40)}"`),
      event('c', ',"ctl":"\\u0001\\u0002"'),
      event('d', ',"s":"één"'),
    ];
    const entries = texts.map((text, n) => ({ event: text, lock: { ...lock(n), locktoken: 'T'.repeat(200 + n) } }));
    const escaped = (count: number) =>
      Buffer.byteLength(JSON.stringify(assembleAnswer(entries.slice(0, count), Number.MAX_SAFE_INTEGER).body));
    for (let maxBytes = escaped(0); maxBytes <= escaped(entries.length) + 4; maxBytes++) {
      const { body, included } = assembleAnswer(entries, maxBytes);
      expect(Buffer.byteLength(JSON.stringify(body)), `limit ${maxBytes}`).toBeLessThanOrEqual(maxBytes);
      expect(body).toBe(assembleAnswer(entries.slice(0, included), Number.MAX_SAFE_INTEGER).body);
      if (included < entries.length) expect(escaped(included + 1), `limit ${maxBytes}`).toBeGreaterThan(maxBytes - 2);
    }
  });
});

describe('request rules (EDU-17)', () => {
  const body = (value: unknown) => Buffer.from(JSON.stringify(value));
  /** The attributes a refused request's 400 names. */
  const refused = (parse: () => unknown): string[] => {
    try {
      parse();
    } catch (error) {
      expect(error).toBeInstanceOf(KoerierError);
      expect((error as KoerierError).problem.status).toBe(400);
      return ((error as KoerierError).problem.errors ?? []).map((issue) => issue.attribute ?? '');
    }
    throw new Error('not refused');
  };

  it('EDU-17: an empty receive takes the defaults; the bounds are inclusive', () => {
    expect(parseReceiveRequest(Buffer.alloc(0))).toEqual({ maxEvents: 10, waitSeconds: 20, lockSeconds: 60 });
    expect(parseReceiveRequest(body({ maxevents: 100, waitseconds: 0, lockseconds: 43_200 }))).toEqual({
      maxEvents: 100,
      waitSeconds: 0,
      lockSeconds: 43_200,
    });
    expect(parseReceiveRequest(body({ maxevents: 1, waitseconds: 20, lockseconds: 10 }))).toEqual({
      maxEvents: 1,
      waitSeconds: 20,
      lockSeconds: 10,
    });
    expect(refused(() => parseReceiveRequest(body({ maxevents: 0, waitseconds: 21, lockseconds: 43_201 })))).toEqual([
      'maxevents',
      'waitseconds',
      'lockseconds',
    ]);
    // Not an object: the issue names the body itself, no member.
    expect(refused(() => parseReceiveRequest(Buffer.from('[1]')))).toEqual(['']);
  });

  it('EDU-17: a settle takes 1 to 100 tokens and only its own action member', () => {
    const tokens = Array.from({ length: 100 }, (_, n) => `t${n}`);
    expect(parseSettleRequest(body({ locktokens: tokens }), 'acknowledge')).toMatchObject({ lockTokens: tokens });
    expect(refused(() => parseSettleRequest(body({ locktokens: [...tokens, 'x'] }), 'acknowledge'))).toEqual([
      'locktokens',
    ]);
    expect(refused(() => parseSettleRequest(body({ locktokens: [] }), 'acknowledge'))).toEqual(['locktokens']);
    expect(parseSettleRequest(body({ locktokens: ['t'], delayseconds: 43_200 }), 'release')).toMatchObject({
      delaySeconds: 43_200,
    });
    expect(refused(() => parseSettleRequest(body({ locktokens: ['t'], delayseconds: 1 }), 'acknowledge'))).toEqual([
      'delayseconds',
    ]);
    expect(parseSettleRequest(body({ locktokens: ['t'], lockseconds: 10 }), 'renew-lock')).toMatchObject({
      lockSeconds: 10,
    });
    expect(refused(() => parseSettleRequest(body({ locktokens: ['t'], lockseconds: 9 }), 'renew-lock'))).toEqual([
      'lockseconds',
    ]);
    expect(parseSettleRequest(body({ locktokens: ['t'], reason: 'r' }), 'reject')).toMatchObject({ reason: 'r' });
    expect(refused(() => parseSettleRequest(body({ locktokens: ['t'], reason: 'r'.repeat(1025) }), 'reject'))).toEqual([
      'reason',
    ]);
  });

  /** The problem a refused request is thrown with. */
  const problemOf = (parse: () => unknown) => {
    try {
      parse();
    } catch (error) {
      expect(error).toBeInstanceOf(KoerierError);
      return (error as KoerierError).problem;
    }
    throw new Error('not refused');
  };

  it('EDU-17: every lock token must be a non-empty string; one bad entry refuses the whole settle', () => {
    // Issue 29 item 2: the issue names the entry, `locktokens[i]`.
    for (const [locktokens, entry] of [
      [['t', ''], 'locktokens[1]'],
      [[''], 'locktokens[0]'],
      [['t', 5], 'locktokens[1]'],
      [[['t']], 'locktokens[0]'],
      [[{ length: 1 }], 'locktokens[0]'],
    ] as const) {
      expect(
        refused(() => parseSettleRequest(body({ locktokens }), 'acknowledge')),
        JSON.stringify(locktokens),
      ).toEqual([entry]);
    }
  });

  it("EDU-18: a reject's reason is a string of at most 1,024 characters, and absent it is empty (the service then names the consumer)", () => {
    expect(parseSettleRequest(body({ locktokens: ['t'], reason: 'r'.repeat(1024) }), 'reject')).toMatchObject({
      reason: 'r'.repeat(1024),
    });
    expect(parseSettleRequest(body({ locktokens: ['t'] }), 'reject')).toMatchObject({ reason: '' });
    expect(refused(() => parseSettleRequest(body({ locktokens: ['t'], reason: 5 }), 'reject'))).toEqual(['reason']);
  });

  it('EDU-17: a refused request is a 400 invalid-pull-request naming each member with its rule and requirement', () => {
    const rules = (parse: () => unknown) => {
      const problem = problemOf(parse);
      expect(problem).toMatchObject({
        status: 400,
        type: problemType('invalid-pull-request'),
        title: 'Invalid pull request',
      });
      return problem.errors?.map(({ attribute, rule, requirement }) => ({ attribute, rule, requirement }));
    };
    expect(rules(() => parseSettleRequest(body({ locktokens: [], delayseconds: -1, extra: 1 }), 'release'))).toEqual([
      { attribute: 'extra', rule: 'unknown-member', requirement: 'EDU-17' },
      { attribute: 'locktokens', rule: 'items', requirement: 'EDU-17' },
      { attribute: 'delayseconds', rule: 'range', requirement: 'EDU-17' },
    ]);
    expect(rules(() => parseSettleRequest(body({ locktokens: ['t'], reason: 'r'.repeat(1025) }), 'reject'))).toEqual([
      { attribute: 'reason', rule: 'length', requirement: 'EDU-17' },
    ]);
  });

  // Issue 29 item 2: pull answered malformed JSON with its own `invalid-json`; every route now answers
  // it with `malformed-json`, and JSON of the wrong shape with the body's own problem type.
  it('EDU-17, issue 29 item 2: malformed JSON is the 400 malformed-json, JSON that is no object a 400 invalid-pull-request; only a receive may be empty (or blank), and takes the defaults', () => {
    const malformed = { status: 400, type: problemType('malformed-json'), title: 'Malformed JSON' };
    const notAnObject = { status: 400, type: problemType('invalid-pull-request'), title: 'Invalid pull request' };
    for (const text of ['5', 'null', '"text"', '[1]', 'true']) {
      expect(
        problemOf(() => parseReceiveRequest(Buffer.from(text))),
        text,
      ).toMatchObject(notAnObject);
      expect(
        problemOf(() => parseSettleRequest(Buffer.from(text), 'acknowledge')),
        text,
      ).toMatchObject(notAnObject);
    }
    expect(problemOf(() => parseReceiveRequest(Buffer.from('{"maxevents":')))).toMatchObject(malformed);
    expect(problemOf(() => parseSettleRequest(Buffer.from('{"maxevents":'), 'acknowledge'))).toMatchObject(malformed);
    expect(parseReceiveRequest(Buffer.from(' \n\t '))).toEqual({ maxEvents: 10, waitSeconds: 20, lockSeconds: 60 });
    expect(problemOf(() => parseSettleRequest(Buffer.alloc(0), 'acknowledge'))).toMatchObject(malformed);
  });
});
