/**
 * The idempotency guard's edges that the store contract (store-contract.ts) does not reach: races
 * with a store whose entry vanishes or expires between the failed claim and the read, store
 * failures after the work is done, the exact problem bodies, and the key and fingerprint rules at
 * their boundaries. Each test names the rule it holds; together they are what `npm run mutate`
 * needs to see a broken guard (docs/MUTATION.md).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { refusalOf } from '../../support/refusals.js';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import {
  isClaimable,
  readIdempotencyKey,
  requestFingerprint,
  scopeKey,
  withIdempotency,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyContext,
  type IdempotencyEntry,
  type IdempotencyStore,
} from '../../../functions/core/idempotency/index.js';
import { InMemoryIdempotencyStore } from '../../support/memory/memory-idempotency-store.js';
import { controlledClock, ingestRequest } from './store-contract.js';
import { problemTypeUri } from '../../support/problem-types.js';

const TTL = 7 * 24 * 3600;
const OP = 'POST /events';

const accepted = async (): Promise<HttpResponse> => ({
  status: 202,
  headers: { 'content-type': 'application/json' },
  body: '{"accepted":1}',
});

function context(store: IdempotencyStore, over: Partial<IdempotencyContext> = {}): IdempotencyContext {
  return {
    clientId: 'publisher-a',
    operation: OP,
    store,
    clock: controlledClock(),
    ttlSeconds: TTL,
    lockSeconds: 60,
    ...over,
  };
}

/** A store that answers the first claims from a script, then behaves like the in-memory one. */
function scriptedStore(
  script: ((request: ClaimRequest) => ClaimResult)[],
  inner: IdempotencyStore = new InMemoryIdempotencyStore(),
) {
  const claims: ClaimRequest[] = [];
  const store: IdempotencyStore = {
    claim: async (request) => {
      claims.push(request);
      const scripted = script.shift();
      return scripted ? scripted(request) : inner.claim(request);
    },
    complete: (scope, claimId, response) => inner.complete(scope, claimId, response),
    release: (scope, claimId) => inner.release(scope, claimId),
  };
  return { store, claims };
}

const problemBody = (response: HttpResponse) => JSON.parse(response.body) as Record<string, unknown>;

describe('idempotency guard: races with the store', () => {
  it('EDU-IDEM-18: a claim lost to an entry that vanished before it could be read is tried again, and the request processed', async () => {
    const { store, claims } = scriptedStore([() => ({ claimed: false, existing: undefined })]);
    const response = await withIdempotency(ingestRequest(randomUUID(), '{"id":"1"}'), context(store), accepted);
    expect(response.status).toBe(202);
    expect(claims).toHaveLength(2);
  });

  it('EDU-IDEM-7: a claim lost to an entry that has outlived its TTL is tried again, not answered from that entry', async () => {
    const clock = controlledClock();
    const expired: IdempotencyEntry = {
      state: 'completed',
      fingerprint: 'another request',
      expiresAt: Math.floor(clock() / 1000) - 1,
      response: { status: 202, headers: {}, body: 'old' },
    };
    const { store, claims } = scriptedStore([() => ({ claimed: false, existing: expired })]);
    const response = await withIdempotency(
      ingestRequest(randomUUID(), '{"id":"1"}'),
      context(store, { clock }),
      accepted,
    );
    expect(response.status).toBe(202);
    expect(response.body).toBe('{"accepted":1}');
    expect(claims).toHaveLength(2);
  });

  it('EDU-IDEM-18: after three lost claims to vanishing entries the guard answers 409 with a one-second Retry-After, never looping on', async () => {
    const lost = () => ({ claimed: false as const, existing: undefined });
    const { store, claims } = scriptedStore([lost, lost, lost, lost, lost]);
    let runs = 0;
    const response = await withIdempotency(
      ingestRequest(randomUUID(), '{"id":"1"}'),
      context(store),
      async () => (runs++, accepted()),
    );
    expect(response.status).toBe(409);
    expect(response.headers['retry-after']).toBe('1');
    expect(claims).toHaveLength(3);
    expect(runs).toBe(0);
  });

  it('EDU-IDEM-18: after three lost claims to an expired entry still locked, Retry-After is the time left on that lock', async () => {
    const clock = controlledClock();
    const expiredButLocked = (): ClaimResult => ({
      claimed: false,
      existing: {
        state: 'in-progress',
        fingerprint: 'x',
        expiresAt: Math.floor(clock() / 1000) - 1,
        lockExpiresAt: clock() + 30_000,
      },
    });
    const { store } = scriptedStore([expiredButLocked, expiredButLocked, expiredButLocked]);
    const response = await withIdempotency(
      ingestRequest(randomUUID(), '{"id":"1"}'),
      context(store, { clock }),
      accepted,
    );
    expect(response.status).toBe(409);
    expect(response.headers['retry-after']).toBe('30');
  });

  it('EDU-IDEM-7: without a clock of its own the guard dates entries by the system clock', async () => {
    const { store, claims } = scriptedStore([]);
    const before = Date.now();
    await withIdempotency(
      ingestRequest(randomUUID(), '{"id":"1"}'),
      { clientId: 'publisher-a', operation: OP, store, ttlSeconds: TTL, lockSeconds: 60 },
      accepted,
    );
    const claim = claims[0]!;
    expect(claim.now).toBeGreaterThanOrEqual(before);
    expect(claim.now).toBeLessThanOrEqual(Date.now());
    expect(claim.expiresAt).toBe(Math.floor(claim.now / 1000) + TTL);
    expect(claim.lockExpiresAt).toBe(claim.now + 60_000);
  });
});

