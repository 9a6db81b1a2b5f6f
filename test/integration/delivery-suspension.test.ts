import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../../functions/core/http/messages.js';
import { scripts } from '../support/https-receiver.js';
import { fastSuspension } from '../support/fast-suspension.js';
import { eventually } from '../support/waiting.js';
import { startDeliveryHarness, type DeliveryHarness } from './delivery-harness.js';

let koerier: DeliveryHarness;
beforeAll(async () => {
  koerier = await startDeliveryHarness(fastSuspension());
});
afterAll(async () => {
  await koerier?.stop();
});

const owner = { clientId: 'subscriber', scopes: new Set(['subscriptions:manage']) };
const request = (path: string, body?: unknown): HttpRequest => ({
  method: body === undefined ? 'GET' : 'POST',
  path,
  headers: {},
  query: {},
  routeKey: 'POST /subscriptions',
  pathParameters: {},
  body: Buffer.from(body === undefined ? '' : JSON.stringify(body)),
});

describe('suspension', () => {
  it('EDU-12: a target failing for the whole suspension period is suspended with a reason; what arrives meanwhile is kept; resume sends it all', async () => {
    const receiver = await koerier.receiver(scripts.always({ respond: 500 }));
    const subscription = await koerier.subscribe(receiver.url);
    const first = await koerier.deliver(subscription.id);

    const suspended = await eventually(
      'the subscription suspended',
      async () => {
        const current = await koerier.subscriptions.get(subscription.id);
        return current?.status === 'suspended' && current;
      },
      { timeoutMs: 20_000 },
    );
    expect(suspended.statusReason).toMatch(/No delivery has succeeded since .*the target answered 500.*resume/);
    const failedAttempts = receiver.requests.length;
    expect(failedAttempts).toBeGreaterThanOrEqual(3);

    // Deliveries for a suspended subscription are parked, not sent, not lost.
    const second = await koerier.deliver(subscription.id);
    const parked = await koerier.awaitDeadLetters(subscription.id, 2);
    expect(parked.map((d) => [d.deliveryId, d.reason]).sort()).toEqual(
      [
        [first.deliveryId, 'subscription-suspended'],
        [second.deliveryId, 'subscription-suspended'],
      ].sort(),
    );
    expect(receiver.requests).toHaveLength(failedAttempts);

    const redriveWhileSuspended = await koerier.admin.redrive(
      owner,
      subscription.id,
      request(`/subscriptions/${subscription.id}/dead-letters/redrive`, { all: true }),
    );
    expect(redriveWhileSuspended.status).toBe(409);
    expect(JSON.parse(redriveWhileSuspended.body).detail).toMatch(/Resume it first/);

    const stranger = await koerier.admin.resume(
      { clientId: 'someone-else', scopes: new Set(['subscriptions:manage']) },
      subscription.id,
    );
    expect(stranger.status).toBe(404);

    receiver.setScript(scripts.always({ respond: 204 }));
    const resumed = await koerier.admin.resume(owner, subscription.id);
    expect(resumed.status).toBe(200);
    expect(JSON.parse(resumed.body)).toEqual({ id: subscription.id, status: 'active', redriven: 2 });
    expect((await koerier.subscriptions.get(subscription.id))?.status).toBe('active');

    const delivered = await receiver.waitForRequests(failedAttempts + 2);
    const keys = delivered.slice(failedAttempts).map((r) => r.headers['idempotency-key']);
    expect(keys).not.toContain(first.deliveryId);
    expect(keys).not.toContain(second.deliveryId);
    expect(await koerier.deadLetters(subscription.id)).toEqual([]);
    expect((await koerier.store.getTarget(subscription.id)).failingSince).toBeUndefined();

    const again = await koerier.admin.resume(owner, subscription.id);
    expect(again.status).toBe(409);
  });

  it('EDU-18: an admin client may list and redrive dead letters of any subscription; another subscriber may not', async () => {
    const receiver = await koerier.receiver(scripts.always({ respond: 400 }));
    const subscription = await koerier.subscribe(receiver.url);
    const message = await koerier.deliver(subscription.id);
    await koerier.awaitDeadLetters(subscription.id);

    const path = `/subscriptions/${subscription.id}/dead-letters`;
    const other = await koerier.admin.listDeadLetters(
      { clientId: 'someone-else', scopes: new Set(['subscriptions:manage']) },
      subscription.id,
      request(path),
    );
    expect(other.status).toBe(404);
    const admin = { clientId: 'operator', scopes: new Set(['subscriptions:manage', 'admin']) };
    const listed = await koerier.admin.listDeadLetters(admin, subscription.id, request(path));
    expect(listed.status).toBe(200);
    const body = JSON.parse(listed.body) as { deadLetters: Record<string, unknown>[] };
    expect(body.deadLetters).toEqual([
      expect.objectContaining({
        deliveryId: message.deliveryId,
        reason: 'rejected',
        attempts: 1,
        events: [expect.objectContaining({ id: expect.any(String), type: 'nl.example.delivery.tested.v1' })],
      }),
    ]);
    expect(JSON.stringify(body)).not.toContain('"data"');

    receiver.setScript(scripts.always({ respond: 204 }));
    const redriven = await koerier.admin.redrive(
      admin,
      subscription.id,
      request(`${path}/redrive`, { deliveryIds: [message.deliveryId, 'no-such-delivery'] }),
    );
    expect(redriven.status).toBe(202);
    expect(JSON.parse(redriven.body)).toMatchObject({
      redriven: [{ deliveryId: message.deliveryId }],
      notFound: ['no-such-delivery'],
      more: false,
    });
    await receiver.waitForRequests(2);

    const history = await koerier.admin.listAttempts(
      owner,
      subscription.id,
      request(`/subscriptions/${subscription.id}/deliveries`),
    );
    const attempts = (JSON.parse(history.body) as { attempts: { status: number; outcome: string }[] }).attempts;
    expect(attempts.map((a) => [a.status, a.outcome])).toEqual([
      [204, 'delivered'],
      [400, 'dead-lettered'],
    ]);
  });
});
