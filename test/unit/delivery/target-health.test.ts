import { describe, expect, it } from 'vitest';
import {
  breakerOf,
  dueForSuspension,
  effectiveRatePerMinute,
  HEALTHY,
  MAX_BREAKER_COOLDOWN_MS,
  planSends,
  throttleAfter429,
  type TargetState,
} from '../../../functions/core/delivery/target-health.js';

const breaker = { failureThreshold: 5, cooldownSeconds: 60 };

describe('circuit breaker', () => {
  it('EDU-12: stays closed below the failure threshold', () => {
    expect(breakerOf({ consecutiveFailures: 4, lastFailureAt: 0 }, breaker, 1)).toEqual({ state: 'closed' });
  });

  it('EDU-12: opens at the threshold for the cool-down, then lets one probe through', () => {
    const target: TargetState = { consecutiveFailures: 5, lastFailureAt: 1_000 };
    expect(breakerOf(target, breaker, 1_000)).toEqual({ state: 'open', until: 61_000 });
    expect(breakerOf(target, breaker, 60_999)).toEqual({ state: 'open', until: 61_000 });
    expect(breakerOf(target, breaker, 61_000)).toEqual({ state: 'half-open', lastFailureAt: 1_000 });
  });

  it('EDU-12: every failed probe doubles the cool-down, up to an hour; many failures at once do not', () => {
    expect(breakerOf({ consecutiveFailures: 50, lastFailureAt: 0 }, breaker, 0)).toEqual({
      state: 'open',
      until: 60_000,
    });
    expect(breakerOf({ consecutiveFailures: 6, failedProbes: 1, lastFailureAt: 0 }, breaker, 0)).toEqual({
      state: 'open',
      until: 120_000,
    });
    expect(breakerOf({ consecutiveFailures: 8, failedProbes: 3, lastFailureAt: 0 }, breaker, 0)).toEqual({
      state: 'open',
      until: 480_000,
    });
    expect(breakerOf({ consecutiveFailures: 500, failedProbes: 30, lastFailureAt: 0 }, breaker, 0)).toEqual({
      state: 'open',
      until: MAX_BREAKER_COOLDOWN_MS,
    });
  });
});

describe('rate (WH-6, EDU-10)', () => {
  it('EDU-10: without a rate and without a pause, every delivery goes now', () => {
    expect(planSends({ count: 3, now: 100, ratePerMinute: undefined, nextSendAt: undefined, horizonMs: 2000 })).toEqual(
      { admitted: [0, 0, 0], deferred: [] },
    );
  });

  it('WH-6: deliveries are spaced 60 000 / rate ms apart; those beyond the horizon are put back until their slot', () => {
    const plan = planSends({ count: 5, now: 0, ratePerMinute: 60, nextSendAt: undefined, horizonMs: 2000 });
    expect(plan).toEqual({ admitted: [0, 1000, 2000], deferred: [3000, 4000], nextSendAt: 3000 });
  });

  it('WH-6: slots reserved by others are respected', () => {
    const plan = planSends({ count: 2, now: 10_000, ratePerMinute: 120, nextSendAt: 10_800, horizonMs: 2000 });
    expect(plan).toEqual({ admitted: [800, 1300], deferred: [], nextSendAt: 11_800 });
  });

  it('WH-2: a 429 pause holds back even a subscription without a rate', () => {
    expect(planSends({ count: 2, now: 0, ratePerMinute: undefined, nextSendAt: 30_000, horizonMs: 2000 })).toEqual({
      admitted: [],
      deferred: [30_000, 30_000],
    });
  });

  it('WH-6: many instances reserving slots never put more than the allowed rate in any minute', () => {
    // Instances race for slots with a compare-and-set on nextSendAt, as the DynamoDB write does.
    let nextSendAt: number | undefined;
    const sends: number[] = [];
    const rate = 90;
    let now = 0;
    let random = 42;
    const next = () => (random = (random * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 2000; round++) {
      now += Math.floor(next() * 700);
      const seen = nextSendAt;
      const plan = planSends({
        count: 1 + Math.floor(next() * 10),
        now,
        ratePerMinute: rate,
        nextSendAt: seen,
        horizonMs: 2000,
      });
      if (plan.nextSendAt === undefined || nextSendAt !== seen) continue;
      nextSendAt = plan.nextSendAt;
      for (const wait of plan.admitted) sends.push(now + wait);
    }
    sends.sort((a, b) => a - b);
    expect(sends.length).toBeGreaterThan(500);
    for (let i = rate; i < sends.length; i++) expect(sends[i]! - sends[i - rate]!).toBeGreaterThanOrEqual(60_000);
  });
});

describe('429 throttle', () => {
  it('WH-2: a 429 halves the rate in force, starting from the allowed rate', () => {
    expect(throttleAfter429(120, HEALTHY, 5)).toEqual({ ratePerMinute: 60, since: 5 });
    const throttled: TargetState = { ...HEALTHY, throttle: { ratePerMinute: 60, since: 0 } };
    expect(throttleAfter429(120, throttled, 10)).toEqual({ ratePerMinute: 30, since: 10 });
    expect(throttleAfter429(undefined, HEALTHY, 0)).toEqual({ ratePerMinute: 60, since: 0 });
    expect(throttleAfter429(1, HEALTHY, 0)).toEqual({ ratePerMinute: 1, since: 0 });
  });

  it('WH-2: the throttled rate doubles every minute without a 429 until it is back at the allowed rate', () => {
    const target: TargetState = { ...HEALTHY, throttle: { ratePerMinute: 30, since: 0 } };
    expect(effectiveRatePerMinute(120, target, 59_999)).toBe(30);
    expect(effectiveRatePerMinute(120, target, 60_000)).toBe(60);
    expect(effectiveRatePerMinute(120, target, 120_000)).toBe(120);
    expect(effectiveRatePerMinute(120, target, 10 * 60_000)).toBe(120);
    expect(effectiveRatePerMinute(undefined, target, 60 * 60_000)).toBeUndefined();
    expect(effectiveRatePerMinute(undefined, target, 60_000)).toBe(60);
  });
});

describe('suspension', () => {
  it('a target failing without a success for the whole period is due for suspension, not before', () => {
    const target: TargetState = { consecutiveFailures: 40, failingSince: 0 };
    expect(dueForSuspension(target, 5 * 24 * 3600, 5 * 24 * 3600_000 - 1)).toBe(false);
    expect(dueForSuspension(target, 5 * 24 * 3600, 5 * 24 * 3600_000)).toBe(true);
    expect(dueForSuspension(HEALTHY, 1, 10_000)).toBe(false);
  });
});
