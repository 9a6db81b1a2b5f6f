/**
 * The receiver kit (receiver/, issue 30 item 6) against the laptop host: a real Koerier with its
 * emulators creates real push subscriptions against a receiver built with the kit under node:http,
 * Express, Fastify and Hono, and delivers to it. Per framework: the validation handshake activates
 * the subscription (WH-4); a delivery with the token from the receiver's authorisation server is
 * handled and one with another client's token refused (WH-3); the RFC 9421 signature verifies and
 * a changed delivery is refused; and a delivery Koerier retries because the answer was lost (same
 * Idempotency-Key) is not handed to the handler again (EDU-IDEM-15).
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { LOCAL_AUDIENCE } from '../../local/host.js';
import { createReceiver, type CloudEvent, type Delivery } from '../../receiver/src/index.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, publishEvents } from '../support/koerier-api.js';
import {
  FRAMEWORKS,
  recordingProxy,
  serveReceiver,
  type Exchange,
  type RecordingProxy,
  type Served,
} from '../support/receiver-kit-servers.js';
import { eventually } from '../support/waiting.js';

vi.setConfig({ testTimeout: 60_000 });

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:ontvanger';
let koerier: TestHost;
let publisher: string;

beforeAll(async () => {
  koerier = await startTestHost({ [settingEnv.deliveryRetryInitialSeconds]: '1' });
  publisher = await koerier.token('dev-publisher', ['events:publish']);
});
afterAll(() => koerier?.stop());

/** Client credentials at the laptop's token endpoint: the receiver's "own" authorisation server here. */
function sinkCredential(clientId: string) {
  return {
    credentialtype: 'CLIENTCREDENTIALS' as const,
    tokenurl: `${koerier.origin}/oauth/token`,
    clientid: clientId,
    clientsecret: koerier.host.localConfig.clients[clientId]!.secret,
  };
}

async function subscribe(sink: string, type: string, clientId = 'dev-subscriber'): Promise<Record<string, unknown>> {
  const { data, response } = await apiAs(koerier.url, await koerier.token('dev-subscriber')).POST('/subscriptions', {
    body: {
      sink,
      types: [type],
      validation: 'handshake',
      sinkcredential: sinkCredential(clientId),
      signdeliveries: true,
    },
  });
  expect(response.status, JSON.stringify(data)).toBe(201);
  return data as Record<string, unknown>;
}

async function publish(type: string, id = randomUUID()): Promise<string> {
  const event = { specversion: '1.0', id, source: SOURCE, type, data: { leerling: 'L-42' } };
  expect((await publishEvents(apiAs(koerier.url, publisher), event)).response.status).toBe(202);
  return id;
}

/** The POSTs that reached the receiver carrying event `id`. */
const postsOf = (proxy: RecordingProxy, id: string): Exchange[] =>
  proxy.exchanges.filter((exchange) => exchange.method === 'POST' && exchange.body.includes(id));

/** Sends `exchange`'s request again to the sink, with `change` applied to its headers and body. */
async function resend(
  sink: string,
  exchange: Exchange,
  change: { headers?: Record<string, string | undefined>; body?: string } = {},
): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries({ ...exchange.headers, ...change.headers }))
    if (value !== undefined && !['host', 'content-length', 'connection'].includes(name)) headers[name] = value;
  const answer = await fetch(sink, {
    method: exchange.method,
    headers,
    body: change.body ?? exchange.body,
  });
  return { status: answer.status, body: await answer.text() };
}

