/**
 * GET /subscriptions/{id}/health (issue 13, item 5): what delivery to the subscription's target
 * looks like right now, beside its status (which says only whether the target consented and
 * whether Koerier still tries). The breaker as the dispatcher would judge it at this moment, the
 * failure streak and since when, the last success, and when the next attempt may go: never a
 * moment in the past.
 */
import { breakerOf, type BreakerSettings, type TargetState } from './target-health.js';

export interface SubscriptionHealth {
  /** `healthy`, `failing` (failures below the breaker's threshold), `breaker-open`, `probing` (one trial delivery may go), `throttled` (a 429 asked to slow down). */
  readonly state: 'healthy' | 'failing' | 'breaker-open' | 'probing' | 'throttled';
  readonly breaker: 'closed' | 'open' | 'half-open';
  readonly failurestreak: number;
  readonly failingsince?: string;
  readonly lastfailure?: string;
  readonly lastsuccess?: string;
  /** When the next attempt may go, if that is later than now. */
  readonly nextattemptat?: string;
  /** The reduced rate a 429 set, requests per minute. */
  readonly throttledto?: number;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

export function subscriptionHealth(
  target: TargetState,
  settings: BreakerSettings,
  lastSuccess: string | undefined,
  now: number,
): SubscriptionHealth {
  const breaker = breakerOf(target, settings, now);
  const throttled = target.throttle !== undefined && target.consecutiveFailures === 0;
  const next = Math.max(breaker.state === 'open' ? breaker.until : 0, target.nextSendAt ?? 0);
  const state =
    breaker.state === 'open'
      ? 'breaker-open'
      : breaker.state === 'half-open'
        ? 'probing'
        : target.consecutiveFailures > 0
          ? 'failing'
          : throttled
            ? 'throttled'
            : 'healthy';
  const view: Record<string, unknown> = {
    state,
    breaker: breaker.state,
    failurestreak: target.consecutiveFailures,
    failingsince: iso(target.failingSince),
    lastfailure: iso(target.lastFailureAt),
    lastsuccess: lastSuccess,
    nextattemptat: next > now ? iso(next) : undefined,
    throttledto: target.throttle?.ratePerMinute,
  };
  // Absent, not null, where there is nothing to say.
  return Object.fromEntries(
    Object.entries(view).filter(([, value]) => value !== undefined),
  ) as unknown as SubscriptionHealth;
}
