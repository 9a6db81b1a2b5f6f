import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { scripts } from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';
import { DELIVERY_WAIT, startDeliveryHarness, type DeliveryHarness } from './delivery-harness.js';

let koerier: DeliveryHarness;
beforeAll(async () => {
  koerier = await startDeliveryHarness({
    [settingEnv.deliveryRetryInitialSeconds]: '1',
    [settingEnv.deliveryRetryMaxDelaySeconds]: '1',
    [settingEnv.deliveryRetryWindowSeconds]: '60',
    [settingEnv.deliveryBreakerFailures]: '3',
    [settingEnv.deliveryBreakerCooldownSeconds]: '2',
    [settingEnv.deliveryConnectTimeoutMs]: '500',
    [settingEnv.deliveryResponseTimeoutMs]: '1000',
  });
});
afterAll(async () => {
  await koerier?.stop();
});

const gaps = (times: readonly number[]) => times.slice(1).map((time, i) => time - times[i]!);

describe.concurrent('protecting the targets', () => {
  it('WH-6, EDU-10: deliveries keep to the rate the target allowed, across concurrent function instances', async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, { allowedRatePerMinute: 120 });
    for (let i = 0; i < 7; i++) await koerier.deliver(subscription.id);
    const requests = await receiver.waitForRequests(7, { timeoutMs: 20_000 });
    const times = requests.map((r) => r.receivedAt);
    // 120 per minute: send slots 500 ms apart. What the receiver sees also carries each request's
    // own transit delay (up to ~100 ms on a loaded two-core machine), so every span of k requests
    // must cover k × 500 ms less that jitter — for all pairs, not just neighbours.
    for (let i = 0; i < times.length; i++) {
      for (let j = i + 1; j < times.length; j++)
        expect(times[j]! - times[i]!).toBeGreaterThanOrEqual((j - i) * 500 - 150);
    }
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(2_900);
  });

  it('EDU-12: a target that keeps failing trips the breaker: one probe per (growing) cool-down instead of the retry schedule; a successful probe closes it', async () => {
    const receiver = await koerier.receiver(scripts.always({ respond: 503 }));
    const subscription = await koerier.subscribe(receiver.url);
    await koerier.deliver(subscription.id);
    // Retries come every ~1 s (the schedule's cap); after 3 failures the breaker opens for 2 s,
    // and after the failed probe for 4 s.
    const failing = await receiver.waitForRequests(4, { timeoutMs: 20_000 });
    expect(gaps(failing.map((r) => r.receivedAt))[2]).toBeGreaterThanOrEqual(1_900);

    // While it is open, new deliveries wait too: nothing reaches the target before the next probe,
    // 4 s after the failed one. Judged by when each request arrived, not by a quiet spell from now:
    // on a loaded machine this test may get here late, when the cool-down is nearly over.
    const openSince = Date.now();
    const coolDownEnds = failing[3]!.receivedAt + 3_900;
    for (let i = 0; i < 3; i++) await koerier.deliver(subscription.id);
    receiver.setScript(scripts.always({ respond: 204 }));

    const all = await receiver.waitForRequests(8, { timeoutMs: 20_000 });
    expect(all.slice(4).filter((request) => request.receivedAt < coolDownEnds)).toEqual([]);
    const probe = all[4]!;
    expect(probe.receivedAt).toBeGreaterThan(openSince);
    const target = await eventually(
      'the target healthy again',
      async () => {
        const state = await koerier.store.getTarget(subscription.id);
        return state.consecutiveFailures === 0 && state;
      },
      DELIVERY_WAIT,
    );
    expect(target.failingSince).toBeUndefined();
    expect(target.failedProbes).toBeUndefined();
  });
});
