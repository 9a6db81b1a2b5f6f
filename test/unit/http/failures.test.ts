/**
 * The one failure convention (docs/ARCHITECTURE.md, "Failures"): core throws a KoerierError,
 * `answered` turns it into problem+json with `problemAnswer`, anything else goes on up to the
 * adapter's 500, and the idempotency guard stores a thrown refusal like any other answer.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { HttpResponse } from '../../../functions/core/http/messages.js';
import { answered, KoerierError, problem } from '../../../functions/core/http/problems.js';
import { withIdempotency, type IdempotencyContext } from '../../../functions/core/idempotency/index.js';
import { InMemoryIdempotencyStore } from '../../support/memory/memory-idempotency-store.js';
import { controlledClock, ingestRequest } from '../idempotency/store-contract.js';
import { problemTypeUri } from '../../support/problem-types.js';

const SECRET = 'connection-string-with-password-hunter2';

function context(store: InMemoryIdempotencyStore): IdempotencyContext {
  return {
    clientId: 'publisher-a',
    operation: 'POST /events',
    store,
    clock: controlledClock(),
    ttlSeconds: 3600,
    lockSeconds: 60,
  };
}

describe('failures: a thrown KoerierError is the answer', () => {
  it('a KoerierError becomes problem+json with its status and headers; its cause never reaches the answer', async () => {
    const response = await answered(async () => {
      throw new KoerierError(problem(503, 'events-not-stored', 'Retry later.'), {
        headers: { 'retry-after': '1' },
        cause: new Error(SECRET),
      });
    });
    expect(response.status).toBe(503);
    expect(response.headers).toEqual({ 'content-type': 'application/problem+json', 'retry-after': '1' });
    expect(JSON.parse(response.body)).toEqual({
      type: problemTypeUri('events-not-stored'),
      title: 'Events not stored',
      status: 503,
      detail: 'Retry later.',
    });
    expect(response.body).not.toContain(SECRET);
  });

  it('the cause stays on the error for the log that catches it', () => {
    const cause = new Error(SECRET);
    expect(new KoerierError(problem(400, 'malformed-json', 'X'), { cause }).cause).toBe(cause);
  });

  it('anything else thrown goes on up past answered, to the adapter that answers it with a logged 500', async () => {
    await expect(answered(async () => Promise.reject(new TypeError(SECRET)))).rejects.toThrow(TypeError);
  });
});

describe('failures under the idempotency guard', () => {
  it('EDU-IDEM-14: a refusal the guarded work throws is stored and replayed with the same status and body', async () => {
    const store = new InMemoryIdempotencyStore();
    const request = ingestRequest(randomUUID(), '{"id":"1"}');
    let runs = 0;
    const refuse = async (): Promise<HttpResponse> => {
      runs++;
      throw new KoerierError(
        problem(403, 'source-not-granted', 'This client may not publish events with these sources.'),
      );
    };
    const first = await withIdempotency(request, context(store), refuse);
    const replay = await withIdempotency(request, context(store), refuse);
    expect(runs).toBe(1);
    expect(first.status).toBe(403);
    expect(replay.status).toBe(403);
    expect(replay.body).toBe(first.body);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });

  it('EDU-IDEM-14: a thrown 503 refusal frees the key, so the retry with the same key is processed', async () => {
    const store = new InMemoryIdempotencyStore();
    const request = ingestRequest(randomUUID(), '{"id":"1"}');
    const outage = async (): Promise<HttpResponse> => {
      throw new KoerierError(problem(503, 'events-not-stored', 'Retry.'), {
        headers: { 'retry-after': '1' },
      });
    };
    expect((await withIdempotency(request, context(store), outage)).status).toBe(503);
    const retried = await withIdempotency(request, context(store), async () => ({
      status: 202,
      headers: {},
      body: '{}',
    }));
    expect(retried.status).toBe(202);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });
});
