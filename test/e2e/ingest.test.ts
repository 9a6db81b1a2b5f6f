/**
 * The ingest end to end on the laptop host: real HTTP, real tokens from /oauth/token, the real
 * handler, the emulated SQS queue. The inbound queue's consumer is switched off so each test can
 * read exactly what the ingest stored.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import { CloudEvent, emitterFor, HTTP, Mode, type Message as CloudEventsMessage } from 'cloudevents';
import { importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceEnv } from '../../functions/config/resources.js';
import {
  conformanceAvailable,
  conformanceCases,
  conformanceRoot,
  koerierExpects,
} from '../support/conformance-cases.js';
import { startTestHost, type TestHost } from '../support/host.js';

let koerier: TestHost;
let sqs: SQSClient;
let inboundUrl: string;
let token: string;

const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';

beforeAll(async () => {
  koerier = await startTestHost({}, { queueTriggers: false });
  sqs = new SQSClient({});
  inboundUrl = koerier.host.emulators.resourceEnvironment[resourceEnv.queueUrl('inbound')]!;
  token = await koerier.token('dev-publisher', ['events:publish']);
});

afterAll(async () => {
  sqs?.destroy();
  await koerier?.stop();
});

async function drainInbound(): Promise<Message[]> {
  const messages: Message[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: inboundUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
      }),
    );
    if (Messages.length === 0) return messages;
    messages.push(...Messages);
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: inboundUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
}

function postEvents(headers: Record<string, string>, body: string | Buffer, bearer = token) {
  return fetch(`${koerier.url}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'idempotency-key': randomUUID(), ...headers },
    body,
  });
}

/** A transport for the official SDK's emitter that adds what Koerier requires of every call. */
function koerierTransport(responses: number[]) {
  return async (message: CloudEventsMessage) => {
    const response = await postEvents(message.headers as Record<string, string>, message.body as string);
    responses.push(response.status);
    return response;
  };
}

describe('publishing with the official cloudevents SDK', () => {
  const sdkEvent = () =>
    new CloudEvent({
      id: randomUUID(),
      source: SOURCE,
      type: 'nl.edu.leerling.ingeschreven',
      subject: 'leerling-42',
      time: '2026-11-22T09:00:00.000Z',
      datacontenttype: 'application/json',
      data: { leerling: 'L-42', klas: '3b' },
      nlschoolbrin: '12AB',
    });

  it('EDU-15, HTTP-1, CE-13: emitterFor in structured mode — stored in SQS unchanged', async () => {
    const statuses: number[] = [];
    const event = sdkEvent();
    await emitterFor(koerierTransport(statuses), { mode: Mode.STRUCTURED })(event);
    expect(statuses).toEqual([202]);
    const [message, ...rest] = await drainInbound();
    expect(rest).toHaveLength(0);
    expect(JSON.parse(message!.Body!)).toEqual(JSON.parse(HTTP.structured(event).body as string));
    expect(message!.MessageAttributes?.['koerier-publisher']?.StringValue).toBe('dev-publisher');
  });

  it('HTTP-2, CE-13: emitterFor in binary mode — stored with every attribute, extension and the data unchanged', async () => {
    const statuses: number[] = [];
    const event = sdkEvent();
    await emitterFor(koerierTransport(statuses), { mode: Mode.BINARY })(event);
    expect(statuses).toEqual([202]);
    const [message] = await drainInbound();
    const stored = HTTP.toEvent({
      headers: { 'content-type': 'application/cloudevents+json' },
      body: message!.Body!,
    }) as CloudEvent;
    expect(stored.toJSON()).toEqual(event.toJSON());
  });

  it('HTTP-1, HTTP-2: HTTP.structured and HTTP.binary messages posted directly are accepted and stored once each', async () => {
    for (const message of [HTTP.structured(sdkEvent()), HTTP.binary(sdkEvent())]) {
      expect((await postEvents(message.headers as Record<string, string>, message.body as string)).status).toBe(202);
    }
    expect(await drainInbound()).toHaveLength(2);
  });
});

const replayedCases = conformanceCases.map((c) => [c.id, c] as const);

