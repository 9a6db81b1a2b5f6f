import { describe, expect, it } from 'vitest';
import {
  nextAttemptAt,
  nominalDelayMs,
  nominalTimetable,
  retryDeadline,
  type RetrySchedule,
} from '../../../functions/core/delivery/retry-schedule.js';

const DEFAULT: RetrySchedule = { initialDelaySeconds: 30, maxDelaySeconds: 4 * 3600, windowSeconds: 24 * 3600 };
const SEVEN_DAYS = 7 * 24 * 3600;
const HOUR = 3600_000;

describe('retry schedule', () => {
  it('EDU-18: the default timetable retries for 24 hours, the last attempt at the end of the window', () => {
    const offsets = nominalTimetable(DEFAULT, SEVEN_DAYS);
    expect(offsets).toEqual([0, 30, 90, 210, 450, 930, 1890, 3810, 7650, 15330, 29730, 44130, 58530, 72930, 86400]);
    expect(offsets.at(-1)).toBeGreaterThanOrEqual(24 * 3600);
  });

  it('EDU-18: delays double from the initial delay up to the cap', () => {
    expect([1, 2, 3, 4, 9, 10, 11, 30].map((n) => nominalDelayMs(n, DEFAULT) / 1000)).toEqual([
      30, 60, 120, 240, 7680, 14400, 14400, 14400,
    ]);
  });

  it('EDU-18: each delay carries ±20% jitter and never less or more', () => {
    const now = 1_000_000;
    for (const random of [0, 0.25, 0.5, 0.999]) {
      const at = nextAttemptAt({
        attempt: 3,
        now,
        deadline: now + 10 * HOUR,
        schedule: DEFAULT,
        random: () => random,
      })!;
      expect(at - now).toBeGreaterThanOrEqual(120_000 * 0.8);
      expect(at - now).toBeLessThanOrEqual(120_000 * 1.2);
    }
    const spread = new Set(
      Array.from({ length: 20 }, () => nextAttemptAt({ attempt: 3, now, deadline: now + HOUR, schedule: DEFAULT })),
    );
    expect(spread.size).toBeGreaterThan(1);
  });

  it('EDU-18: past the window there is one last attempt at its end, then none', () => {
    const deadline = 10 * HOUR;
    expect(nextAttemptAt({ attempt: 12, now: deadline - 60_000, deadline, schedule: DEFAULT, random: () => 0.5 })).toBe(
      deadline,
    );
    expect(
      nextAttemptAt({ attempt: 13, now: deadline, deadline, schedule: DEFAULT, random: () => 0.5 }),
    ).toBeUndefined();
    expect(
      nextAttemptAt({ attempt: 13, now: deadline - 500, deadline, schedule: DEFAULT, random: () => 0.5 }),
    ).toBeUndefined();
  });

  it('the retry window can be overridden per subscription', () => {
    expect(retryDeadline(0, DEFAULT, SEVEN_DAYS, 3 * 24 * 3600)).toBe(3 * 24 * HOUR);
    expect(retryDeadline(5_000, DEFAULT, SEVEN_DAYS)).toBe(5_000 + 24 * HOUR);
  });

  it('EDU-IDEM-12: retries never run past the lifetime of the Idempotency-Key', () => {
    const deadline = retryDeadline(0, { ...DEFAULT, windowSeconds: 30 * 24 * 3600 }, SEVEN_DAYS);
    expect(deadline).toBeLessThan(SEVEN_DAYS * 1000);
    expect(deadline).toBe(SEVEN_DAYS * 1000 - 60_000);
    expect(retryDeadline(0, DEFAULT, SEVEN_DAYS, 10 * 24 * 3600)).toBe(SEVEN_DAYS * 1000 - 60_000);
    // A short test lifetime keeps a tenth of it as the margin.
    expect(retryDeadline(0, { ...DEFAULT, windowSeconds: 100 }, 100)).toBe(90_000);
  });

  it('WH-2: a 429 Retry-After is honoured as a minimum, spread by at most a tenth more', () => {
    const now = 0;
    for (const random of [0, 0.5, 0.999]) {
      const at = nextAttemptAt({
        attempt: 1,
        now,
        deadline: HOUR,
        schedule: DEFAULT,
        notBefore: 120_000,
        random: () => random,
      })!;
      expect(at).toBeGreaterThanOrEqual(120_000);
      expect(at).toBeLessThanOrEqual(132_000);
    }
  });

  it('WH-2: a Retry-After beyond the window ends the retries instead of being cut short', () => {
    expect(
      nextAttemptAt({ attempt: 1, now: 0, deadline: HOUR, schedule: DEFAULT, notBefore: 2 * HOUR, random: () => 0 }),
    ).toBeUndefined();
    // Inside the window but jittered past it: the deadline itself, which is still after the Retry-After.
    expect(
      nextAttemptAt({
        attempt: 1,
        now: 0,
        deadline: HOUR,
        schedule: DEFAULT,
        notBefore: HOUR - 1000,
        random: () => 0.9,
      }),
    ).toBe(HOUR);
  });
});
