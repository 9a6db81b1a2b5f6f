/**
 * The IdempotencyStore contract, proven through the guard every route uses. Run against every
 * store implementation (in memory in test/unit, DynamoDB on dynalite in test/integration), so the
 * two cannot behave differently.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import type { Clock } from '../../../functions/core/ports/clock.js';
import {
  withIdempotency,
  type IdempotencyContext,
  type IdempotencyScope,
  type IdempotencyStore,
} from '../../../functions/core/idempotency/index.js';
import { problemTypeUri } from '../../support/problem-types.js';

const TTL = 7 * 24 * 3600;
const LOCK = 60;
const OP = 'POST /events';

export function controlledClock(start = Date.UTC(2026, 2, 1, 12)): Clock & { advance(ms: number): void } {
  let now = start;
  return Object.assign(() => now, { advance: (ms: number) => void (now += ms) });
}

export function ingestRequest(
  key: string | undefined,
  body: string,
  headers: Record<string, string> = {},
): HttpRequest {
  return {
    method: 'POST',
    path: '/events',
    headers: {
      'content-type': 'application/cloudevents+json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
      ...headers,
    },
    query: {},
    routeKey: 'POST /events',
    pathParameters: {},
    body: Buffer.from(body),
  };
}

/** A process that counts its runs and answers like the ingest does. */
export function countingProcess(answer: (run: number) => HttpResponse = accepted) {
  let runs = 0;
  const process = async () => answer(++runs);
  return { process, runs: () => runs };
}

/** Unicode, escapes and trailing whitespace: a replay must give back these exact bytes. */
function accepted(run: number): HttpResponse {
  return {
    status: 202,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      location: `/events/${run}`,
      'x-request-id': `req-${run}`,
    },
    body: `{"accepted":${run},"note":"één \\"ok\\" \u{1F4E8}\\n"}  `,
  };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Starts a first attempt whose `process` never returns (a crash, or still working); resolves once it holds the claim. */
async function startHangingAttempt(
  req: HttpRequest,
  ctx: IdempotencyContext,
  until: Promise<HttpResponse> = new Promise(() => {}),
) {
  const started = deferred<void>();
  const attempt = withIdempotency(req, ctx, () => {
    started.resolve();
    return until;
  });
  await started.promise;
  return { attempt }; // wrapped: returning the promise itself would make the caller wait for it
}

/** Wraps a store so a test can see whether it was touched at all. */
function touchCounting(store: IdempotencyStore) {
  let touches = 0;
  const counted: IdempotencyStore = {
    claim: (r) => (touches++, store.claim(r)),
    complete: (s, c, r) => (touches++, store.complete(s, c, r)),
    release: (s, c) => (touches++, store.release(s, c)),
  };
  return { store: counted, touches: () => touches };
}

