/**
 * A deployment that also accepts static bearer tokens towards targets
 * (`KOERIER_SINK_CREDENTIALS=bearer-or-oauth2`, e.g. NL GOV subscribers that hand out long-lived
 * tokens). Its own file: the delivery function reads its configuration once per process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { eventually } from '../support/waiting.js';
import { DELIVERY_WAIT, startDeliveryHarness, type DeliveryHarness } from './delivery-harness.js';

let koerier: DeliveryHarness;
beforeAll(async () => {
  koerier = await startDeliveryHarness({ [settingEnv.sinkCredentials]: 'bearer-or-oauth2' });
});
afterAll(async () => {
  await koerier?.stop();
});

describe('static bearer tokens, where the deployment allows them', () => {
  it('WH-3, EDU-IDEM-2: a static bearer credential goes in the Authorization header, with the key and the origin', async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, {
      sinkCredential: { kind: 'bearer', token: 'static-token-1' },
    });
    const message = await koerier.deliver(subscription.id);
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers).toMatchObject({
      authorization: 'Bearer static-token-1',
      'idempotency-key': message.deliveryId,
      'webhook-request-origin': 'koerier.test',
    });
    expect((await koerier.subscriptions.get(subscription.id))!.status).toBe('active');
  });

  it('WH-3: even here a subscription without any credential is suspended (credential-required), never sent to without a token', async () => {
    const receiver = await koerier.receiver();
    const old = await koerier.subscribe(receiver.url, { sinkCredential: null });
    await koerier.deliver(old.id);
    const stored = await eventually(
      'the subscription suspended',
      async () => {
        const current = await koerier.subscriptions.get(old.id);
        return current?.status === 'suspended' && current;
      },
      DELIVERY_WAIT,
    );
    expect(stored.suspendedFor).toBe('credential-required');
    expect(receiver.connectionCount).toBe(0);
  });
});
