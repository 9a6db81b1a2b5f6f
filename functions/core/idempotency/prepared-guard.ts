/**
 * The idempotency guard for a request whose answer is known before its side effect (the ingest:
 * the 202 lists the events validation accepted), issue 15. Same answers as `withIdempotency`, one
 * write fewer on the accepted path: the claim stores the answer to come, and the completion is the
 * side effect itself rather than a second write.
 *
 * Why that keeps every guarantee:
 * - At most one attempt runs the effect at a time: the claim is the same conditional write.
 * - A repeat never gets a 2xx before the effect is done (EDU-19): the container that confirmed the
 *   effect serves repeats the stored answer (marked replayed, EDU-IDEM-14); any other container
 *   sees the entry in progress (409 with Retry-After) until the lock expires, and then *takes it
 *   over*: it does the effect again from its own request (same fingerprint, so the same events;
 *   the router drops the copies by source + id, EDU-IDEM-15), completes the entry with a write, and
 *   answers the stored answer marked replayed. A crash before the effect is covered the same way,
 *   exactly as a crashed attempt is today.
 * - A different request with the key gets 422, a refusal is stored and replayed, a 5xx/429 frees
 *   the key: the generic path, unchanged.
 * The price is for repeats only: one served by another container within the lock waits for it.
 */
import type { HttpRequest, HttpResponse } from '../http/messages.js';
import { answered } from '../http/problems.js';
import { requestFingerprint } from './fingerprint.js';
import {
  claimOrAnswer,
  IDEMPOTENT_REPLAYED_HEADER,
  isFinal,
  storedResponse,
  withIdempotency,
  type IdempotencyContext,
} from './guard.js';
import { readIdempotencyKey } from './key.js';
import { epochSeconds, type IdempotencyEntry, type IdempotencyScope, type StoredResponse } from './store.js';

export interface PreparedRequest {
  /** The answer the request gets once `commit` has done the effect; known before any effect. */
  readonly answer: HttpResponse;
  /**
   * Does the effect and answers (`answer`, or a refusal it throws). `takeover` is true when this
   * attempt repeats the effect of an earlier claim that may or may not have finished: the effect
   * must then be safe to do again and charge nothing the first attempt already charged.
   */
  commit(takeover: boolean): Promise<HttpResponse>;
}

/**
 * Runs the request at most once per (client, operation, key), as `withIdempotency`. `prepare`
 * runs after the key is read and must have no effect (it may read, e.g. a cached snapshot); when it throws (a refusal), the request
 * goes through `withIdempotency` with `refused(error)` as its process, so a refusal is stored and
 * replayed as before.
 */
export function withPreparedIdempotency(
  req: HttpRequest,
  ctx: IdempotencyContext,
  prepare: () => PreparedRequest | Promise<PreparedRequest>,
  refused: (error: unknown) => Promise<HttpResponse>,
): Promise<HttpResponse> {
  return answered(async () => {
    const scope: IdempotencyScope = {
      clientId: ctx.clientId,
      operation: ctx.operation,
      key: readIdempotencyKey(req.headers),
    };
    let prepared: PreparedRequest;
    try {
      prepared = await prepare();
    } catch (error) {
      return withIdempotency(req, ctx, () => refused(error));
    }
    return guardedPrepared(req, ctx, scope, prepared);
  });
}

async function guardedPrepared(
  req: HttpRequest,
  ctx: IdempotencyContext,
  scope: IdempotencyScope,
  prepared: PreparedRequest,
): Promise<HttpResponse> {
  const fingerprint = requestFingerprint(req, ctx.operation);
  const pending = storedResponse(prepared.answer, ctx.replayHeaders ?? []);
  return claimOrAnswer(ctx, scope, fingerprint, pending, (claimId, replaced, now) =>
    commitAndRecord(scope, claimId, ctx, prepared, pending, tookOverPending(replaced, now, fingerprint)),
  );
}

async function commitAndRecord(
  scope: IdempotencyScope,
  claimId: string,
  ctx: IdempotencyContext,
  prepared: PreparedRequest,
  pending: StoredResponse,
  takeover: boolean,
): Promise<HttpResponse> {
  let response: HttpResponse;
  try {
    response = await answered(() => prepared.commit(takeover));
  } catch (error) {
    await ctx.store.release(scope, claimId).catch((releaseError: unknown) => ctx.onStoreError?.(releaseError));
    throw error;
  }
  const stored = storedResponse(response, ctx.replayHeaders ?? []);
  try {
    if (sameResponse(stored, pending)) {
      // A takeover writes the completion, so every container answers the replay from now on.
      if (takeover || !ctx.store.confirm) await ctx.store.complete(scope, claimId, pending);
      else await ctx.store.confirm(scope, claimId);
    } else if (isFinal(response.status)) await ctx.store.complete(scope, claimId, stored);
    else await ctx.store.release(scope, claimId);
  } catch (error) {
    // As in withIdempotency: the work is done and the answer goes out; a retry is absorbed downstream.
    ctx.onStoreError?.(error);
  }
  if (takeover && sameResponse(stored, pending)) {
    return {
      status: pending.status,
      headers: { ...pending.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
      body: pending.body,
    };
  }
  return response;
}

/** The claim replaced a pending claim of this very request whose lock ran out: its effect may be done or not. */
function tookOverPending(replaced: IdempotencyEntry | undefined, now: number, fingerprint: string): boolean {
  return (
    replaced?.state === 'in-progress' &&
    replaced.pending !== undefined &&
    replaced.fingerprint === fingerprint &&
    replaced.expiresAt >= epochSeconds(now)
  );
}

function sameResponse(a: StoredResponse, b: StoredResponse): boolean {
  return a.status === b.status && a.body === b.body && JSON.stringify(a.headers) === JSON.stringify(b.headers);
}
