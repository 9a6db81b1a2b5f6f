/**
 * The prepared guard (issue 15): the claim holds the answer and the effect completes it. Its
 * answers are those of `withIdempotency`; these tests pin what differs: which store calls an
 * outcome makes, and the takeover of a prepared claim whose attempt never finished.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jsonResponse, type HttpResponse } from '../../../functions/core/http/messages.js';
import { KoerierError, problem } from '../../../functions/core/http/problems.js';
import {
  withPreparedIdempotency,
  type IdempotencyContext,
  type IdempotencyStore,
  type PreparedRequest,
} from '../../../functions/core/idempotency/index.js';
import { InMemoryIdempotencyStore } from '../../support/memory/memory-idempotency-store.js';
import { controlledClock, ingestRequest } from './store-contract.js';

const LOCK = 60;

function recordingStore(
  store: IdempotencyStore,
  options: { confirm: boolean },
): IdempotencyStore & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    claim: (r) => (calls.push('claim'), store.claim(r)),
    complete: (s, c, r) => (calls.push('complete'), store.complete(s, c, r)),
    release: (s, c) => (calls.push('release'), store.release(s, c)),
    ...(options.confirm
      ? {
          confirm: (s: Parameters<IdempotencyStore['claim']>[0]['scope'], c: string) => (
            calls.push('confirm'),
            store.confirm!(s, c)
          ),
        }
      : {}),
  };
}

const TTL = 3600;

function context(
  store: IdempotencyStore,
  clock = controlledClock(),
  over: Partial<IdempotencyContext> = {},
): IdempotencyContext {
  return {
    clientId: 'publisher-a',
    operation: 'POST /events',
    store,
    clock,
    ttlSeconds: TTL,
    lockSeconds: LOCK,
    ...over,
  };
}

/** The in-memory store with one of its writes failing. */
function failing(what: 'confirm' | 'release'): IdempotencyStore {
  const inner = new InMemoryIdempotencyStore();
  const down = async () => Promise.reject(new Error('store down'));
  return {
    claim: (r) => inner.claim(r),
    complete: (s, c, r) => inner.complete(s, c, r),
    release: what === 'release' ? down : (s, c) => inner.release(s, c),
    confirm: what === 'confirm' ? down : (s, c) => inner.confirm(s, c),
  };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const accepted = jsonResponse(202, { accepted: ['e-1'] });

function prepared(
  commit: (takeover: boolean) => Promise<HttpResponse> = async () => accepted,
): PreparedRequest & { takeovers: boolean[] } {
  const takeovers: boolean[] = [];
  return {
    answer: accepted,
    takeovers,
    commit: (takeover) => (takeovers.push(takeover), commit(takeover)),
  };
}

const never = async (): Promise<HttpResponse> => {
  throw new Error('not a refusal');
};

describe('withPreparedIdempotency', () => {
  it('EDU-IDEM-3, issue 15: an accepted request is one claim and a confirmation, no completion write', async () => {
    const store = recordingStore(new InMemoryIdempotencyStore(), { confirm: true });
    const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
    expect(await withPreparedIdempotency(request, context(store), () => prepared(), never)).toEqual(accepted);
    expect(store.calls).toEqual(['claim', 'confirm']);
  });

  it('EDU-IDEM-14: a store that cannot confirm without a write gets the completion, and the repeat is replayed', async () => {
    const store = recordingStore(new InMemoryIdempotencyStore(), { confirm: false });
    const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
    const ctx = context(store);
    await withPreparedIdempotency(request, ctx, () => prepared(), never);
    expect(store.calls).toEqual(['claim', 'complete']);
    const repeat = await withPreparedIdempotency(request, ctx, () => prepared(), never);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.body).toBe(accepted.body);
  });

  it('EDU-IDEM-14: a commit that refuses (4xx) has that refusal stored and replayed, not the prepared 202', async () => {
    const store = new InMemoryIdempotencyStore();
    const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
    const ctx = context(store);
    const refusing = () =>
      prepared(async () => Promise.reject(new KoerierError(problem(400, 'upload-unknown', 'no such upload'))));
    expect((await withPreparedIdempotency(request, ctx, refusing, never)).status).toBe(400);
    const repeat = await withPreparedIdempotency(request, ctx, () => prepared(), never);
    expect(repeat.status).toBe(400);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
  });

  it('EDU-19: a 503 from the commit frees the key, so the retry commits again as a first attempt', async () => {
    const store = new InMemoryIdempotencyStore();
    const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
    const ctx = context(store);
    const failing = () =>
      prepared(async () => Promise.reject(new KoerierError(problem(503, 'events-not-stored', 'x'))));
    expect((await withPreparedIdempotency(request, ctx, failing, never)).status).toBe(503);
    const retry = prepared();
    expect(await withPreparedIdempotency(request, ctx, () => retry, never)).toEqual(accepted);
    expect(retry.takeovers).toEqual([false]);
  });

  it('EDU-19, EDU-IDEM-14: a prepared claim whose attempt never finished is taken over after its lock: the effect again, then the replay', async () => {
    const store = new InMemoryIdempotencyStore();
    const clock = controlledClock();
    const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
    const ctx = context(store, clock);
    void withPreparedIdempotency(request, ctx, () => prepared(() => new Promise(() => {})), never);
    await new Promise<void>((resolve) => setImmediate(resolve));
    const early = await withPreparedIdempotency(request, ctx, () => prepared(), never);
    expect(early.status).toBe(409);
    clock.advance(LOCK * 1000 + 1);
    const takeover = prepared();
    const late = await withPreparedIdempotency(request, ctx, () => takeover, never);
    expect(takeover.takeovers).toEqual([true]);
    expect(late).toEqual({ ...accepted, headers: { ...accepted.headers, 'idempotent-replayed': 'true' } });
  });

  it('EDU-IDEM-8: a refusal from prepare goes through the plain guard: stored, and the same key with another body is 422', async () => {
    const store = new InMemoryIdempotencyStore();
    const key = randomUUID();
    const ctx = context(store);
    const invalid = () => {
      throw new KoerierError(problem(400, 'invalid-cloudevent', 'no id'));
    };
    const refused = async (error: unknown): Promise<HttpResponse> => Promise.reject(error);
    expect((await withPreparedIdempotency(ingestRequest(key, '{}'), ctx, invalid, refused)).status).toBe(400);
    expect(
      (await withPreparedIdempotency(ingestRequest(key, '{}'), ctx, invalid, refused)).headers['idempotent-replayed'],
    ).toBe('true');
    expect(
      (await withPreparedIdempotency(ingestRequest(key, '{"id":"e-1"}'), ctx, () => prepared(), never)).status,
    ).toBe(422);
  });

  describe('a commit that answers other than prepared', () => {
    // The claim holds the prepared answer; a repeat must still get what the first attempt really
    // answered, so any difference (status, body or a replayed header) has to be written as the completion.
    const answer = jsonResponse(202, { accepted: ['e-1'] }, { location: '/events/e-1' });
    it.each([
      ['status', { ...answer, status: 200 }],
      ['body', { ...answer, body: '{"accepted":[]}' }],
      ['location header', { ...answer, headers: { ...answer.headers, location: '/events/e-2' } }],
    ])(
      'EDU-IDEM-14: a commit whose answer differs in its %s has that answer replayed, not the prepared one',
      async (_what, given) => {
        const store = new InMemoryIdempotencyStore();
        const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
        const ctx = context(store);
        const differing = (): PreparedRequest => ({ answer, commit: async () => given });
        expect(await withPreparedIdempotency(request, ctx, differing, never)).toEqual(given);
        const repeat = await withPreparedIdempotency(request, ctx, differing, never);
        expect(repeat).toEqual({ ...given, headers: { ...given.headers, 'idempotent-replayed': 'true' } });
      },
    );
  });

  describe('a prepared claim whose attempt never finished, at the end of its life', () => {
    it('EDU-IDEM-7, EDU-IDEM-14: in the last second of its TTL the entry is still there: a repeat takes it over and is answered as replayed', async () => {
      const clock = controlledClock();
      const ctx = context(new InMemoryIdempotencyStore(), clock);
      const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
      void withPreparedIdempotency(request, ctx, () => prepared(() => new Promise(() => {})), never);
      await settle();
      // The clock starts on a whole second, so this is the last millisecond before the entry's expiresAt has passed.
      clock.advance(TTL * 1000 + 999);
      const late = prepared();
      expect((await withPreparedIdempotency(request, ctx, () => late, never)).headers['idempotent-replayed']).toBe(
        'true',
      );
      expect(late.takeovers).toEqual([true]);
    });

    it('EDU-IDEM-7: once its TTL has passed the entry counts as absent: the same request is a first attempt, not a takeover', async () => {
      const clock = controlledClock();
      const ctx = context(new InMemoryIdempotencyStore(), clock);
      const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
      void withPreparedIdempotency(request, ctx, () => prepared(() => new Promise(() => {})), never);
      await settle();
      clock.advance((TTL + 1) * 1000);
      const fresh = prepared();
      expect(await withPreparedIdempotency(request, ctx, () => fresh, never)).toEqual(accepted);
      expect(fresh.takeovers).toEqual([false]);
    });
  });

  describe('failures that are not refusals, and the store failing', () => {
    const crashing = () => prepared(async () => Promise.reject(new Error('crash')));

    it('EDU-IDEM-18: a commit that throws (not a refusal) frees the key and its error goes on up: the retry is a first attempt', async () => {
      const ctx = context(new InMemoryIdempotencyStore());
      const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
      await expect(withPreparedIdempotency(request, ctx, crashing, never)).rejects.toThrow('crash');
      const retry = prepared();
      expect(await withPreparedIdempotency(request, ctx, () => retry, never)).toEqual(accepted);
      expect(retry.takeovers).toEqual([false]);
    });

    it("EDU-IDEM-18: when the commit throws and freeing the key fails too, the operator hears of the store and the caller gets the commit's error", async () => {
      const told: unknown[] = [];
      const ctx = context(failing('release'), controlledClock(), { onStoreError: (e) => told.push(e) });
      await expect(
        withPreparedIdempotency(ingestRequest(randomUUID(), '{"id":"e-1"}'), ctx, crashing, never),
      ).rejects.toThrow('crash');
      expect(told).toEqual([new Error('store down')]);
    });

    it("EDU-IDEM-18: when the commit throws and freeing the key fails with nobody listening, the caller still gets the commit's error", async () => {
      const ctx = context(failing('release'));
      await expect(
        withPreparedIdempotency(ingestRequest(randomUUID(), '{"id":"e-1"}'), ctx, crashing, never),
      ).rejects.toThrow('crash');
    });

    it('EDU-IDEM-17, EDU-19: when confirming the claim fails the partner still gets its 202, and the operator is told', async () => {
      const told: unknown[] = [];
      const ctx = context(failing('confirm'), controlledClock(), { onStoreError: (e) => told.push(e) });
      expect(
        await withPreparedIdempotency(ingestRequest(randomUUID(), '{"id":"e-1"}'), ctx, () => prepared(), never),
      ).toEqual(accepted);
      expect(told).toEqual([new Error('store down')]);
    });

    it('EDU-IDEM-17, EDU-19: when confirming the claim fails with nobody listening, the partner still gets its 202', async () => {
      const ctx = context(failing('confirm'));
      expect(
        await withPreparedIdempotency(ingestRequest(randomUUID(), '{"id":"e-1"}'), ctx, () => prepared(), never),
      ).toEqual(accepted);
    });

    it('EDU-IDEM-18: an attempt that finishes after its claim was taken over and freed confirms nothing and reports no store failure', async () => {
      // The slow first attempt loses its claim to a takeover whose commit crashes and frees the key;
      // the store must then treat the first attempt's confirmation as a no-op, not as a failure.
      const clock = controlledClock();
      const told: unknown[] = [];
      const ctx = context(new InMemoryIdempotencyStore(), clock, { onStoreError: (e) => told.push(e) });
      const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
      let finish!: (response: HttpResponse) => void;
      const slow = withPreparedIdempotency(
        request,
        ctx,
        () => prepared(() => new Promise((resolve) => (finish = resolve))),
        never,
      );
      await settle();
      clock.advance(LOCK * 1000 + 1);
      await expect(withPreparedIdempotency(request, ctx, crashing, never)).rejects.toThrow('crash');
      finish(accepted);
      expect(await slow).toEqual(accepted);
      expect(told).toEqual([]);
      const next = prepared();
      expect(await withPreparedIdempotency(request, ctx, () => next, never)).toEqual(accepted);
      expect(next.takeovers).toEqual([false]);
    });
  });
});
