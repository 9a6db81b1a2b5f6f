import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { scripts } from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';
import { cloudEvent, noMoreRequests, startDeliveryHarness, type DeliveryHarness } from './delivery-harness.js';

/** The shortened schedule: 1 s, then 2 s between attempts, for 30 s (one subscription overrides it). */
const SETTINGS = {
  [settingEnv.deliveryRetryInitialSeconds]: '1',
  [settingEnv.deliveryRetryMaxDelaySeconds]: '2',
  [settingEnv.deliveryRetryWindowSeconds]: '30',
  [settingEnv.deliveryResponseTimeoutMs]: '700',
  [settingEnv.deliveryConnectTimeoutMs]: '500',
  [settingEnv.deliveryBreakerFailures]: '100',
};

let koerier: DeliveryHarness;
beforeAll(async () => {
  koerier = await startDeliveryHarness(SETTINGS);
});
afterAll(async () => {
  await koerier?.stop();
});

const gaps = (times: readonly number[]) => times.slice(1).map((time, i) => time - times[i]!);

describe.concurrent('push delivery retries (shortened schedule)', () => {
  it('WH-2, EDU-IDEM-9, EDU-IDEM-11: three 500s then 204: four attempts with backoff between them, all under one Idempotency-Key with the same payload', async () => {
    const receiver = await koerier.receiver(scripts.failThenSucceed(3, 500));
    const subscription = await koerier.subscribe(receiver.url);
    const event = cloudEvent();
    const message = await koerier.deliver(subscription.id, [event]);

    const requests = await receiver.waitForRequests(4, { timeoutMs: 20_000 });
    expect(requests.map((r) => r.headers['idempotency-key'])).toEqual(Array(4).fill(message.deliveryId));
    // Never sooner than the schedule allows: 1 s, 2 s, 2 s, each less at most 20% jitter.
    gaps(requests.map((r) => r.receivedAt)).forEach((gap, i) =>
      expect(gap).toBeGreaterThanOrEqual([800, 1600, 1600][i]!),
    );
    for (const request of requests) {
      expect(request.body).toBe(event);
      expect(HTTP.toEvent({ headers: request.headers, body: request.body })).toMatchObject({
        id: JSON.parse(event).id,
      });
    }
    const attempts = await koerier.awaitAttempts(subscription.id, 4);
    expect(attempts.map((a) => [a.attempt, a.status, a.outcome])).toEqual([
      [1, 500, 'retrying'],
      [2, 500, 'retrying'],
      [3, 500, 'retrying'],
      [4, 204, 'delivered'],
    ]);
    expect(await koerier.deadLetters(subscription.id)).toEqual([]);
    // Delivered: not sent again.
    await noMoreRequests(receiver, 4, 1500);
    expect(receiver.requests).toHaveLength(4);
  });

  it('WH-2: a 429 waits at least its Retry-After, and slows the subscription down', async () => {
    const receiver = await koerier.receiver(scripts.sequence([{ respond: 429, headers: { 'retry-after': '3' } }]));
    const subscription = await koerier.subscribe(receiver.url);
    const message = await koerier.deliver(subscription.id);
    const requests = await receiver.waitForRequests(2, { timeoutMs: 15_000 });
    expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(3000);
    expect(requests.map((r) => r.headers['idempotency-key'])).toEqual([message.deliveryId, message.deliveryId]);
    const target = await koerier.store.getTarget(subscription.id);
    expect(target.throttle?.ratePerMinute).toBe(60);
    const attempts = await koerier.awaitAttempts(subscription.id, 2);
    expect(attempts[0]).toMatchObject({ status: 429, outcome: 'retrying', error: { code: 'throttled' } });
  });

  it('WH-2: a target that hangs past the response timeout is retried', async () => {
    const receiver = await koerier.receiver(scripts.sequence([{ hang: true }]));
    const subscription = await koerier.subscribe(receiver.url);
    const message = await koerier.deliver(subscription.id);
    const requests = await receiver.waitForRequests(2, { timeoutMs: 15_000 });
    expect(new Set(requests.map((r) => r.headers['idempotency-key']))).toEqual(new Set([message.deliveryId]));
    const attempts = await koerier.awaitAttempts(subscription.id, 2);
    expect(attempts.map((a) => [a.outcome, a.error?.code])).toEqual([
      ['retrying', 'target-unreachable'],
      ['delivered', undefined],
    ]);
    expect(attempts[0]!.latencyMs).toBeGreaterThanOrEqual(700);
  });

  it('WH-2: a connection reset is retried', async () => {
    const receiver = await koerier.receiver(scripts.sequence([{ reset: true }, { reset: true }]));
    const subscription = await koerier.subscribe(receiver.url);
    await koerier.deliver(subscription.id);
    await receiver.waitForRequests(3, { timeoutMs: 15_000 });
    const attempts = await koerier.awaitAttempts(subscription.id, 3);
    expect(attempts.map((a) => [a.outcome, a.error?.code])).toEqual([
      ['retrying', 'target-unreachable'],
      ['retrying', 'target-unreachable'],
      ['delivered', undefined],
    ]);
  });

  it('WH-2: a slow target that answers within the timeout is delivered on the first attempt', async () => {
    const receiver = await koerier.receiver(scripts.always({ respond: 202, delayMs: 300 }));
    const subscription = await koerier.subscribe(receiver.url);
    await koerier.deliver(subscription.id);
    const attempts = await koerier.awaitAttempts(subscription.id, 1);
    expect(attempts[0]).toMatchObject({ attempt: 1, status: 202, outcome: 'delivered' });
    expect(attempts[0]!.latencyMs).toBeGreaterThanOrEqual(300);
    expect(receiver.requests).toHaveLength(1);
  });

  it('EDU-18, EDU-IDEM-13: when the (per-subscription) window has passed the delivery becomes a dead letter with its attempts; a redrive delivers it under a new key', async () => {
    const receiver = await koerier.receiver(scripts.always({ respond: 503 }));
    const subscription = await koerier.subscribe(receiver.url, { retryWindowSeconds: 5 });
    const event = cloudEvent();
    const message = await koerier.deliver(subscription.id, [event]);
    const [deadLetter] = await eventually(
      'the dead letter once the window has passed',
      async () => {
        const list = await koerier.deadLetters(subscription.id);
        return list.length > 0 && list;
      },
      { timeoutMs: 20_000 },
    );
    const attempts = receiver.requests.length;
    // Nominally at 0, 1 and 3 s, and the last one at the end of the 5 s window.
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(attempts).toBeLessThanOrEqual(4);
    expect(deadLetter).toMatchObject({
      deliveryId: message.deliveryId,
      reason: 'exhausted',
      attempts,
      events: [event],
    });
    expect(deadLetter!.lastAttempts.map((a) => a.status)).toEqual(Array(attempts).fill(503));
    expect(receiver.requests.at(-1)!.receivedAt - receiver.requests[0]!.receivedAt).toBeGreaterThanOrEqual(3_000);

    receiver.setScript(scripts.always({ respond: 204 }));
    const response = await koerier.admin.redrive(
      { clientId: 'subscriber', scopes: new Set(['subscriptions:manage']) },
      subscription.id,
      {
        method: 'POST',
        path: `/subscriptions/${subscription.id}/dead-letters/redrive`,
        headers: {},
        query: {},
        routeKey: 'POST /subscriptions/{id}/dead-letters/redrive',
        pathParameters: { id: subscription.id },
        body: Buffer.from(JSON.stringify({ deliveryIds: [message.deliveryId] })),
      },
    );
    expect(response.status).toBe(202);
    const { redriven } = JSON.parse(response.body) as { redriven: { deliveryId: string; newDeliveryId: string }[] };
    expect(redriven).toEqual([{ deliveryId: message.deliveryId, newDeliveryId: expect.any(String) }]);
    const [again] = (await receiver.waitForRequests(attempts + 1)).slice(attempts);
    expect(again!.headers['idempotency-key']).toBe(redriven[0]!.newDeliveryId);
    expect(again!.headers['idempotency-key']).not.toBe(message.deliveryId);
    expect(again!.body).toBe(event);
    expect(await koerier.deadLetters(subscription.id)).toEqual([]);
  });
});
