import { randomUUID } from 'node:crypto';
import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { scripts } from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';
import {
  cloudEvent,
  DELIVERY_WAIT,
  noMoreRequests,
  startDeliveryHarness,
  type DeliveryHarness,
} from './delivery-harness.js';

let koerier: DeliveryHarness;
beforeAll(async () => {
  koerier = await startDeliveryHarness({
    [settingEnv.deliveryRetryInitialSeconds]: '1',
    [settingEnv.deliveryRetryMaxDelaySeconds]: '1',
    [settingEnv.deliveryRetryWindowSeconds]: '30',
  });
});
afterAll(async () => {
  await koerier?.stop();
});

const principal = { clientId: 'subscriber', scopes: new Set(['subscriptions:manage']) };
const post = (path: string, body: unknown) => ({
  method: 'POST',
  path,
  headers: {},
  query: {},
  routeKey: 'POST /subscriptions',
  pathParameters: {},
  body: Buffer.from(JSON.stringify(body)),
});
/** Longer than the first retry (1 s here) takes to come round the queue: had it been retried, it would show. */
const RETRY_WOULD_SHOW_MS = 1500;

describe.concurrent('what a delivery answer does', () => {
  it('WH-2: 410 Gone retires the subscription; later deliveries are kept as dead letters and never sent', async () => {
    const receiver = await koerier.receiver(scripts.always({ respond: 410 }));
    const subscription = await koerier.subscribe(receiver.url);
    const first = await koerier.deliver(subscription.id);
    const [gone] = await koerier.awaitDeadLetters(subscription.id);
    expect(gone).toMatchObject({ deliveryId: first.deliveryId, reason: 'gone', attempts: 1 });
    // The dead letter is written first, the retired status right after it (subscription-dispatch.ts).
    const retired = await eventually('the subscription retired', async () => {
      const current = await koerier.subscriptions.get(subscription.id);
      return current?.status === 'retired' ? current : undefined;
    });
    expect(retired).toMatchObject({ status: 'retired', statusReason: expect.stringContaining('410') });

    const second = await koerier.deliver(subscription.id);
    const list = await koerier.awaitDeadLetters(subscription.id, 2);
    expect(list.find((d) => d.deliveryId === second.deliveryId)).toMatchObject({
      reason: 'subscription-retired',
      attempts: 0,
    });
    expect(receiver.requests).toHaveLength(1);
  });

  it('WH-2, EDU-18: 415 is not retried but kept with its reason; once the target is fixed a redrive delivers it under a new key', async () => {
    const receiver = await koerier.receiver(scripts.always({ respond: 415 }));
    const subscription = await koerier.subscribe(receiver.url);
    const event = cloudEvent();
    const message = await koerier.deliver(subscription.id, [event]);
    const [deadLetter] = await koerier.awaitDeadLetters(subscription.id);
    expect(deadLetter).toMatchObject({
      reason: 'unsupported-media-type',
      attempts: 1,
      lastAttempts: [{ status: 415, outcome: 'dead-lettered' }],
    });
    await noMoreRequests(receiver, 1, RETRY_WOULD_SHOW_MS);
    expect(receiver.requests).toHaveLength(1);

    receiver.setScript(scripts.always({ respond: 201 }));
    const response = await koerier.admin.redrive(
      principal,
      subscription.id,
      post(`/subscriptions/${subscription.id}/dead-letters/redrive`, { all: true }),
    );
    expect(response.status).toBe(202);
    const [, again] = await receiver.waitForRequests(2);
    expect(again!.body).toBe(event);
    expect(again!.headers['idempotency-key']).not.toBe(message.deliveryId);
    expect(again!.headers['idempotency-key']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it.each([400, 403, 422])('WH-2: %i is permanent: one attempt, then a dead letter', async (status) => {
    const receiver = await koerier.receiver(scripts.always({ respond: status }));
    const subscription = await koerier.subscribe(receiver.url);
    await koerier.deliver(subscription.id);
    const [deadLetter] = await koerier.awaitDeadLetters(subscription.id);
    expect(deadLetter).toMatchObject({ reason: 'rejected', attempts: 1, lastAttempts: [{ status }] });
    await noMoreRequests(receiver, 1, RETRY_WOULD_SHOW_MS);
    expect(receiver.requests).toHaveLength(1);
  });

  it.each([
    'https://169.254.169.254/latest/meta-data/',
    'https://10.0.0.1/hook',
    'https://[fd00::1]/hook',
    'https://100.64.0.1/hook',
    'https://[::ffff:192.168.1.1]/hook',
  ])(
    'SSRF, CE-16: a sink at %s is never contacted; the delivery is a dead letter that does not name the address',
    async (sink) => {
      const subscription = await koerier.subscribe(sink);
      await koerier.deliver(subscription.id);
      const [deadLetter] = await koerier.awaitDeadLetters(subscription.id);
      expect(deadLetter).toMatchObject({
        reason: 'target-unreachable',
        attempts: 1,
        detail: 'the target could not be reached',
      });
      expect(deadLetter!.lastAttempts[0]!.error).toEqual({
        code: 'target-unreachable',
        detail: 'the target could not be reached',
      });
      expect(JSON.stringify(deadLetter)).not.toContain(new URL(sink).hostname.replace(/^\[|\]$/g, ''));
    },
  );

  it('review #8: an event whose datacontenttype cannot be a header is a dead letter (not-sendable) without a connection, and the target stays healthy', async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, { contentMode: 'binary' });
    // Published straight onto the deliveries path: the ingest refuses such an event (review #8).
    const bad = cloudEvent(undefined, { datacontenttype: 'text/plain; charset="\u20ac"' });
    await koerier.deliver(subscription.id, [bad]);
    const [deadLetter] = await koerier.awaitDeadLetters(subscription.id);
    expect(deadLetter).toMatchObject({
      reason: 'not-sendable',
      attempts: 0,
      lastAttempts: [],
      detail: expect.stringContaining('the target is not at fault'),
    });
    expect(receiver.connectionCount).toBe(0);
    expect(await koerier.store.getTarget(subscription.id)).toMatchObject({ consecutiveFailures: 0 });
    expect((await koerier.subscriptions.get(subscription.id))!.status).toBe('active');
    // The next, sendable event goes out as usual.
    await koerier.deliver(subscription.id);
    await receiver.waitForRequests(1);
  });

  it('SSRF: a redirect, here to the metadata service, is not followed', async () => {
    const receiver = await koerier.receiver(
      scripts.always({ respond: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } }),
    );
    const subscription = await koerier.subscribe(receiver.url);
    await koerier.deliver(subscription.id);
    const [deadLetter] = await koerier.awaitDeadLetters(subscription.id);
    expect(deadLetter).toMatchObject({ reason: 'redirect', attempts: 1 });
    expect(deadLetter!.detail).toContain('169.254.169.254');
  });
});

