import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { functions, resourceEnv } from '../../functions/config/resources.js';
import { createKoerierClient } from '../../client/koerier-client.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, KoerierProblem, publishEvents, type KoerierClient } from '../support/koerier-api.js';
import { eventually } from '../support/waiting.js';

const EVENT = {
  specversion: '1.0',
  id: 'host-e2e-1',
  source: 'urn:nld:oin:00000001234567890000',
  type: 'nl.example.host.test.v1',
  data: { hello: 'laptop' },
};

describe('laptop host: the real handlers behind the API Gateway emulation', () => {
  let koerier: TestHost;

  beforeAll(async () => {
    koerier = await startTestHost({ [settingEnv.publishRatePerMinute]: '1234' });
  });
  afterAll(async () => {
    await koerier?.stop();
  });

  /** The refusal of a publication, which must be refused; no retries, so the status is the one answered. */
  const refusalOf = async (client: KoerierClient) => {
    const refusal = await publishEvents(client, EVENT).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(KoerierProblem);
    return refusal as KoerierProblem;
  };

  it('GET /health answers 200 when DynamoDB, SQS and S3 all answer', async () => {
    const response = await fetch(`${koerier.origin}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', parts: { dynamodb: 'ok', sqs: 'ok', s3: 'ok' } });
  });

  it('GET /openapi.json is served without authentication, naming the host and its token endpoint', async () => {
    const response = await fetch(`${koerier.url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { openapi: string; servers: { url: string }[] };
    expect(document.openapi).toMatch(/^3\./);
    expect(document.servers).toEqual([expect.objectContaining({ url: koerier.url })]);
    expect(koerier.url).toBe(`${koerier.origin}/v1`);
    expect(JSON.stringify(document)).toContain(`"${koerier.origin}/oauth/token"`);
  });

  it('CARD-3: unmatched requests reach the default-route function and come back as 404 and 405 problems', async () => {
    const notFound = await fetch(`${koerier.url}/no/such/thing`);
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('content-type')).toBe('application/problem+json');
    expect(await notFound.json()).toMatchObject({ status: 404, title: 'Not Found' });

    const wrongMethod = await fetch(`${koerier.url}/events`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('POST');
    expect(await wrongMethod.json()).toMatchObject({ status: 405 });

    // ADR uri-version: the API lives under its major version only; the same path without it is nothing.
    const unversioned = await fetch(`${koerier.origin}/events`);
    expect(unversioned.status).toBe(404);
    expect(unversioned.headers.get('content-type')).toBe('application/problem+json');
  });

  it('CARD-3, EDU-19: an event published with a token from /oauth/token gets 202 and reaches the inbound queue', async () => {
    const { response } = await publishEvents(
      apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish'])),
      EVENT,
    );
    expect(response.status).toBe(202);

    // Whatever functions/config/resources.ts triggers from the inbound queue takes the message through the
    // host's event-source poller; without such a function the message waits in the queue.
    const consumer = Object.entries(functions).find(
      ([, spec]) => 'queueTrigger' in spec && spec.queueTrigger.queue === 'inbound',
    )?.[0];
    if (consumer) {
      const pollerSawIt = () =>
        koerier.logs
          .map((line) => JSON.parse(line))
          .some((entry) => entry.function === consumer && entry.queue === 'koerier-inbound' && entry.received >= 1);
      expect(await eventually(`the poller of ${consumer} to receive the event`, pollerSawIt, { intervalMs: 50 })).toBe(
        true,
      );
    } else {
      const sqs = new SQSClient({}); // from the environment the host set, as the handlers are
      try {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: process.env[resourceEnv.queueUrl('inbound')],
            MaxNumberOfMessages: 10,
          }),
        );
        expect(
          (received.Messages ?? []).map((message) => (JSON.parse(message.Body ?? '{}') as { id?: string }).id),
        ).toContain(EVENT.id);
      } finally {
        sqs.destroy();
      }
    }
  });

  it('EDU-2: the ingest refuses a request without a token (401) and a token without the scope (403)', async () => {
    const anonymous = await refusalOf(createKoerierClient({ baseUrl: koerier.url, retries: 0 }));
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer /);

    const consumerToken = await koerier.host.issueToken('partner-without-publish', ['events:consume']);
    const consumerOnly = await refusalOf(apiAs(koerier.url, consumerToken, { retries: 0 }));
    expect(consumerOnly.status).toBe(403);
  });

  it('EDU-4: the JWKS at /.well-known/jwks.json verifies tokens from /oauth/token, issued by the host', async () => {
    const token = await koerier.token('dev-subscriber');
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${koerier.origin}/.well-known/jwks.json`)), {
      issuer: koerier.origin,
      audience: 'koerier',
      typ: 'at+jwt',
    });
    expect(payload).toMatchObject({ client_id: 'dev-subscriber', sub: 'dev-subscriber' });
    expect(String(payload['scope']).split(' ').sort()).toEqual([
      'admin',
      'contracts:read',
      'contracts:write',
      'events:consume',
      'events:publish',
      'subscriptions:manage',
      'subscriptions:read',
    ]);
  });

  it('gives the handlers the laptop settings, with the test’s overrides on top', () => {
    const { environment, config } = koerier.host;
    expect(environment[settingEnv.issuer]).toBe(koerier.origin);
    expect(environment[settingEnv.jwksUrl]).toBe(`${koerier.origin}/.well-known/jwks.json`);
    expect(environment[settingEnv.audience]).toBe('koerier');
    expect(environment[settingEnv.allowLoopbackSinks]).toBe('true');
    expect(environment[settingEnv.webhookOrigin]).toBe('koerier.local');
    expect(environment[settingEnv.publicBaseUrl]).toBe(koerier.url);
    expect(JSON.parse(environment[settingEnv.entitlements] ?? '')).toEqual({ 'dev-subscriber': [{ typePrefix: '' }] });
    expect(environment[settingEnv.publishRatePerMinute]).toBe('1234');
    expect(environment['AWS_ENDPOINT_URL_SQS']).toBe(koerier.host.emulators.endpoints.sqs);
    expect(environment[resourceEnv.key('credentials')]).toBe('local:credentials');
    // …and the functions run with the configuration loaded from exactly those settings.
    expect(config).toMatchObject({
      auth: { issuer: koerier.origin, audience: 'koerier' },
      allowLoopbackSinks: true,
      webhookOrigin: 'koerier.local',
      publicBaseUrl: koerier.url,
      publishRatePerMinute: 1234,
    });
    expect(config.resources.key('credentials')).toBe('local:credentials');
  });

  it('logs one JSON line per request', () => {
    const requests = koerier.logs.map((line) => JSON.parse(line)).filter((entry) => entry.message === 'request');
    expect(requests).toContainEqual(
      expect.objectContaining({ method: 'POST', path: '/v1/events', status: 202, routeKey: 'POST /v1/events' }),
    );
    expect(requests).toContainEqual(expect.objectContaining({ method: 'GET', path: '/health', status: 200 }));
    expect(koerier.logs.join('\n')).not.toContain('Bearer ');
  });

  it('GET /health answers 503 and names the parts that are down', async () => {
    await koerier.host.emulators.stop();
    const response = await fetch(`${koerier.origin}/health`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      status: 'unavailable',
      parts: { dynamodb: 'down', sqs: 'down', s3: 'down' },
    });
  });
});
