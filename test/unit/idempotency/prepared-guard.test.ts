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
  InMemoryIdempotencyStore,
  withPreparedIdempotency,
  type IdempotencyContext,
  type IdempotencyStore,
  type PreparedRequest,
} from '../../../functions/core/idempotency/index.js';
import { controlledClock, ingestRequest } from './store-contract.js';

const LOCK = 60;

function recordingStore(store: IdempotencyStore, options: { confirm: boolean }): IdempotencyStore & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    claim: (r) => (calls.push('claim'), store.claim(r)),
    complete: (s, c, r) => (calls.push('complete'), store.complete(s, c, r)),
    release: (s, c) => (calls.push('release'), store.release(s, c)),
    ...(options.confirm ? { confirm: (s: Parameters<IdempotencyStore['claim']>[0]['scope'], c: string) => (calls.push('confirm'), store.confirm!(s, c)) } : {}),
  };
}

function context(store: IdempotencyStore, clock = controlledClock()): IdempotencyContext {
  return { clientId: 'publisher-a', operation: 'POST /events', store, clock, ttlSeconds: 3600, lockSeconds: LOCK };
}

const accepted = jsonResponse(202, { accepted: ['e-1'] });

function prepared(commit: (takeover: boolean) => Promise<HttpResponse> = async () => accepted): PreparedRequest & { takeovers: boolean[] } {
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
    const refusing = () => prepared(async () => Promise.reject(new KoerierError(problem(400, 'upload-unknown', 'Bad Request', 'no such upload'))));
    expect((await withPreparedIdempotency(request, ctx, refusing, never)).status).toBe(400);
    const repeat = await withPreparedIdempotency(request, ctx, () => prepared(), never);
    expect(repeat.status).toBe(400);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
  });

  it('EDU-19: a 503 from the commit frees the key, so the retry commits again as a first attempt', async () => {
    const store = new InMemoryIdempotencyStore();
    const request = ingestRequest(randomUUID(), '{"id":"e-1"}');
    const ctx = context(store);
    const failing = () => prepared(async () => Promise.reject(new KoerierError(problem(503, 'events-not-stored', 'Service Unavailable', 'x'))));
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
      throw new KoerierError(problem(400, 'invalid-cloudevent', 'Bad Request', 'no id'));
    };
    const refused = async (error: unknown): Promise<HttpResponse> => Promise.reject(error);
    expect((await withPreparedIdempotency(ingestRequest(key, '{}'), ctx, invalid, refused)).status).toBe(400);
    expect((await withPreparedIdempotency(ingestRequest(key, '{}'), ctx, invalid, refused)).headers['idempotent-replayed']).toBe('true');
    expect((await withPreparedIdempotency(ingestRequest(key, '{"id":"e-1"}'), ctx, () => prepared(), never)).status).toBe(422);
  });
});
