/** The in-container per-client throttle (review #20): a token bucket per key, plus refusals learnt from the shared window. */
import { describe, expect, it } from 'vitest';
import { ClientThrottle, type BucketLimits } from '../../../functions/core/throttling/client-throttle.js';

function fakeClock(start = 1_700_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const sixPerMinute: BucketLimits = { capacity: 3, refillPerMinute: 6 };

describe('ClientThrottle', () => {
  it('review #20, EDU-20: a client gets its burst, then 429-style refusals with the wait until its next token', () => {
    const clock = fakeClock();
    const throttle = new ClientThrottle({ clock: clock.now });
    expect([1, 2, 3].map(() => throttle.take('a', sixPerMinute).allowed)).toEqual([true, true, true]);
    // One token per 10 s: the next one is 10 s away.
    expect(throttle.take('a', sixPerMinute)).toEqual({ allowed: false, retryAfterSeconds: 10 });
    clock.advance(4_000);
    expect(throttle.take('a', sixPerMinute)).toEqual({ allowed: false, retryAfterSeconds: 6 });
    clock.advance(6_000);
    expect(throttle.take('a', sixPerMinute)).toEqual({ allowed: true });
    expect(throttle.take('a', sixPerMinute).allowed).toBe(false);
  });

  it('review #20, EDU-20: buckets are per client (never shared), so one client over its limit leaves the others alone', () => {
    const throttle = new ClientThrottle({ clock: fakeClock().now });
    for (let i = 0; i < 3; i++) throttle.take('noisy', sixPerMinute);
    expect(throttle.take('noisy', sixPerMinute).allowed).toBe(false);
    expect(throttle.take('quiet', sixPerMinute).allowed).toBe(true);
  });

  it('review #20: the bucket refills at the configured rate up to its capacity, never beyond', () => {
    const clock = fakeClock();
    const throttle = new ClientThrottle({ clock: clock.now });
    for (let i = 0; i < 3; i++) throttle.take('a', sixPerMinute);
    clock.advance(3_600_000);
    const allowed = Array.from({ length: 5 }, () => throttle.take('a', sixPerMinute).allowed);
    expect(allowed).toEqual([true, true, true, false, false]);
  });

  it('review #20: a clock that steps back does not drain or overfill a bucket', () => {
    const clock = fakeClock();
    const throttle = new ClientThrottle({ clock: clock.now });
    throttle.take('a', sixPerMinute);
    clock.advance(-30_000);
    expect(throttle.take('a', sixPerMinute).allowed).toBe(true);
    expect(throttle.take('a', sixPerMinute).allowed).toBe(true);
    expect(throttle.take('a', sixPerMinute).allowed).toBe(false);
  });

  it('review #20: a refusal by the shared window is remembered until the window ends, with Retry-After counting down to it', () => {
    const clock = fakeClock(1_700_000_010_000);
    const throttle = new ClientThrottle({ clock: clock.now });
    throttle.refuseUntil('a', 1_700_000_040_000);
    expect(throttle.take('a', sixPerMinute)).toEqual({ allowed: false, retryAfterSeconds: 30 });
    clock.advance(29_500);
    expect(throttle.take('a', sixPerMinute)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    clock.advance(500);
    // The bucket was never drained by the refused requests: the window decides again.
    expect(throttle.take('a', sixPerMinute)).toEqual({ allowed: true });
    expect(throttle.take('b', sixPerMinute)).toEqual({ allowed: true });
  });

  it('review #20: memory stays bounded; the least recently used client is forgotten first', () => {
    const throttle = new ClientThrottle({ clock: fakeClock().now, maxTrackedClients: 2 });
    const one: BucketLimits = { capacity: 1, refillPerMinute: 1 };
    throttle.take('a', one);
    throttle.take('b', one);
    expect(throttle.take('a', one).allowed).toBe(false); // a is now the most recent
    throttle.take('c', one); // forgets b
    expect(throttle.trackedClients).toBe(2);
    expect(throttle.take('a', one).allowed).toBe(false);
    expect(throttle.take('b', one).allowed).toBe(true); // b starts again from a full bucket
  });

  it('review #20: limits that would let nothing through, or everything, are refused', () => {
    const throttle = new ClientThrottle();
    expect(() => throttle.take('a', { capacity: 0, refillPerMinute: 1 })).toThrow(RangeError);
    expect(() => throttle.take('a', { capacity: 1, refillPerMinute: 0 })).toThrow(RangeError);
    expect(() => throttle.take('a', { capacity: Number.NaN, refillPerMinute: 1 })).toThrow(RangeError);
    expect(() => new ClientThrottle({ maxTrackedClients: 0 })).toThrow(RangeError);
  });
});
