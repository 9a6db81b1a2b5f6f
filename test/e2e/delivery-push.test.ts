/**
 * Push delivery end to end on the laptop host: events published over HTTP at POST /events,
 * routed, and delivered over HTTPS (a local certificate authority) to receivers scripted to fail
 * in every way the webhook spec names; subscriptions, dead letters, redrive and attempt history
 * through the HTTP API.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { apiAs, callApi, publishEvent, type ApiAnswer, type KoerierClient } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
  type ReceiverScript,
  type RecordedRequest,
} from '../support/https-receiver.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let dir: string;
let publisher: KoerierClient;
/** What each test publishes, under a type of its own. */
const EXAMPLE = { source: 'urn:nld:oin:00000001234567890000:systeem:e2e', data: { hello: 'world' } };
let subscriber: string;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-push-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
    [settingEnv.deliveryRetryInitialSeconds]: '1',
    [settingEnv.deliveryRetryMaxDelaySeconds]: '2',
    [settingEnv.deliveryRetryWindowSeconds]: '30',
    [settingEnv.deliveryConnectTimeoutMs]: '500',
    [settingEnv.deliveryResponseTimeoutMs]: '1000',
  });
  publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  return callApi(koerier.url, subscriber, method, path, body);
}

/** A receiver and a push subscription to it for events of a type of its own. */
async function pushTarget(script: ReceiverScript): Promise<{ receiver: HttpsReceiver; type: string; id: string }> {
  const receiver = await startHttpsReceiver({ authority, script });
  receivers.push(receiver);
  const type = `nl.example.push.${randomUUID().slice(0, 8)}.v1`;
  const created = await api('POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
  });
  expect(created.status).toBe(201);
  expect(created.body['status']).toBe('active');
  return { receiver, type, id: created.body['id'] as string };
}

/** Every request a receiver got is a CloudEvent the official SDK reads, and it is the one published. */
function expectDeliveriesOf(event: string, requests: readonly RecordedRequest[]): void {
  const key = requests[0]!.headers['idempotency-key'];
  expect(key).toMatch(UUID_V4);
  for (const request of requests) {
    expect(request.headers['idempotency-key']).toBe(key);
    expect(request.headers['webhook-request-origin']).toBe('koerier.local');
    // WH-3: every delivery carries the token from the subscriber's own token endpoint.
    expect(request.headers['authorization']).toMatch(/^Bearer [A-Za-z0-9_-]{20,}$/);
    expect(request.body).toBe(event);
    expect(HTTP.toEvent({ headers: request.headers, body: request.body })).toMatchObject({
      id: JSON.parse(event).id,
      data: { hello: 'world' },
    });
  }
}

const gaps = (requests: readonly RecordedRequest[]) =>
  requests.slice(1).map((r, i) => r.receivedAt - requests[i]!.receivedAt);