describe('idempotency guard: the store failing after the work', () => {
  const failing = (what: 'complete' | 'release'): IdempotencyStore => {
    const inner = new InMemoryIdempotencyStore();
    return {
      claim: (r) => inner.claim(r),
      complete:
        what === 'complete'
          ? async () => Promise.reject(new Error('store down'))
          : (s, c, r) => inner.complete(s, c, r),
      release: what === 'release' ? async () => Promise.reject(new Error('store down')) : (s, c) => inner.release(s, c),
    };
  };

  it('EDU-IDEM-17: when storing the answer fails the partner still gets it, and the operator is told', async () => {
    const told: unknown[] = [];
    const response = await withIdempotency(
      ingestRequest(randomUUID(), '{"id":"1"}'),
      context(failing('complete'), { onStoreError: (e) => told.push(e) }),
      accepted,
    );
    expect(response.status).toBe(202);
    expect(told).toEqual([new Error('store down')]);
  });

  it('EDU-IDEM-17: when storing the answer fails and nobody listens, the partner still gets it', async () => {
    const response = await withIdempotency(
      ingestRequest(randomUUID(), '{"id":"1"}'),
      context(failing('complete')),
      accepted,
    );
    expect(response.status).toBe(202);
  });

  it("EDU-IDEM-18: when the work throws and freeing the key fails too, the operator hears of the store and the caller gets the work's error", async () => {
    const told: unknown[] = [];
    const attempt = withIdempotency(
      ingestRequest(randomUUID(), '{"id":"1"}'),
      context(failing('release'), { onStoreError: (e) => told.push(e) }),
      async () => {
        throw new Error('work failed');
      },
    );
    await expect(attempt).rejects.toThrow('work failed');
    expect(told).toEqual([new Error('store down')]);
  });

  it("EDU-IDEM-18: when the work throws and freeing the key fails with nobody listening, the caller still gets the work's error", async () => {
    const attempt = withIdempotency(
      ingestRequest(randomUUID(), '{"id":"1"}'),
      context(failing('release')),
      async () => {
        throw new Error('work failed');
      },
    );
    await expect(attempt).rejects.toThrow('work failed');
  });
});