describe.skipIf(!conformanceAvailable)('the public CloudEvents conformance cases, over HTTP', () => {
  it.each(replayedCases)('HTTP-1, HTTP-2, HTTP-3: %s gets the outcome Koerier expects', async (_id, c) => {
    const response = await postEvents({ ...c.request.headers }, c.request.body);
    const expected = koerierExpects(c);
    expect(response.status, await response.clone().text()).toBe(expected === 'accept' ? 202 : 400);
    const stored = await drainInbound();
    expect(stored).toHaveLength(expected === 'accept' ? (c.expectedEventCount ?? 1) : 0);
  });
});
if (!conformanceAvailable) {
  console.warn(
    `CloudEvents conformance data not found at ${conformanceRoot}: the over-HTTP conformance replay is skipped (../shared/testdata is absent).`,
  );
}

describe('token failures over HTTP (EDU-2, EDU-4)', () => {
  let signingKey: CryptoKey;
  let kid: string;

  beforeAll(async () => {
    // The host's own development key, so every other check is what fails.
    const jwk = JSON.parse(
      await readFile(join(koerier.host.configFile, '..', 'state', 'dev-signing-key.json'), 'utf8'),
    ) as JWK;
    signingKey = (await importJWK(jwk, 'ES256')) as CryptoKey;
    kid = ((await (await fetch(`${koerier.origin}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] })
      .keys[0]!.kid;
  });

  const now = () => Math.floor(Date.now() / 1000);
  function forge(claims: { iss?: string; aud?: string; exp?: number; scope?: string } = {}) {
    return new SignJWT({ client_id: 'dev-publisher', scope: claims.scope ?? 'events:publish' })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuer(claims.iss ?? koerier.origin)
      .setAudience(claims.aud ?? 'koerier')
      .setIssuedAt(now() - 10)
      .setExpirationTime(claims.exp ?? now() + 300)
      .sign(signingKey);
  }

  async function expectRefused(bearer: string | undefined, status: 401 | 403, errorCode: string) {
    const headers: Record<string, string> = {
      'content-type': 'application/cloudevents+json',
      'idempotency-key': randomUUID(),
    };
    if (bearer !== undefined) headers['authorization'] = `Bearer ${bearer}`;
    const response = await fetch(`${koerier.url}/events`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        specversion: '1.0',
        id: randomUUID(),
        source: SOURCE,
        type: 'nl.edu.leerling.ingeschreven',
      }),
    });
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('www-authenticate')).toContain(`error="${errorCode}"`);
    expect(await drainInbound()).toHaveLength(0);
  }

  it('EDU-4: a host-signed token passes (the forging is sound)', async () => {
    const response = await postEvents(
      { 'content-type': 'application/cloudevents+json' },
      JSON.stringify({ specversion: '1.0', id: randomUUID(), source: SOURCE, type: 'nl.edu.x' }),
      await forge(),
    );
    expect(response.status).toBe(202);
    await drainInbound();
  });

  it('EDU-4: no token → 401 invalid_token', () => expectRefused(undefined, 401, 'invalid_token'));
  it('EDU-4: an expired token → 401 invalid_token', async () =>
    expectRefused(await forge({ exp: now() - 120 }), 401, 'invalid_token'));
  it('EDU-4: a token for another audience → 401 invalid_token', async () =>
    expectRefused(await forge({ aud: 'another-api' }), 401, 'invalid_token'));
  it('EDU-4: a token from another issuer → 401 invalid_token', async () =>
    expectRefused(await forge({ iss: 'https://issuer.elsewhere' }), 401, 'invalid_token'));
  it('EDU-4: an unsigned token (alg: none) → 401 invalid_token', async () => {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    await expectRefused(
      `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode({ iss: koerier.url, aud: 'koerier', client_id: 'dev-publisher', scope: 'events:publish', exp: now() + 300 })}.`,
      401,
      'invalid_token',
    );
  });
  it('EDU-4: a tampered token → 401 invalid_token', async () => {
    const [header, payload, signature] = (await forge()).split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
    const tampered = Buffer.from(JSON.stringify({ ...claims, client_id: 'someone-else' })).toString('base64url');
    await expectRefused(`${header}.${tampered}.${signature}`, 401, 'invalid_token');
  });
  it('EDU-4: a valid token without events:publish → 403 insufficient_scope', async () =>
    expectRefused(await koerier.token('dev-publisher', ['events:consume']), 403, 'insufficient_scope'));
});

describe('the rest of the HTTP surface', () => {
  it('CARD-3: GET /openapi.json needs no token and describes POST /events with its problem responses', async () => {
    const response = await fetch(`${koerier.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths['/events']!.post!.responses)).toEqual(
      expect.arrayContaining(['202', '400', '401', '403', '409', '413', '415', '422']),
    );
  });

  it('CARD-3: an unknown path gets a 404 problem, a wrong method a 405 problem with Allow', async () => {
    const missing = await fetch(`${koerier.url}/nowhere`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
    const wrongMethod = await fetch(`${koerier.url}/events`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('POST');
  });

  it('WH-7: OPTIONS /events answers the validation handshake', async () => {
    const response = await fetch(`${koerier.url}/events`, {
      method: 'OPTIONS',
      headers: { 'webhook-request-origin': 'partner.example' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('webhook-allowed-origin')).toBe('partner.example');
    expect(response.headers.get('webhook-allowed-rate')).toMatch(/^\d+$/);
  });

  it('EDU-19: a repeat with the same Idempotency-Key over HTTP gets the same 202 and stores no second event', async () => {
    const key = randomUUID();
    const body = JSON.stringify({
      specversion: '1.0',
      id: randomUUID(),
      source: SOURCE,
      type: 'nl.edu.leerling.ingeschreven',
    });
    const headers = { 'content-type': 'application/cloudevents+json', 'idempotency-key': key };
    const first = await postEvents(headers, body);
    const second = await postEvents(headers, body);
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(await second.text()).toBe(await first.text());
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await drainInbound()).toHaveLength(1);
  });
});

describe('hostile input over HTTP (review #3, #5, #7, #11)', () => {
  /** node:http sends header values as Latin-1 bytes, so a raw non-ASCII byte reaches the host as it would from any client. */
  function rawPost(
    headers: Record<string, string>,
    body: string,
  ): Promise<{ status: number; contentType: string | undefined; text: string }> {
    return new Promise((resolve, reject) => {
      const call = httpRequest(
        `${koerier.url}/events`,
        { method: 'POST', headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), ...headers } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              contentType: response.headers['content-type'],
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
        },
      );
      call.on('error', reject);
      call.end(body);
    });
  }

  it('review #3: a 5 MB structured event with data_base64 gets a 413 problem, not a 500', async () => {
    const event = {
      specversion: '1.0',
      id: randomUUID(),
      source: SOURCE,
      type: 'nl.edu.x',
      datacontenttype: 'application/octet-stream',
      data_base64: Buffer.alloc(3_750_000, 1).toString('base64'),
    };
    const response = await postEvents({ 'content-type': 'application/cloudevents+json' }, JSON.stringify(event));
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await drainInbound()).toHaveLength(0);
  });

  it('HTTP-2, review #5: a raw non-ASCII byte in a ce- header gets a 400 problem', async () => {
    const response = await rawPost(
      {
        'content-type': 'application/json',
        'ce-specversion': '1.0',
        'ce-id': randomUUID(),
        'ce-source': SOURCE,
        'ce-type': 'nl.edu.x',
        'ce-subject': 'caf\u00e9',
      },
      '{}',
    );
    expect(response.status).toBe(400);
    expect(response.contentType).toBe('application/problem+json');
    expect(response.text).toContain('header-characters');
    expect(await drainInbound()).toHaveLength(0);
  });

  it('HTTP-1, review #7: a structured event naming source twice gets a 400 problem', async () => {
    const body = `{"specversion":"1.0","id":"${randomUUID()}","type":"nl.edu.x","source":"${SOURCE}","source":"urn:nld:oin:00000009999999999000:systeem:x"}`;
    const response = await postEvents({ 'content-type': 'application/cloudevents+json' }, body);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('duplicate-member');
    expect(await drainInbound()).toHaveLength(0);
  });

  it('review #11: a 400 KB batch of zeros and a batch of 1,000 zeros get small problem answers', async () => {
    const big = await postEvents(
      { 'content-type': 'application/cloudevents-batch+json' },
      `[${Array.from({ length: 200_000 }, () => '0').join(',')}]`,
    );
    expect(big.status).toBe(413);
    expect((await big.text()).length).toBeLessThan(2048);
    const many = await postEvents(
      { 'content-type': 'application/cloudevents-batch+json' },
      `[${Array.from({ length: 1000 }, () => '0').join(',')}]`,
    );
    expect(many.status).toBe(400);
    expect((await many.text()).length).toBeLessThanOrEqual(64 * 1024);
  });
});
