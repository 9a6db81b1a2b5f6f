/**
 * Protecting a subscriber's target (WH-6, EDU-10, EDU-12): one shared state per subscription,
 * read and written by every delivery function instance.
 *
 * - Rate: deliveries are spaced at least 60 000 / rate ms apart (GCRA with no burst), so no
 *   sliding minute ever holds more requests than `WebHook-Allowed-Rate` allowed. `nextSendAt`
 *   is the earliest moment the next request may go; instances reserve slots by moving it forward
 *   with a conditional write.
 * - 429: the target's Retry-After pushes `nextSendAt` out for the whole subscription, and the
 *   rate is halved (starting from the allowed rate, or 60/min for a target that named none); the
 *   halved rate doubles again every minute without a new 429 until it is back to the allowed one.
 * - Circuit breaker: after `failureThreshold` consecutive transient failures it opens for a
 *   cool-down that doubles with every failed probe (at most an hour); then one probe delivery
 *   goes out (half-open): success closes it, failure opens it again.
 * - Suspension: a target that has been failing without a single success for `suspendAfter` is
 *   suspended; the subscriber sees why and resumes it.
 */

export interface TargetState {
  /** Epoch ms: no request to this target before this moment (rate spacing, 429 pause). */
  readonly nextSendAt?: number;
  readonly consecutiveFailures: number;
  /** Epoch ms of the last transient failure. */
  readonly lastFailureAt?: number;
  /** Epoch ms of the first failure since the last success. */
  readonly failingSince?: number;
  /** Epoch ms until which one instance holds the half-open probe. */
  readonly probeUntil?: number;
  /** Probes that failed since the breaker opened: each doubles the cool-down. */
  readonly failedProbes?: number;
  /** Set by a 429: the reduced rate and when it was set. */
  readonly throttle?: { readonly ratePerMinute: number; readonly since: number };
}

export const HEALTHY: TargetState = { consecutiveFailures: 0 };

export interface BreakerSettings {
  readonly failureThreshold: number;
  readonly cooldownSeconds: number;
}

export const MAX_BREAKER_COOLDOWN_MS = 3600_000;
/** A 429 from a target with no announced rate starts throttling here. */
export const THROTTLE_START_RATE_PER_MINUTE = 60;
export const THROTTLE_RECOVERY_MS = 60_000;

export type Breaker =
  | { readonly state: 'closed' }
  | { readonly state: 'open'; readonly until: number }
  /** The cool-down that began with the failure at `lastFailureAt` is over: one probe may go (whoever takes the probe lease). */
  | { readonly state: 'half-open'; readonly lastFailureAt: number };

export function breakerOf(target: TargetState, settings: BreakerSettings, now: number): Breaker {
  if (target.consecutiveFailures < settings.failureThreshold || target.lastFailureAt === undefined)
    return { state: 'closed' };
  const cooldown = Math.min(
    settings.cooldownSeconds * 1000 * 2 ** Math.min(target.failedProbes ?? 0, 20),
    MAX_BREAKER_COOLDOWN_MS,
  );
  const until = target.lastFailureAt + cooldown;
  return now < until ? { state: 'open', until } : { state: 'half-open', lastFailureAt: target.lastFailureAt };
}

/** The rate in force: the allowed one, or lower while a 429 throttle recovers. Undefined: no limit. */
export function effectiveRatePerMinute(
  allowed: number | undefined,
  target: TargetState,
  now: number,
): number | undefined {
  const throttle = target.throttle;
  if (!throttle) return allowed;
  const recovered =
    throttle.ratePerMinute * 2 ** Math.max(0, Math.floor((now - throttle.since) / THROTTLE_RECOVERY_MS));
  const ceiling = allowed ?? THROTTLE_START_RATE_PER_MINUTE * 2 ** 10;
  return recovered >= ceiling ? allowed : recovered;
}

/** The throttle after a 429 at `now`. */
export function throttleAfter429(
  allowed: number | undefined,
  target: TargetState,
  now: number,
): { ratePerMinute: number; since: number } {
  const current = effectiveRatePerMinute(allowed, target, now) ?? THROTTLE_START_RATE_PER_MINUTE * 2;
  return { ratePerMinute: Math.max(1, Math.floor(current / 2)), since: now };
}

export interface SendPlan {
  /** Milliseconds each admitted delivery waits before it goes (0 for the first, then the spacing). */
  readonly admitted: readonly number[];
  /** Milliseconds until each refused delivery's estimated turn: its visibility delay. */
  readonly deferred: readonly number[];
  /** The new `nextSendAt` when anything was admitted under a rate (to be written conditionally). */
  readonly nextSendAt?: number;
}

/**
 * Which of `count` deliveries may go now. Under a rate, those whose slot falls within
 * `horizonMs` are admitted (and wait in memory for their slot, a few seconds at most); the rest
 * are put back until their estimated slot, without reserving it, so no slot is wasted when they
 * come back and reserve again.
 */
export function planSends(options: {
  readonly count: number;
  readonly now: number;
  readonly ratePerMinute: number | undefined;
  readonly nextSendAt: number | undefined;
  readonly horizonMs: number;
}): SendPlan {
  const { count, now, ratePerMinute, horizonMs } = options;
  const start = Math.max(now, options.nextSendAt ?? now);
  if (ratePerMinute === undefined) {
    if (start - now <= horizonMs) return { admitted: Array<number>(count).fill(start - now), deferred: [] };
    return { admitted: [], deferred: Array<number>(count).fill(start - now) };
  }
  const spacing = 60_000 / ratePerMinute;
  const admitted: number[] = [];
  const deferred: number[] = [];
  for (let i = 0; i < count; i++) {
    const wait = Math.ceil(start + i * spacing - now);
    (wait <= horizonMs ? admitted : deferred).push(wait);
  }
  return admitted.length > 0
    ? { admitted, deferred, nextSendAt: Math.ceil(start + admitted.length * spacing) }
    : { admitted, deferred };
}

/** True when the target has failed, without one success, for at least `suspendAfterSeconds`. */
export function dueForSuspension(target: TargetState, suspendAfterSeconds: number, now: number): boolean {
  return target.failingSince !== undefined && now - target.failingSince >= suspendAfterSeconds * 1000;
}