describe('idempotency guard: what the answers say', () => {
  it('EDU-IDEM-8: a key reused with another request gets a 422 problem with its title, the key in the detail and as a member', async () => {
    const ctx = context(new InMemoryIdempotencyStore());
    const key = randomUUID();
    await withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, accepted);
    const reused = await withIdempotency(ingestRequest(key, '{"id":"2"}'), ctx, accepted);
    expect(reused.headers['content-type']).toBe('application/problem+json');
    expect(problemBody(reused)).toEqual({
      type: problemTypeUri('idempotency-key-reused'),
      title: 'Idempotency-Key reused',
      status: 422,
      detail: `Idempotency-Key ${key} was already used with a different request; a new request needs a new key.`,
      idempotencyKey: key,
    });
  });

  it('EDU-IDEM-18: a repeat while the first is in progress gets a 409 problem naming the key and the seconds to wait', async () => {
    const clock = controlledClock();
    const ctx = context(new InMemoryIdempotencyStore(), { clock });
    const key = randomUUID();
    let release!: (r: HttpResponse) => void;
    const first = withIdempotency(
      ingestRequest(key, '{"id":"1"}'),
      ctx,
      () => new Promise<HttpResponse>((r) => (release = r)),
    );
    await new Promise((r) => setImmediate(r));
    clock.advance(15_000);
    const repeat = await withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, accepted);
    expect(problemBody(repeat)).toEqual({
      type: problemTypeUri('idempotency-key-in-progress'),
      title: 'Idempotency-Key in progress',
      status: 409,
      detail: `A request with Idempotency-Key ${key} is still being processed; retry after 45 s.`,
      idempotencyKey: key,
    });
    expect(repeat.headers['retry-after']).toBe('45');
    release(await accepted());
    await first;
  });

  it('EDU-IDEM-14: Content-Type, Location and Content-Location are replayed; other headers are not', async () => {
    const ctx = context(new InMemoryIdempotencyStore());
    const key = randomUUID();
    const created = async (): Promise<HttpResponse> => ({
      status: 201,
      headers: {
        'Content-Type': 'application/json',
        Location: '/subscriptions/s-1',
        'Content-Location': '/subscriptions/s-1',
        'X-Request-Id': 'r-1',
        'Retry-After': '3',
      },
      body: '{"id":"s-1"}',
    });
    await withIdempotency(ingestRequest(key, '{}'), ctx, created);
    const replay = await withIdempotency(ingestRequest(key, '{}'), ctx, created);
    expect(replay.headers).toEqual({
      'content-type': 'application/json',
      location: '/subscriptions/s-1',
      'content-location': '/subscriptions/s-1',
      'idempotent-replayed': 'true',
    });
  });
});

describe('idempotency store: keys and the claim rule', () => {
  it("EDU-IDEM-16: the stored key keeps client, operation and key apart, so no client can forge another's entry by moving a separator", () => {
    const key = randomUUID();
    expect(scopeKey({ clientId: 'ab', operation: 'c', key })).not.toBe(
      scopeKey({ clientId: 'a', operation: 'bc', key }),
    );
    expect(scopeKey({ clientId: 'a#b', operation: 'c', key })).not.toBe(
      scopeKey({ clientId: 'a', operation: 'b#c', key }),
    );
  });

  it('EDU-IDEM-7: the stored key format is stable (idempotency#client#operation#key), so an upgrade does not forget every live key', () => {
    expect(scopeKey({ clientId: 'publisher a', operation: 'POST /events', key: 'k' })).toBe(
      'idempotency#publisher%20a#POST%20%2Fevents#k',
    );
  });

  it('EDU-IDEM-18: completing or releasing a key that was never claimed changes nothing and does not fail', async () => {
    const store = new InMemoryIdempotencyStore();
    const scope = { clientId: 'publisher-a', operation: OP, key: randomUUID() };
    await expect(store.complete(scope, 'no-claim', { status: 202, headers: {}, body: '' })).resolves.toBe(false);
    await expect(store.release(scope, 'no-claim')).resolves.toBeUndefined();
  });

  it('EDU-IDEM-18: an expired lock is taken over only while the entry is in progress, never a completed entry', () => {
    const now = Date.UTC(2026, 2, 1);
    const expiresAt = Math.floor(now / 1000) + 3600;
    const lockGone = { state: 'in-progress', fingerprint: 'f', expiresAt, lockExpiresAt: now - 1 } as const;
    expect(isClaimable(lockGone, { now, fingerprint: 'f' })).toBe(true);
    expect(isClaimable(lockGone, { now, fingerprint: 'g' })).toBe(false);
    expect(isClaimable({ ...lockGone, lockExpiresAt: now + 1 }, { now, fingerprint: 'f' })).toBe(false);
    expect(isClaimable({ ...lockGone, lockExpiresAt: now }, { now, fingerprint: 'f' })).toBe(false);
    expect(
      isClaimable(
        { ...lockGone, expiresAt: Math.floor(now / 1000) - 1, lockExpiresAt: now + 1 },
        { now, fingerprint: 'g' },
      ),
    ).toBe(true);
    expect(
      isClaimable(
        { ...lockGone, expiresAt: Math.floor(now / 1000), lockExpiresAt: now + 1 },
        { now, fingerprint: 'g' },
      ),
    ).toBe(false);
  });
});

