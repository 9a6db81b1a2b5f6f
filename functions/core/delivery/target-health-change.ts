/**
 * What a subscription group's attempts, settled one by one in `settle-attempt.ts`, come to for its
 * target's shared state (WH-2, EDU-10, EDU-12): a success, failures counted against the breaker, a
 * 429 pause, or a probe lease to end. Decided without I/O; the dispatcher writes it.
 */
import type { HealthEffect } from './settle-attempt.js';
import { throttleAfter429, type TargetState } from './target-health.js';

/** What a subscription group's attempts do to its target's shared state. */
export interface TargetHealthChange {
  /** A 429 came back: pause the target until `pauseUntil` and lower its rate. */
  readonly throttle?: {
    readonly pauseUntil: number;
    readonly throttle: { readonly ratePerMinute: number; readonly since: number };
  };
  /**
   * `success`: the breaker closes and the counters clear; `failures`: `count` more transient
   * failures (`probe`: the half-open probe was one), after which suspension is due if the target
   * has failed long enough; `release-probe`: the probe told nothing about the target (it was not
   * sent, its token failed, or the target answered without a verdict: a 429, a 4xx), so its lease
   * (ending `until`) ends now rather than holding the target for nothing; `none`: nothing to write.
   */
  readonly record:
    | { readonly kind: 'success' }
    | { readonly kind: 'failures'; readonly count: number; readonly lastFailure: string; readonly probe: boolean }
    | { readonly kind: 'release-probe'; readonly until: number }
    | { readonly kind: 'none' };
}

export function targetHealthChange(
  effects: readonly HealthEffect[],
  admitted: { readonly target: TargetState; readonly probe: boolean; readonly probeUntil?: number | undefined },
  allowedRatePerMinute: number | undefined,
  now: number,
): TargetHealthChange {
  const { target, probe, probeUntil } = admitted;
  const pauses = effects.flatMap((effect) => (effect.throttledUntil === undefined ? [] : [effect.throttledUntil]));
  const throttle =
    pauses.length === 0
      ? {}
      : {
          throttle: { pauseUntil: Math.max(...pauses), throttle: throttleAfter429(allowedRatePerMinute, target, now) },
        };
  const failures = effects.filter((effect) => effect.kind === 'failed');
  if (effects.some((effect) => effect.kind === 'delivered')) {
    const wasFailing = target.consecutiveFailures > 0 || target.failingSince !== undefined;
    return { ...throttle, record: wasFailing ? { kind: 'success' } : { kind: 'none' } };
  }
  if (failures.length === 0 || effects.some((effect) => effect.kind === 'retired')) {
    return {
      ...throttle,
      record: probeUntil === undefined ? { kind: 'none' } : { kind: 'release-probe', until: probeUntil },
    };
  }
  return {
    ...throttle,
    record: { kind: 'failures', count: failures.length, lastFailure: failures.at(-1)?.detail ?? '', probe },
  };
}
