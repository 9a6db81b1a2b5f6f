/**
 * The delivery rules at their exact boundaries: the retry timetable's last attempt, Retry-After
 * against the deadline, the 429 throttle's recovery, the rate plan's horizon, the breaker and the
 * suspension clock, the delivery message's shape check, and the subscription cache. Written where
 * `npm run mutate` showed a boundary no test pinned (docs/MUTATION.md).
 */
import { describe, expect, it } from 'vitest';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import {
  nextAttemptAt,
  nominalTimetable,
  type RetrySchedule,
} from '../../../functions/core/delivery/retry-schedule.js';
import {
  cachedSubscriptions,
  type SubscriptionSource,
} from '../../../functions/core/subscriptions/subscription-cache.js';
import {
  breakerOf,
  dueForSuspension,
  effectiveRatePerMinute,
  planSends,
  THROTTLE_START_RATE_PER_MINUTE,
} from '../../../functions/core/delivery/target-health.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';

const SEVEN_DAYS = 7 * 24 * 3600;
const NOW = Date.UTC(2026, 2, 1, 12);

describe('retry schedule at its boundaries', () => {
  const schedule = (initialDelaySeconds: number, maxDelaySeconds: number, windowSeconds: number): RetrySchedule => ({
    initialDelaySeconds,
    maxDelaySeconds,
    windowSeconds,
  });

  it('EDU-18: an attempt that falls exactly on the end of the window is the last one, not followed by another at the same moment', () => {
    expect(nominalTimetable(schedule(1, 1, 3), SEVEN_DAYS)).toEqual([0, 1, 2, 3]);
  });

  it("EDU-18: the last attempt at the window's end goes even when it is exactly one second after the one before", () => {
    expect(nominalTimetable(schedule(2, 2, 5), SEVEN_DAYS)).toEqual([0, 2, 4, 5]);
    // Less than a second before the end: no extra attempt squeezed in.
    expect(nominalTimetable(schedule(2, 2, 4.5), SEVEN_DAYS)).toEqual([0, 2, 4]);
  });

  it('EDU-18: a jittered attempt landing exactly on the deadline is kept, even when that is under a second away', () => {
    // Nominal 1 s, jitter factor 0.8 + 0.4 × 0.25 = 0.9: 900 ms from now, which is the deadline.
    expect(
      nextAttemptAt({ attempt: 1, now: NOW, deadline: NOW + 900, schedule: schedule(1, 1, 60), random: () => 0.25 }),
    ).toBe(NOW + 900);
  });

  it('EDU-18: past the window, one last attempt at its end when that is a full second away, none when it is closer', () => {
    const deadline = NOW + 1000;
    expect(nextAttemptAt({ attempt: 5, now: NOW, deadline, schedule: schedule(60, 60, 3600), random: () => 0.5 })).toBe(
      deadline,
    );
    expect(
      nextAttemptAt({ attempt: 5, now: NOW + 1, deadline, schedule: schedule(60, 60, 3600), random: () => 0.5 }),
    ).toBeUndefined();
  });

  it('WH-2: a Retry-After is spread by up to a tenth of the wait it asked for, not of the clock', () => {
    expect(
      nextAttemptAt({
        attempt: 1,
        now: NOW,
        deadline: NOW + 3_600_000,
        schedule: schedule(1, 1, 3600),
        notBefore: NOW + 10_000,
        random: () => 0.5,
      }),
    ).toBe(NOW + 10_500);
  });

  it('WH-2: a Retry-After is kept to the millisecond when no spreading is drawn, and one ending on the deadline still gets its attempt', () => {
    expect(
      nextAttemptAt({
        attempt: 1,
        now: NOW,
        deadline: NOW + 3_600_000,
        schedule: schedule(1, 1, 3600),
        notBefore: NOW + 5000,
        random: () => 0,
      }),
    ).toBe(NOW + 5000);
    // Spread past the deadline, but the target's own time is the deadline itself: attempt then.
    expect(
      nextAttemptAt({
        attempt: 1,
        now: NOW,
        deadline: NOW + 5000,
        schedule: schedule(1, 1, 3600),
        notBefore: NOW + 5000,
        random: () => 0.5,
      }),
    ).toBe(NOW + 5000);
  });
});