export function describeIdempotencyStoreContract(name: string, createStore: () => IdempotencyStore) {
  describe(`IdempotencyStore contract: ${name}`, () => {
    const context = (over: Partial<IdempotencyContext> = {}): IdempotencyContext => ({
      clientId: 'publisher-a',
      operation: OP,
      store: createStore(),
      clock: controlledClock(),
      ttlSeconds: TTL,
      lockSeconds: LOCK,
      ...over,
    });

    it('EDU-IDEM-18: a missing or malformed key is answered 400 before anything is processed or stored', async () => {
      const counted = touchCounting(createStore());
      const ctx = context({ store: counted.store });
      const { process, runs } = countingProcess();
      const missing = await withIdempotency(ingestRequest(undefined, '{}'), ctx, process);
      expect(missing.status).toBe(400);
      expect(JSON.parse(missing.body).type).toBe(problemTypeUri('idempotency-key-missing'));
      const malformed = await withIdempotency(ingestRequest('not-a-uuid', '{}'), ctx, process);
      expect(JSON.parse(malformed.body).type).toBe(problemTypeUri('idempotency-key-malformed'));
      const notV4 = await withIdempotency(ingestRequest('6ba7b810-9dad-11d1-80b4-00c04fd430c8', '{}'), ctx, process);
      expect(notV4.status).toBe(400);
      expect(runs()).toBe(0);
      expect(counted.touches()).toBe(0);
    });

    it('EDU-IDEM-14: a repeat gets the same status and byte-identical body, marked Idempotent-Replayed', async () => {
      const ctx = context();
      const key = randomUUID();
      const { process, runs } = countingProcess();
      const first = await withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, process);
      const again = await withIdempotency(ingestRequest(key.toUpperCase(), '{"id":"1"}'), ctx, process);
      expect(runs()).toBe(1);
      expect(again.status).toBe(first.status);
      expect(Buffer.from(again.body).equals(Buffer.from(first.body))).toBe(true);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(again.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(again.headers.location).toBe('/events/1');
      expect(again.headers['x-request-id']).toBeUndefined();
    });

    it('EDU-IDEM-14: headers a route marks are replayed too', async () => {
      const ctx = context({ replayHeaders: ['ETag'] });
      const key = randomUUID();
      const answer = (): HttpResponse => ({ status: 201, headers: { etag: '"v1"', 'x-other': 'no' }, body: '' });
      await withIdempotency(ingestRequest(key, '{}'), ctx, async () => answer());
      const again = await withIdempotency(ingestRequest(key, '{}'), ctx, async () => answer());
      expect(again).toEqual({ status: 201, headers: { etag: '"v1"', 'idempotent-replayed': 'true' }, body: '' });
    });

    it('EDU-IDEM-8: the same key with another body gets 422 naming the key, and nothing is processed', async () => {
      const ctx = context();
      const key = randomUUID();
      const { process, runs } = countingProcess();
      await withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, process);
      const other = await withIdempotency(ingestRequest(key, '{"id":"2"}'), ctx, process);
      expect(runs()).toBe(1);
      expect(other.status).toBe(422);
      expect(other.headers['content-type']).toBe('application/problem+json');
      const problem = JSON.parse(other.body);
      expect(problem.type).toBe(problemTypeUri('idempotency-key-reused'));
      expect(problem.detail).toContain(key);
      expect(problem.idempotencyKey).toBe(key);
    });

    it('EDU-IDEM-8: in binary mode a changed ce- header with the same key gets 422', async () => {
      const ctx = context();
      const key = randomUUID();
      const { process } = countingProcess();
      const binary = (type: string) =>
        ingestRequest(key, '<x/>', {
          'content-type': 'application/xml',
          'ce-type': type,
          'ce-id': '1',
          'ce-source': 's',
          'ce-specversion': '1.0',
        });
      expect((await withIdempotency(binary('nl.example.a'), ctx, process)).status).toBe(202);
      expect((await withIdempotency(binary('nl.example.b'), ctx, process)).status).toBe(422);
    });

    it('EDU-IDEM-16: another client with the same key is processed independently', async () => {
      const store = createStore();
      const key = randomUUID();
      const { process, runs } = countingProcess();
      const a = await withIdempotency(
        ingestRequest(key, '{"id":"1"}'),
        context({ store, clientId: 'publisher-a' }),
        process,
      );
      const b = await withIdempotency(
        ingestRequest(key, '{"id":"other"}'),
        context({ store, clientId: 'publisher-b' }),
        process,
      );
      expect(runs()).toBe(2);
      expect(b.status).toBe(202);
      expect(b.body).not.toBe(a.body);
      expect(b.headers['idempotent-replayed']).toBeUndefined();
      // And each keeps its own answer.
      const againA = await withIdempotency(
        ingestRequest(key, '{"id":"1"}'),
        context({ store, clientId: 'publisher-a' }),
        process,
      );
      expect(againA.body).toBe(a.body);
    });

    it('EDU-IDEM-16: the same key on another operation is independent', async () => {
      const store = createStore();
      const key = randomUUID();
      const { process, runs } = countingProcess();
      await withIdempotency(ingestRequest(key, '{}'), context({ store, operation: 'POST /events' }), process);
      await withIdempotency(ingestRequest(key, '{}'), context({ store, operation: 'POST /subscriptions' }), process);
      expect(runs()).toBe(2);
    });

    it('EDU-IDEM-18: while the first request is in progress a repeat gets 409 with Retry-After, then the replay', async () => {
      const clock = controlledClock();
      const ctx = context({ clock });
      const key = randomUUID();
      const gate = deferred<HttpResponse>();
      const { attempt: first } = await startHangingAttempt(ingestRequest(key, '{}'), ctx, gate.promise);
      clock.advance(10_000);
      const during = await withIdempotency(ingestRequest(key, '{}'), ctx, async () => accepted(99));
      expect(during.status).toBe(409);
      expect(JSON.parse(during.body).type).toBe(problemTypeUri('idempotency-key-in-progress'));
      expect(during.headers['retry-after']).toBe(String(LOCK - 10));
      gate.resolve(accepted(1));
      const firstResponse = await first;
      const after = await withIdempotency(ingestRequest(key, '{}'), ctx, async () => accepted(99));
      expect(after.body).toBe(firstResponse.body);
      expect(after.headers['idempotent-replayed']).toBe('true');
    });

    it('EDU-IDEM-14: a 4xx answer is stored and replayed like any other', async () => {
      const ctx = context();
      const key = randomUUID();
      const { process, runs } = countingProcess(() => ({
        status: 400,
        headers: { 'content-type': 'application/problem+json' },
        body: '{"status":400}',
      }));
      await withIdempotency(ingestRequest(key, '{}'), ctx, process);
      const again = await withIdempotency(ingestRequest(key, '{}'), ctx, process);
      expect(runs()).toBe(1);
      expect(again.status).toBe(400);
      expect(again.headers['idempotent-replayed']).toBe('true');
    });

    it.each([500, 503, 429, 409])(
      'EDU-IDEM-18: a %i answer frees the key, so the retry is processed',
      async (status) => {
        const ctx = context();
        const key = randomUUID();
        const { process, runs } = countingProcess((run) =>
          run === 1 ? { status, headers: {}, body: 'try again' } : accepted(run),
        );
        expect((await withIdempotency(ingestRequest(key, '{}'), ctx, process)).status).toBe(status);
        const retry = await withIdempotency(ingestRequest(key, '{}'), ctx, process);
        expect(runs()).toBe(2);
        expect(retry.status).toBe(202);
        expect(retry.headers['idempotent-replayed']).toBeUndefined();
      },
    );

    it('EDU-IDEM-18: a thrown error frees the key and reaches the caller', async () => {
      const ctx = context();
      const key = randomUUID();
      await expect(
        withIdempotency(ingestRequest(key, '{}'), ctx, async () => {
          throw new Error('queue down');
        }),
      ).rejects.toThrow('queue down');
      expect((await withIdempotency(ingestRequest(key, '{}'), ctx, async () => accepted(2))).status).toBe(202);
    });

    it('EDU-IDEM-18: a first attempt that dies after claiming blocks the key (409) until its lock expires, then the key is usable', async () => {
      const clock = controlledClock();
      const ctx = context({ clock });
      const key = randomUUID();
      // The attempt dies: `process` never returns, so neither completion nor release happens.
      await startHangingAttempt(ingestRequest(key, '{"id":"1"}'), ctx);
      const { process, runs } = countingProcess();
      clock.advance(LOCK * 1000);
      expect((await withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, process)).status).toBe(409);
      clock.advance(1);
      const retry = await withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, process);
      expect(retry.status).toBe(202);
      expect(runs()).toBe(1);
      expect(
        (await withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, process)).headers['idempotent-replayed'],
      ).toBe('true');
    });

    it("EDU-IDEM-8: a dead attempt's expired lock is not taken over by a different request with that key (422)", async () => {
      const clock = controlledClock();
      const ctx = context({ clock });
      const key = randomUUID();
      await startHangingAttempt(ingestRequest(key, '{"id":"1"}'), ctx);
      clock.advance(LOCK * 1000 + 1);
      expect((await withIdempotency(ingestRequest(key, '{"id":"2"}'), ctx, async () => accepted(2))).status).toBe(422);
    });

    it('EDU-IDEM-7: an entry is replayed throughout its TTL and counts as absent once older than the TTL', async () => {
      const clock = controlledClock();
      const ctx = context({ clock });
      const key = randomUUID();
      const { process, runs } = countingProcess();
      await withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, process);
      clock.advance(TTL * 1000);
      expect(
        (await withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, process)).headers['idempotent-replayed'],
      ).toBe('true');
      clock.advance(1000);
      // Older than the TTL: a new request, even with another body, is processed as new.
      const later = await withIdempotency(ingestRequest(key, '{"id":"2"}'), ctx, process);
      expect(later.status).toBe(202);
      expect(later.headers['idempotent-replayed']).toBeUndefined();
      expect(runs()).toBe(2);
    });

    it('EDU-IDEM-18: 20 concurrent requests with one key run the work once; the others get 409 or the replay', async () => {
      const ctx = context();
      const key = randomUUID();
      const { process, runs } = countingProcess();
      const slowProcess = async () => {
        await new Promise((r) => setTimeout(r, 20));
        return process();
      };
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, slowProcess)),
      );
      expect(runs()).toBe(1);
      const fresh = responses.filter((r) => r.status === 202 && r.headers['idempotent-replayed'] === undefined);
      expect(fresh).toHaveLength(1);
      for (const r of responses) {
        if (r === fresh[0]) continue;
        if (r.status === 409) expect(r.headers['retry-after']).toBeDefined();
        else expect(r).toMatchObject({ status: 202, body: fresh[0]!.body, headers: { 'idempotent-replayed': 'true' } });
      }
    });

    describe('store port', () => {
      const scope = (): IdempotencyScope => ({ clientId: 'c', operation: OP, key: randomUUID() });
      const claimAt = (
        store: IdempotencyStore,
        s: IdempotencyScope,
        now: number,
        claimId: string,
        fingerprint = 'fp',
      ) =>
        store.claim({
          scope: s,
          fingerprint,
          claimId,
          now,
          lockExpiresAt: now + LOCK * 1000,
          expiresAt: Math.floor(now / 1000) + TTL,
        });

      it('EDU-IDEM-18: a second claim fails and returns the in-progress entry with its lock', async () => {
        const store = createStore();
        const s = scope();
        const now = Date.UTC(2026, 2, 1);
        expect(await claimAt(store, s, now, 'first')).toEqual({ claimed: true });
        expect(await claimAt(store, s, now + 1, 'second')).toEqual({
          claimed: false,
          existing: {
            state: 'in-progress',
            fingerprint: 'fp',
            lockExpiresAt: now + LOCK * 1000,
            expiresAt: Math.floor(now / 1000) + TTL,
          },
        });
      });

      it('EDU-IDEM-14: a completed entry returns its stored response exactly', async () => {
        const store = createStore();
        const s = scope();
        const now = Date.UTC(2026, 2, 1);
        await claimAt(store, s, now, 'first');
        const response = {
          status: 202,
          headers: { 'content-type': 'application/json' },
          body: '{"a":"\u00e9\u{1F4E8}"}\n',
        };
        expect(await store.complete(s, 'first', response)).toBe(true);
        const result = await claimAt(store, s, now + 1, 'second');
        expect(result).toEqual({
          claimed: false,
          existing: { state: 'completed', fingerprint: 'fp', expiresAt: Math.floor(now / 1000) + TTL, response },
        });
      });

      it('EDU-IDEM-18: an attempt whose lock was taken over can neither complete nor release the new claim', async () => {
        const store = createStore();
        const s = scope();
        const now = Date.UTC(2026, 2, 1);
        await claimAt(store, s, now, 'stale');
        expect(await claimAt(store, s, now + LOCK * 1000 + 1, 'fresh')).toEqual({ claimed: true });
        expect(await store.complete(s, 'stale', { status: 202, headers: {}, body: 'stale' })).toBe(false);
        await store.release(s, 'stale');
        const seen = await claimAt(store, s, now + LOCK * 1000 + 2, 'third');
        expect(seen.claimed).toBe(false);
        expect(await store.complete(s, 'fresh', { status: 202, headers: {}, body: 'fresh' })).toBe(true);
      });

      it('EDU-IDEM-18: release frees the key; a completed entry cannot be released', async () => {
        const store = createStore();
        const s = scope();
        const now = Date.UTC(2026, 2, 1);
        await claimAt(store, s, now, 'a');
        await store.release(s, 'a');
        expect(await claimAt(store, s, now, 'b')).toEqual({ claimed: true });
        await store.complete(s, 'b', { status: 202, headers: {}, body: '' });
        await store.release(s, 'b');
        expect((await claimAt(store, s, now, 'c')).claimed).toBe(false);
      });
    });
  });
}
