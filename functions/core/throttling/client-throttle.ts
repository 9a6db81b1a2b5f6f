/**
 * A per-client throttle kept in the memory of one process (one Lambda container, or the laptop
 * host): a token bucket per client and route group, plus what the accurate, shared limit (the
 * publish window in DynamoDB) last said about the client. It runs right after authentication and
 * before any DynamoDB, SQS or KMS request, so a client over its limit costs no more than a JWT check.
 *
 * What it does not do: it is not shared between containers. A client whose requests are spread
 * over N containers may pass up to N times the per-container allowance; the DynamoDB window stays
 * the accurate limit for publishing. The refusals this throttle remembers make a client that the
 * window has refused cost at most one window check per container per window, instead of one per
 * request.
 */

import { systemClock, type Clock } from '../ports/clock.js';

export interface BucketLimits {
  /** Requests the bucket holds when full: the largest burst. */
  readonly capacity: number;
  /** Requests per minute the bucket refills at: the sustained rate. */
  readonly refillPerMinute: number;
}

export type ThrottleDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

export interface ClientThrottleOptions {
  readonly clock?: Clock;
  /**
   * Buckets kept at most; past this the least recently used is forgotten (which only makes that
   * client's next request start from a full bucket). Clients are authenticated, so their number
   * is that of the organisation's partners, but a bound keeps memory flat whatever happens.
   */
  readonly maxTrackedClients?: number;
}

interface BucketState {
  tokens: number;
  /** When `tokens` was last brought up to date. */
  updatedAt: number;
  /** Until when the shared limit refused this client (epoch ms); 0 when it has not. */
  refusedUntil: number;
}

export const DEFAULT_MAX_TRACKED_CLIENTS = 10_000;

export class ClientThrottle {
  private readonly clock: Clock;
  private readonly maxTracked: number;
  /** Insertion order is recency order: every take moves its key to the end. */
  private readonly buckets = new Map<string, BucketState>();

  constructor(options: ClientThrottleOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.maxTracked = options.maxTrackedClients ?? DEFAULT_MAX_TRACKED_CLIENTS;
    if (!Number.isInteger(this.maxTracked) || this.maxTracked < 1)
      throw new RangeError('maxTrackedClients must be a positive integer');
  }

  /** Takes one request from `key`'s bucket, or says how long to wait before the next may pass. */
  take(key: string, limits: BucketLimits): ThrottleDecision {
    checkLimits(limits);
    const now = this.clock();
    const state = this.current(key, limits, now);
    if (state.refusedUntil > now) return refuse(state.refusedUntil - now);
    if (state.tokens >= 1) {
      state.tokens -= 1;
      return { allowed: true };
    }
    const msPerToken = 60_000 / limits.refillPerMinute;
    return refuse((1 - state.tokens) * msPerToken);
  }

  /**
   * Remembers that the shared limit refused `key` until `untilMs`: until then this process
   * refuses the client itself, without asking the shared limit again.
   */
  refuseUntil(key: string, untilMs: number): void {
    const state = this.current(key, undefined, this.clock());
    state.refusedUntil = Math.max(state.refusedUntil, untilMs);
  }

  /** Buckets in memory now (for tests of the bound). */
  get trackedClients(): number {
    return this.buckets.size;
  }

  /** `key`'s bucket refilled up to `now`; without `limits` it is left as it is (a new one starts full). */
  private current(key: string, limits: BucketLimits | undefined, now: number): BucketState {
    let state = this.buckets.get(key);
    if (state) {
      this.buckets.delete(key);
      if (limits) {
        // A clock that steps back (NTP) must not drain the bucket.
        const elapsed = Math.max(0, now - state.updatedAt);
        state.tokens = Math.min(limits.capacity, state.tokens + (elapsed * limits.refillPerMinute) / 60_000);
        state.updatedAt = now;
      }
    } else {
      // Full; `Infinity` until the first take clamps it to the capacity it learns then.
      state = { tokens: limits ? limits.capacity : Number.POSITIVE_INFINITY, updatedAt: now, refusedUntil: 0 };
    }
    this.buckets.set(key, state);
    while (this.buckets.size > this.maxTracked) this.buckets.delete(this.buckets.keys().next().value as string);
    return state;
  }
}

function refuse(waitMs: number): ThrottleDecision {
  // Retry-After is whole seconds (RFC 9110); rounding up never invites a retry that is refused again.
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
}

function checkLimits(limits: BucketLimits): void {
  if (!(limits.capacity >= 1) || !(limits.refillPerMinute > 0)) {
    throw new RangeError(
      `a bucket needs a capacity of at least 1 and a positive refill rate, got ${JSON.stringify(limits)}`,
    );
  }
}