describe.concurrent('what may be delivered at all', () => {
  it('EDU-IDEM-12: a delivery whose Idempotency-Key has outlived its lifetime is never sent again', async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url);
    await koerier.deliver(subscription.id, undefined, { createdAt: Date.now() - 8 * 24 * 3600_000 });
    const [deadLetter] = await koerier.awaitDeadLetters(subscription.id);
    expect(deadLetter).toMatchObject({
      reason: 'exhausted',
      detail: expect.stringContaining('Idempotency-Key lifetime'),
    });
    expect(receiver.requests).toHaveLength(0);
  });

  it('a subscription that is not active gets nothing; the delivery is kept', async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, { status: 'pending' });
    await koerier.deliver(subscription.id);
    const [deadLetter] = await koerier.awaitDeadLetters(subscription.id);
    expect(deadLetter).toMatchObject({ reason: 'subscription-not-active' });
    expect(receiver.requests).toHaveLength(0);
  });

  it('a delivery for a deleted subscription goes nowhere', async () => {
    const subscriptionId = randomUUID();
    await koerier.deliver(subscriptionId);
    await eventually(
      'the log line that the subscription no longer exists',
      () =>
        koerier.logs.some((line) => line.includes('subscription no longer exists') && line.includes(subscriptionId)),
      DELIVERY_WAIT,
    );
    expect(await koerier.deadLetters(subscriptionId)).toEqual([]);
  });
});