describe('target health at its boundaries', () => {
  const breaker = { failureThreshold: 5, cooldownSeconds: 60 };

  it('EDU-12: below the threshold the breaker stays closed even right after a failure; without a failure time it never opens', () => {
    expect(breakerOf({ consecutiveFailures: 4, lastFailureAt: NOW }, breaker, NOW + 1)).toEqual({ state: 'closed' });
    expect(breakerOf({ consecutiveFailures: 9 }, breaker, NOW)).toEqual({ state: 'closed' });
  });

  it('WH-2: right after a 429 the halved rate is in force; it recovers by the minute from the moment of the 429', () => {
    const throttled = { consecutiveFailures: 0, throttle: { ratePerMinute: 30, since: NOW } };
    expect(effectiveRatePerMinute(120, throttled, NOW)).toBe(30);
    expect(effectiveRatePerMinute(120, throttled, NOW + 59_999)).toBe(30);
    expect(effectiveRatePerMinute(120, throttled, NOW + 60_000)).toBe(60);
    expect(effectiveRatePerMinute(120, throttled, NOW + 120_000)).toBe(120);
  });

  it('WH-2: a target that named no rate is unlimited again once the throttle has doubled back up to its ceiling', () => {
    const throttled = {
      consecutiveFailures: 0,
      throttle: { ratePerMinute: THROTTLE_START_RATE_PER_MINUTE, since: NOW },
    };
    expect(effectiveRatePerMinute(undefined, throttled, NOW + 9 * 60_000)).toBe(
      THROTTLE_START_RATE_PER_MINUTE * 2 ** 9,
    );
    expect(effectiveRatePerMinute(undefined, throttled, NOW + 10 * 60_000)).toBeUndefined();
  });

  it('WH-2: without a rate, a pause ending exactly at the horizon is waited out in memory; one ending later is put back until it ends', () => {
    expect(
      planSends({ count: 2, now: NOW, ratePerMinute: undefined, nextSendAt: NOW + 2000, horizonMs: 2000 }),
    ).toEqual({
      admitted: [2000, 2000],
      deferred: [],
    });
    expect(
      planSends({ count: 2, now: NOW, ratePerMinute: undefined, nextSendAt: NOW + 2001, horizonMs: 2000 }),
    ).toEqual({
      admitted: [],
      deferred: [2001, 2001],
    });
  });

  it('WH-6: when no slot falls within the horizon nothing is reserved', () => {
    expect(planSends({ count: 2, now: NOW, ratePerMinute: 60, nextSendAt: NOW + 10_000, horizonMs: 2000 })).toEqual({
      admitted: [],
      deferred: [10_000, 11_000],
    });
  });

  it('EDU-12: a target is due for suspension after failing for the whole period, measured from its first failure', () => {
    const failing = { consecutiveFailures: 3, failingSince: NOW };
    expect(dueForSuspension(failing, 3600, NOW + 3_599_999)).toBe(false);
    expect(dueForSuspension(failing, 3600, NOW + 3_600_000)).toBe(true);
    expect(dueForSuspension({ consecutiveFailures: 0 }, 0, NOW)).toBe(false);
  });
});

