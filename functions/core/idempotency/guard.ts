/**
 * The one idempotency guard for every mutating route (EDU-IDEM-1, 3, 5), following the resource
 * states of section 8.3.9: validate the key, claim it with a lock, process, store the response.
 */
import { randomUUID } from 'node:crypto';
import type { HttpRequest, HttpResponse } from '../http/messages.js';
import { answered, KoerierError, problem } from '../http/problems.js';
import { requestFingerprint } from './fingerprint.js';
import { readIdempotencyKey } from './key.js';
import { systemClock, type Clock } from '../ports/clock.js';
import {
  epochSeconds,
  isClaimable,
  type IdempotencyEntry,
  type IdempotencyScope,
  type IdempotencyStore,
  type StoredResponse,
} from './store.js';

export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/**
 * Headers stored with a response and replayed. Everything else describes one particular answer
 * (request ids, rate-limit counters, Retry-After) rather than the outcome, so it is not replayed.
 */
export const REPLAYED_HEADERS: readonly string[] = ['content-type', 'location', 'content-location'];

/** How often the guard retries a claim when the entry it lost to vanished or expired meanwhile. */
export const CLAIM_ATTEMPTS = 3;

export interface IdempotencyContext {
  readonly clientId: string;
  /** The route, e.g. `POST /events`: part of the key's scope and of the fingerprint. */
  readonly operation: string;
  readonly store: IdempotencyStore;
  readonly clock?: Clock | undefined;
  /** EDU-IDEM-7: how long an entry lives (7 days by default in config). */
  readonly ttlSeconds: number;
  /** How long a claim blocks repeats before a crashed attempt's key may be claimed again. Keep it above the function timeout. */
  readonly lockSeconds: number;
  /** Further response headers (lower case) a route wants stored and replayed, next to `REPLAYED_HEADERS`. */
  readonly replayHeaders?: readonly string[] | undefined;
  /** Told when storing or freeing a key failed after processing; the response still goes out. */
  readonly onStoreError?: (error: unknown) => void;
}

/**
 * Runs `process` at most once per (client, operation, key) within the TTL. Answers, in order:
 * 400 for a missing or malformed key (before anything else), 422 when the key came with another
 * request, 409 while the first request is in progress, the stored response of a completed one
 * (same status, byte-identical body, `Idempotent-Replayed: true`). Otherwise runs `process`:
 * 2xx-4xx answers, also those of a KoerierError it throws, are stored; 5xx, 429 and any other
 * thrown error free the key so the retry is processed (the error goes on up).
 */
export function withIdempotency(
  req: HttpRequest,
  ctx: IdempotencyContext,
  process: () => Promise<HttpResponse>,
): Promise<HttpResponse> {
  // The guard's own refusals are answers too, so its callers get a response either way.
  return answered(() => guarded(req, ctx, process));
}

async function guarded(
  req: HttpRequest,
  ctx: IdempotencyContext,
  process: () => Promise<HttpResponse>,
): Promise<HttpResponse> {
  const scope: IdempotencyScope = {
    clientId: ctx.clientId,
    operation: ctx.operation,
    key: readIdempotencyKey(req.headers),
  };
  const fingerprint = requestFingerprint(req, ctx.operation);
  return claimOrAnswer(ctx, scope, fingerprint, undefined, (claimId) => processAndRecord(scope, claimId, ctx, process));
}

/**
 * Claims the key (with the prepared answer `pending`, if any) and hands the claim to `claimed`;
 * or answers from the entry that holds it: its stored response, 422 for another request, 409
 * while it is in progress. An entry freed or expired before it could be read is claimed again.
 */
export async function claimOrAnswer(
  ctx: IdempotencyContext,
  scope: IdempotencyScope,
  fingerprint: string,
  pending: StoredResponse | undefined,
  claimed: (claimId: string, replaced: IdempotencyEntry | undefined, now: number) => Promise<HttpResponse>,
): Promise<HttpResponse> {
  const clock = ctx.clock ?? systemClock;
  let seen: IdempotencyEntry | undefined;
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const now = clock();
    const claimId = randomUUID();
    const result = await ctx.store.claim({
      scope,
      fingerprint,
      claimId,
      now,
      lockExpiresAt: now + ctx.lockSeconds * 1000,
      expiresAt: epochSeconds(now) + ctx.ttlSeconds,
      ...(pending === undefined ? {} : { pending }),
    });
    if (result.claimed) return claimed(claimId, result.replaced, now);
    seen = result.existing;
    // The entry we lost to was freed or expired before we could read it: claim again.
    if (seen === undefined || isClaimable(seen, { now, fingerprint })) continue;
    return answerExisting(seen, scope, fingerprint, now);
  }
  throw inProgress(scope, seen?.state === 'in-progress' ? seen.lockExpiresAt : clock() + 1000, clock());
}

export function answerExisting(
  entry: IdempotencyEntry,
  scope: IdempotencyScope,
  fingerprint: string,
  now: number,
): HttpResponse {
  if (entry.fingerprint !== fingerprint) {
    throw new KoerierError(
      problem(
        422,
        'idempotency-key-reused',
        `Idempotency-Key ${scope.key} was already used with a different request; a new request needs a new key.`,
        { idempotencyKey: scope.key },
      ),
    );
  }
  if (entry.state === 'in-progress') throw inProgress(scope, entry.lockExpiresAt, now);
  return {
    status: entry.response.status,
    headers: { ...entry.response.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
    body: entry.response.body,
  };
}

export function inProgress(scope: IdempotencyScope, lockExpiresAt: number, now: number): KoerierError {
  const retryAfter = Math.max(1, Math.ceil((lockExpiresAt - now) / 1000));
  return new KoerierError(
    problem(
      409,
      'idempotency-key-in-progress',
      `A request with Idempotency-Key ${scope.key} is still being processed; retry after ${retryAfter} s.`,
      { idempotencyKey: scope.key },
    ),
    { headers: { 'retry-after': String(retryAfter) } },
  );
}

async function processAndRecord(
  scope: IdempotencyScope,
  claimId: string,
  ctx: IdempotencyContext,
  process: () => Promise<HttpResponse>,
): Promise<HttpResponse> {
  let response: HttpResponse;
  try {
    // A refusal (a thrown KoerierError) is an answer like any other: stored when final, replayed.
    response = await answered(process);
  } catch (error) {
    await ctx.store.release(scope, claimId).catch((releaseError: unknown) => ctx.onStoreError?.(releaseError));
    throw error;
  }
  try {
    if (isFinal(response.status))
      await ctx.store.complete(scope, claimId, storedResponse(response, ctx.replayHeaders ?? []));
    else await ctx.store.release(scope, claimId);
  } catch (error) {
    // The work is done; the partner gets its answer. A lost completion only means a retry after
    // the lock expires is processed again, which the router's source+id check absorbs (EDU-IDEM-15).
    ctx.onStoreError?.(error);
  }
  return response;
}

/**
 * 5xx, 429 and 409 (a conflict with a change made meanwhile) say "try again"; storing them would
 * replay a failure for the key's whole life.
 */
export function isFinal(status: number): boolean {
  return status < 500 && status !== 429 && status !== 409;
}

export function storedResponse(response: HttpResponse, extraHeaders: readonly string[]): StoredResponse {
  const keep = new Set([...REPLAYED_HEADERS, ...extraHeaders.map((h) => h.toLowerCase())]);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (keep.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  return { status: response.status, headers, body: response.body };
}