describe('Idempotency-Key header at its edges', () => {
  const V4 = '3f2b8c1e-9d4a-4b6e-8f10-2a7c5e9d1b34';
  const problemOf = (value: string) => {
    return refusalOf(() => readIdempotencyKey({ 'idempotency-key': value })).problem;
  };

  it.each([
    ['a closing quote only', `x${V4}"`],
    ['an opening quote only', `"${V4}x`],
    ['single quotes', `'${V4}'`],
  ])('EDU-IDEM-6: a key with %s is not the quoted form: 400 malformed', (_what, value) => {
    expect(problemOf(value).errors?.[0]).toMatchObject({ rule: 'uuid', requirement: 'EDU-IDEM-6' });
  });

  it('EDU-IDEM-6: a UUIDv4 with anything before or after it is malformed', () => {
    expect(problemOf(`x${V4}`).errors?.[0]).toMatchObject({ rule: 'uuid' });
    expect(problemOf(`${V4}x`).errors?.[0]).toMatchObject({ rule: 'uuid' });
  });

  it('EDU-IDEM-6, EDU-IDEM-18: the problems carry their titles and say what to send', () => {
    expect(refusalOf(() => readIdempotencyKey({})).problem).toMatchObject({
      title: 'Idempotency-Key missing',
      detail: 'This operation requires an Idempotency-Key header holding a UUIDv4.',
    });
    expect(problemOf('retry-1')).toMatchObject({
      title: 'Idempotency-Key malformed',
      detail: 'The Idempotency-Key is not a UUID (expected 8-4-4-4-12 hexadecimal digits).',
    });
    expect(problemOf('6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toMatchObject({
      title: 'Idempotency-Key malformed',
      detail: 'The Idempotency-Key is a UUID but not version 4 (random).',
    });
  });
});

describe('request fingerprint: order never matters', () => {
  const permutations = <T>(items: readonly T[]): T[][] =>
    items.length <= 1
      ? [[...items]]
      : items.flatMap((item, i) =>
          permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
        );

  const request = (headers: [string, string][], query: [string, string][]): HttpRequest => ({
    method: 'POST',
    routeKey: 'POST /events',
    path: '/events',
    headers: Object.fromEntries(headers),
    query: Object.fromEntries(query),
    pathParameters: {},
    body: Buffer.from('<x/>'),
  });

  it('EDU-IDEM-8: in binary mode every order of the ce- headers gives one fingerprint', () => {
    const headers: [string, string][] = [
      ['ce-id', 'e-1'],
      ['ce-source', 'urn:nld:oin:00000001234567890000'],
      ['ce-specversion', '1.0'],
      ['ce-type', 'nl.example.thing.created'],
    ];
    const fingerprints = new Set(
      permutations(headers).map((order) =>
        requestFingerprint(request([['content-type', 'application/xml'], ...order], []), OP),
      ),
    );
    expect(fingerprints.size).toBe(1);
  });

  it('EDU-IDEM-8: every order of the query parameters gives one fingerprint, and their values count', () => {
    const query: [string, string][] = [
      ['b', '2'],
      ['a', '1'],
      ['d', '4'],
      ['c', '3'],
    ];
    const fingerprints = new Set(
      permutations(query).map((order) =>
        requestFingerprint(request([['content-type', 'application/json']], order), 'PATCH /subscriptions/{id}'),
      ),
    );
    expect(fingerprints.size).toBe(1);
    expect(requestFingerprint(request([['content-type', 'application/json']], [['a', '2']]), OP)).not.toBe(
      requestFingerprint(request([['content-type', 'application/json']], [['a', '1']]), OP),
    );
  });
});