describe.each(FRAMEWORKS)('the receiver kit under %s, against the laptop host (issue 30 item 6)', (framework) => {
  const handled: { events: CloudEvent[]; delivery: Delivery }[] = [];
  let served: Served;
  let proxy: RecordingProxy;
  const type = `nl.example.kit.${framework.replace(/\W/g, '')}.${randomUUID().slice(0, 8)}.v1`;
  const refusedType = `${type}.refused`;
  let sink: string;
  let firstDelivery: Exchange;

  beforeAll(async () => {
    const receiver = createReceiver({
      handshake: { origins: ['koerier.local'], rate: 600 },
      token: {
        jwks: `${koerier.origin}/.well-known/jwks.json`,
        issuer: koerier.origin,
        audience: LOCAL_AUDIENCE,
        clientId: 'dev-subscriber',
      },
      signatures: { koerier: koerier.origin },
      onEvents(events, delivery) {
        handled.push({ events, delivery });
      },
    });
    served = await serveReceiver(framework, receiver);
    proxy = await recordingProxy(served.origin);
    sink = `${proxy.origin}/hook`;
  });
  afterAll(async () => {
    await proxy?.close();
    await served?.close();
  });

  const handledIds = () => handled.flatMap(({ events }) => events.map((event) => event.id));

  it(`issue 30 item 6, WH-4: the kit answers Koerier's validation handshake and the subscription is active (${framework}); another origin is refused`, async () => {
    const created = await subscribe(sink, type);
    expect(created['status']).toBe('active');
    const [handshake] = proxy.exchanges.filter((exchange) => exchange.method === 'OPTIONS');
    expect(handshake!.headers['webhook-request-origin']).toBe('koerier.local');
    expect(handshake!.answer.status).toBe(200);
    expect(handshake!.answer.headers).toMatchObject({
      'webhook-allowed-origin': 'koerier.local',
      'webhook-allowed-rate': '600',
    });

    const stranger = await fetch(sink, { method: 'OPTIONS', headers: { 'webhook-request-origin': 'evil.example' } });
    expect(stranger.status).toBe(403);
    expect(stranger.headers.get('webhook-allowed-origin')).toBeNull();
  });

  it(`issue 30 item 6, WH-3: a delivery with the token of the expected client is handled; one with another client's token, none or a forged one is refused 401 and never handled (${framework})`, async () => {
    const id = await publish(type);
    firstDelivery = await eventually('the delivery answered', () => postsOf(proxy, id)[0], { timeoutMs: 20_000 });
    expect(handledIds()).toEqual([id]);
    expect(firstDelivery.answer.status).toBe(204);
    expect(handled.at(-1)!.delivery).toMatchObject({ mode: 'structured', signed: true });
    expect(handled.at(-1)!.delivery.idempotencyKey).toBe(firstDelivery.headers['idempotency-key']);

    // Koerier itself delivering with a token issued to another client (dev-publisher).
    await subscribe(sink, refusedType, 'dev-publisher');
    const refusedId = await publish(refusedType);
    const refused = await eventually('the refused delivery', () => postsOf(proxy, refusedId)[0], {
      timeoutMs: 20_000,
    });
    expect(refused!.headers['authorization']).toMatch(/^Bearer /);
    expect(refused!.answer.status).toBe(401);
    expect(refused!.answer.headers['www-authenticate']).toBe('Bearer error="invalid_token"');

    // The same delivery without a token, and with one signed by a key the token server does not publish.
    const newKey = { 'idempotency-key': randomUUID() };
    expect((await resend(sink, firstDelivery, { headers: { ...newKey, authorization: undefined } })).status).toBe(401);
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ client_id: 'dev-subscriber' })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(koerier.origin)
      .setAudience(LOCAL_AUDIENCE)
      .setExpirationTime('5m')
      .sign(privateKey);
    expect((await resend(sink, firstDelivery, { headers: { authorization: `Bearer ${forged}` } })).status).toBe(401);
    expect(handledIds()).not.toContain(refusedId);
    expect(handled).toHaveLength(1);
  });

  it(`issue 30 item 6, RFC 9421: Koerier's signed delivery verifies against its published keys; changed, unsigned or with an added ce- header it is refused (${framework})`, async () => {
    expect(firstDelivery.headers['signature-input']).toMatch(/^koerier=\("@method" "@target-uri" "idempotency-key"/);
    // As sent (signature and all): it verifies, and is then a duplicate of what was handled.
    const again = await resend(sink, firstDelivery);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ duplicate: true });

    const changedBody = firstDelivery.body.replace('L-42', 'L-43');
    const changes: Record<string, Parameters<typeof resend>[2]> = {
      'a changed body': { body: changedBody },
      'a changed body with its own digest': {
        body: changedBody,
        headers: {
          'content-digest': `sha-256=:${(await import('node:crypto')).createHash('sha256').update(changedBody).digest('base64')}:`,
        },
      },
      'another Idempotency-Key': { headers: { 'idempotency-key': randomUUID() } },
      'an added ce- header': { headers: { 'ce-subject': 'leerling/L-43', 'idempotency-key': randomUUID() } },
      'no signature': { headers: { signature: undefined, 'signature-input': undefined } },
    };
    for (const [what, change] of Object.entries(changes)) {
      const answer = await resend(sink, firstDelivery, change);
      expect(answer.status, what).toBe(401);
      expect(JSON.parse(answer.body), what).toMatchObject({ type: 'urn:koerier:receiver:invalid-signature' });
    }
    expect(handled).toHaveLength(1);
  });

  it(`issue 30 item 6, EDU-IDEM-15: a delivery Koerier retries after the answer was lost comes with the same Idempotency-Key and is answered 200 without calling the handler again (${framework})`, async () => {
    const id = randomUUID();
    proxy.loseNextAnswerTo(id);
    await publish(type, id);
    const [first, retry] = await eventually(
      () =>
        `Koerier's retry; the POSTs so far: ${JSON.stringify(postsOf(proxy, id).map((post) => post.answer.status))}`,
      () => {
        const posts = postsOf(proxy, id);
        return posts.length >= 2 && posts;
      },
      { timeoutMs: 30_000 },
    );
    expect(first!.lost).toBe(true);
    expect(first!.answer.status).toBe(204);
    expect(retry!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(retry!.answer.status).toBe(200);
    expect(JSON.parse(retry!.answer.body)).toEqual({
      duplicate: true,
      idempotencyKey: first!.headers['idempotency-key'],
    });
    expect(handledIds().filter((handledId) => handledId === id)).toHaveLength(1);
  });
});