describe('delivery message shape', () => {
  const valid = {
    version: 1,
    deliveryId: '5b7e2c6a-5d1e-4c3f-9a0b-1c2d3e4f5a6b',
    subscriptionId: 's1',
    createdAt: NOW,
    events: [{ id: 'e1' }],
  };

  it.each([
    ['another version', { version: 2 }],
    ['a numeric delivery id', { deliveryId: 7 }],
    ['no subscription id', { subscriptionId: undefined }],
    ['events that are not a list', { events: { id: 'e1' } }],
    ['an event that is a string', { events: ['{"id":"e1"}'] }],
    ['an event that is a list', { events: [[{ id: 'e1' }]] }],
    ['an event that is null', { events: [null] }],
    ['one good event and one string', { events: [{ id: 'e1' }, 'e2'] }],
    ['a creation time as text', { createdAt: '2026-03-01T12:00:00Z' }],
  ])('EDU-IDEM-11: a queue message with %s is not a Koerier delivery message', (_what, change) => {
    expect(() => decodeDeliveryMessage(JSON.stringify({ ...valid, ...change }))).toThrow(
      new TypeError('Not a Koerier delivery message'),
    );
  });

  it('EDU-IDEM-11: a well-formed message with whitespace around its events is read back byte for byte', () => {
    const body = `{"version":1,"deliveryId":"${valid.deliveryId}","subscriptionId":"s1","createdAt":${NOW},"events": \n [ {"id":"e1",  "data":[1, 2]} ,{"id":"e2"} ] \n}`;
    expect(decodeDeliveryMessage(body).events).toEqual(['{"id":"e1",  "data":[1, 2]}', '{"id":"e2"}']);
    const events = ['{"id":"e1",  "data":[1, 2]}'];
    expect(
      decodeDeliveryMessage(
        encodeDeliveryMessage({
          version: 1,
          deliveryId: valid.deliveryId,
          subscriptionId: 's1',
          createdAt: NOW,
          events,
        }),
      ).events,
    ).toEqual(events);
  });
});

describe('subscription cache', () => {
  const subscription = (id: string) => ({ id, status: 'active' }) as unknown as Subscription;

  function source(over: Partial<SubscriptionSource> = {}) {
    const reads: string[] = [];
    const updates: unknown[][] = [];
    const src: SubscriptionSource = {
      get: async (id) => (reads.push(id), subscription(id)),
      updateStatus: async (...args: unknown[]) => void updates.push(args),
      ...over,
    };
    return { src, reads, updates };
  }

  it('EDU-12: a subscription is read once per TTL; at the TTL it is read again', async () => {
    const { src, reads } = source();
    let now = NOW;
    const cache = cachedSubscriptions(src, 5000, () => now);
    await cache.get('s1');
    now += 4999;
    await cache.get('s1');
    expect(reads).toEqual(['s1']);
    now += 1;
    await cache.get('s1');
    expect(reads).toEqual(['s1', 's1']);
  });

  it('EDU-12: a fresh read goes to the store, and what it read is cached', async () => {
    const { src, reads } = source();
    const cache = cachedSubscriptions(src, 5000, () => NOW);
    await cache.get('s1');
    expect(await cache.get('s1', { fresh: true })).toEqual(subscription('s1'));
    await cache.get('s1');
    expect(reads).toEqual(['s1', 's1']);
  });

  it('EDU-12: a status this container sets is seen at once by its next read', async () => {
    const { src, reads, updates } = source();
    const cache = cachedSubscriptions(src, 60_000, () => NOW);
    await cache.get('s1');
    await cache.updateStatus('s1', 'suspended', 'keeps failing');
    expect(updates[0]!.slice(0, 3)).toEqual(['s1', 'suspended', 'keeps failing']);
    await cache.get('s1');
    expect(reads).toEqual(['s1', 's1']);
  });

  it('EDU-12: a failed read is not remembered', async () => {
    let fail = true;
    const { src, reads } = source({
      get: async (id) => {
        reads.push(id);
        if (fail) throw new Error('throttled');
        return subscription(id);
      },
    });
    const cache = cachedSubscriptions(src, 60_000, () => NOW);
    await expect(cache.get('s1')).rejects.toThrow('throttled');
    fail = false;
    expect(await cache.get('s1')).toEqual(subscription('s1'));
    expect(reads).toEqual(['s1', 's1']);
  });

  it('EDU-12: the cache holds at most 10,000 subscriptions, then starts afresh', async () => {
    const { src, reads } = source();
    const cache = cachedSubscriptions(src, 60_000, () => NOW);
    for (let i = 0; i < 10_000; i++) await cache.get(`s${i}`);
    await cache.get('s0');
    expect(reads).toHaveLength(10_000);
    await cache.get('s-new');
    await cache.get('s0');
    expect(reads.slice(-2)).toEqual(['s-new', 's0']);
  });
});