describe.concurrent('content modes and credentials', () => {
  it('EDU-11: a batch subscription whose target takes batches gets one application/cloudevents-batch+json request', async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, { contentMode: 'batch', batchSupported: true });
    const events = [cloudEvent(), cloudEvent(), cloudEvent()];
    const message = await koerier.deliver(subscription.id, events);
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers['content-type']).toBe('application/cloudevents-batch+json; charset=utf-8');
    expect(request!.headers['idempotency-key']).toBe(message.deliveryId);
    expect(request!.body).toBe(`[${events.join(',')}]`);
    const parsed = HTTP.toEvent({ headers: request!.headers, body: request!.body });
    expect(Array.isArray(parsed) && parsed.map((e) => e.id)).toEqual(events.map((e) => JSON.parse(e).id));
  });

  it('JSON-3: a target that does not take batches gets each event on its own, structured, under its own key', async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, { contentMode: 'batch', batchSupported: false });
    const events = [cloudEvent(), cloudEvent(), cloudEvent()];
    const message = await koerier.deliver(subscription.id, events);
    const requests = await receiver.waitForRequests(3);
    expect(requests.map((r) => r.headers['content-type'])).toEqual(
      Array(3).fill('application/cloudevents+json; charset=utf-8'),
    );
    expect(requests.map((r) => r.body).sort()).toEqual([...events].sort());
    const keys = new Set(requests.map((r) => r.headers['idempotency-key']));
    expect(keys.size).toBe(3);
    expect(keys.has(message.deliveryId)).toBe(false);
  });

  it('HTTP-4: binary mode sends the attributes as ce- headers', async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, { contentMode: 'binary' });
    const event = cloudEvent();
    await koerier.deliver(subscription.id, [event]);
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers).toMatchObject({
      'ce-id': JSON.parse(event).id,
      'ce-specversion': '1.0',
      'content-type': 'application/json',
    });
    expect(HTTP.toEvent({ headers: request!.headers, body: request!.body })).toMatchObject({
      id: JSON.parse(event).id,
      data: JSON.parse(event).data,
    });
  });

  it("WH-3, EDU-IDEM-2: every delivery carries the access token from the subscriber's token endpoint, with the key and the origin", async () => {
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, { sinkCredential: receiver.clientCredentials });
    const message = await koerier.deliver(subscription.id);
    const [request] = await receiver.waitForRequests(1);
    expect(request!.headers).toMatchObject({
      authorization: `Bearer ${receiver.accessToken}`,
      'idempotency-key': message.deliveryId,
      'webhook-request-origin': 'koerier.test',
    });
    expect(request!.path).toBe('/hook');
  });

  it('WH-3, EDU-4: OAuth2 client credentials: one token for many deliveries, a new one when the target refuses it', async () => {
    const tokens = await koerier.receiver((n) => ({
      respond: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: `tok-${n}`, token_type: 'Bearer', expires_in: 3600 }),
    }));
    const receiver = await koerier.receiver();
    const subscription = await koerier.subscribe(receiver.url, {
      sinkCredential: {
        kind: 'oauth2-client-credentials',
        tokenUrl: tokens.url,
        clientId: 'koerier client',
        clientSecret: 's3cr:t',
        scope: 'events:receive',
      },
    });
    await koerier.deliver(subscription.id);
    await koerier.deliver(subscription.id);
    await koerier.deliver(subscription.id);
    const delivered = await receiver.waitForRequests(3);
    expect(delivered.map((r) => r.headers['authorization'])).toEqual(Array(3).fill('Bearer tok-1'));
    expect(tokens.requests).toHaveLength(1);
    expect(tokens.requests[0]!.headers['authorization']).toBe(
      `Basic ${Buffer.from('koerier%20client:s3cr%3At').toString('base64')}`,
    );
    expect(Object.fromEntries(new URLSearchParams(tokens.requests[0]!.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'events:receive',
    });

    receiver.setScript((n) => (n === 4 ? { respond: 401 } : { respond: 204 }));
    await koerier.deliver(subscription.id);
    const [refused, accepted] = (await receiver.waitForRequests(5)).slice(3);
    expect(refused!.headers['authorization']).toBe('Bearer tok-1');
    expect(accepted!.headers['authorization']).toBe('Bearer tok-2');
    expect(refused!.headers['idempotency-key']).toBe(accepted!.headers['idempotency-key']);
  });
});