describe.concurrent('push delivery on the laptop host', () => {
  it('WH-1, WH-2, EDU-IDEM-9: 500 three times, then 204: four attempts on the schedule, one key, the history through the API', async () => {
    const { receiver, type, id } = await pushTarget(scripts.failThenSucceed(3, 500));
    const event = await publishEvent(publisher, { ...EXAMPLE, type });
    const requests = await receiver.waitForRequests(4, { timeoutMs: 20_000 });
    expectDeliveriesOf(event, requests);
    gaps(requests).forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual([800, 1600, 1600][i]!));
    const history = await eventually('four attempts in the history', async () => {
      const list = await api('GET', `/subscriptions/${id}/deliveries`);
      return (list.body['attempts'] as unknown[]).length === 4 ? list : undefined;
    });
    expect(
      (history.body['attempts'] as { attempt: number; status: number; outcome: string }[]).map((a) => [
        a.attempt,
        a.status,
        a.outcome,
      ]),
    ).toEqual([
      [4, 204, 'delivered'],
      [3, 500, 'retrying'],
      [2, 500, 'retrying'],
      [1, 500, 'retrying'],
    ]);
  });

  it('WH-2: 429 with Retry-After: the next attempt waits at least that long', async () => {
    const { receiver, type } = await pushTarget(scripts.sequence([{ respond: 429, headers: { 'retry-after': '2' } }]));
    const event = await publishEvent(publisher, { ...EXAMPLE, type });
    const requests = await receiver.waitForRequests(2, { timeoutMs: 15_000 });
    expectDeliveriesOf(event, requests);
    expect(gaps(requests)[0]).toBeGreaterThanOrEqual(2000);
  });

  it('WH-2: 410 retires the subscription, visibly; later events no longer go to it', async () => {
    const { receiver, type, id } = await pushTarget(scripts.always({ respond: 410 }));
    await publishEvent(publisher, { ...EXAMPLE, type });
    await receiver.waitForRequests(1);
    const retired = await eventually('the subscription retired', async () => {
      const current = await api('GET', `/subscriptions/${id}`);
      return current.body['status'] === 'retired' ? current : undefined;
    });
    expect(retired.body['statusreason']).toMatch(/410/);
    // The dispatcher retires the subscription before it writes the dead letter: wait for that write too.
    const deadLetters = await eventually('the dead letter', async () => {
      const listed = (await api('GET', `/subscriptions/${id}/dead-letters`)).body['deadLetters'] as unknown[];
      return listed.length > 0 ? listed : undefined;
    });
    expect(deadLetters).toEqual([expect.objectContaining({ reason: 'gone', attempts: 1 })]);

    // A witness subscribed to the same type: once it has the next event, the router is done with it.
    const witness = await startHttpsReceiver({ authority });
    receivers.push(witness);
    expect(
      (
        await api('POST', '/subscriptions', {
          sink: witness.url,
          types: [type],
          validation: 'agreed',
          sinkcredential: witness.sinkCredential,
        })
      ).status,
    ).toBe(201);
    const later = await publishEvent(publisher, { ...EXAMPLE, type });
    const [seen] = await witness.waitForRequests(1);
    expect(seen!.body).toBe(later);
    expect(receiver.requests).toHaveLength(1);
  });

  it('WH-2, EDU-18: 415 is dead-lettered at once; the subscriber lists it and redrives it, and it arrives under a new key', async () => {
    const { receiver, type, id } = await pushTarget(scripts.always({ respond: 415 }));
    const event = await publishEvent(publisher, { ...EXAMPLE, type });
    const [refused] = await receiver.waitForRequests(1);
    const listed = await eventually('the dead letter listed', async () => {
      const list = await api('GET', `/subscriptions/${id}/dead-letters`);
      return (list.body['deadLetters'] as unknown[]).length > 0 ? list : undefined;
    });
    const [deadLetter] = listed.body['deadLetters'] as {
      deliveryId: string;
      reason: string;
      attempts: number;
      events: { id: string }[];
    }[];
    expect(deadLetter).toMatchObject({
      reason: 'unsupported-media-type',
      attempts: 1,
      events: [{ id: JSON.parse(event).id }],
    });
    expect(deadLetter!.deliveryId).toBe(refused!.headers['idempotency-key']);

    receiver.setScript(scripts.always({ respond: 202 }));
    const redrive = await api('POST', `/subscriptions/${id}/dead-letters/redrive`, { all: true });
    expect(redrive.status).toBe(202);
    const [, again] = await receiver.waitForRequests(2);
    expect(again!.body).toBe(event);
    expect(again!.headers['idempotency-key']).toMatch(UUID_V4);
    expect(again!.headers['idempotency-key']).not.toBe(deadLetter!.deliveryId);
    expect((await api('GET', `/subscriptions/${id}/dead-letters`)).body['deadLetters']).toEqual([]);
  });

  it('WH-2: a target that hangs past the timeout is tried again', async () => {
    const { receiver, type } = await pushTarget(scripts.sequence([{ hang: true }]));
    const event = await publishEvent(publisher, { ...EXAMPLE, type });
    const requests = await receiver.waitForRequests(2, { timeoutMs: 15_000 });
    expectDeliveriesOf(event, requests);
    expect(gaps(requests)[0]).toBeGreaterThanOrEqual(1000);
  });

  it('WH-2: a reset connection is tried again', async () => {
    const { receiver, type } = await pushTarget(scripts.sequence([{ reset: true }]));
    const event = await publishEvent(publisher, { ...EXAMPLE, type });
    expectDeliveriesOf(event, await receiver.waitForRequests(2, { timeoutMs: 15_000 }));
  });

  it("WH-3, EDU-4: on the laptop host its own development token endpoint can be the subscriber's OAuth2 server", async () => {
    const receiver = await startHttpsReceiver({ authority });
    receivers.push(receiver);
    const type = `nl.example.push.${randomUUID().slice(0, 8)}.v1`;
    const sinkcredential = {
      credentialtype: 'CLIENTCREDENTIALS',
      tokenurl: `${koerier.origin}/oauth/token`,
      clientid: 'dev-subscriber',
      clientsecret: koerier.host.localConfig.clients['dev-subscriber']!.secret,
    };
    expect(
      (await api('POST', '/subscriptions', { sink: receiver.url, types: [type], validation: 'agreed', sinkcredential }))
        .status,
    ).toBe(201);
    const event = await publishEvent(publisher, { ...EXAMPLE, type });
    const [request] = await receiver.waitForRequests(1);
    expect(request!.body).toBe(event);
    // A JWT from the host's token endpoint.
    expect(request!.headers['authorization']).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(receiver.tokenRequests).toHaveLength(0);
  });

  it('EDU-5, WH-2: a slow target within the timeout gets the event once, sent by the host that took the publish', async () => {
    const { receiver, type, id } = await pushTarget(scripts.always({ respond: 204, delayMs: 400 }));
    const event = await publishEvent(publisher, { ...EXAMPLE, type });
    expectDeliveriesOf(event, await receiver.waitForRequests(1));
    const history = await eventually('the attempt in the history', async () => {
      const list = await api('GET', `/subscriptions/${id}/deliveries`);
      return (list.body['attempts'] as unknown[]).length > 0 ? list : undefined;
    });
    expect(history.body['attempts']).toEqual([
      expect.objectContaining({ attempt: 1, status: 204, outcome: 'delivered', latencyMs: expect.any(Number) }),
    ]);
    expect((history.body['attempts'] as { latencyMs: number }[])[0]!.latencyMs).toBeGreaterThanOrEqual(400);
    await staysQuiet(
      'second delivery',
      () => receiver.requests.length > 1 && `${receiver.requests.length} requests`,
      1000,
    );
    expect(receiver.requests).toHaveLength(1);
  });
});
