/**
 * Review #20: what a caller can make Koerier spend. Requests without a valid token, and clients
 * over their limit, are refused before any DynamoDB or SQS request: counted here with an SDK
 * middleware on the very clients the handlers use, against the emulators.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { containerClients } from '../../functions/composition/aws-dependencies.js';
import { DynamoDbRateWindow } from '../../functions/aws/dynamodb-rate-window.js';
import { resourceNames } from '../support/resource-names.js';
import { PUBLISH_BUCKET_HEADROOM } from '../../functions/app/client-throttling.js';
import { functions, type FunctionName } from '../../functions/config/resources.js';
import { startHandlerHarness, TEST_AUDIENCE, TEST_ISSUER, type HandlerHarness } from '../support/handler-harness.js';
import { countRequests, type RequestCounter } from '../support/request-counter.js';
import { problemTypeUri } from '../support/problem-types.js';

type Handler = (event: never, context: never) => Promise<unknown>;

const PUBLISH_RATE = 5;
const MANAGE_RATE = 3;

// The publish window is the clock minute. Its clock (and that of the container throttle, which
// remembers the window's refusals until the window ends) starts 1 s into a minute, so no test
// straddles a boundary and none waits for one. The handlers build both themselves: the clock is
// handed to the real classes of this file's modules.
const clock = await vi.hoisted(async () => (await import('../support/clocks.js')).clockIntoMinute(1_000));
vi.mock(import('../../functions/aws/dynamodb-rate-window.js'), async (original) =>
  (await import('../support/clocks.js')).rateWindowModuleWithClock(await original(), clock),
);
vi.mock(import('../../functions/core/throttling/client-throttle.js'), async (original) =>
  (await import('../support/clocks.js')).clientThrottleModuleWithClock(await original(), clock),
);

let harness: HandlerHarness;
const handlers = new Map<FunctionName, Handler>();
let dynamodb: RequestCounter;
let sqs: RequestCounter;

beforeAll(async () => {
  harness = await startHandlerHarness({
    KOERIER_PUBLISH_RATE_PER_MINUTE: String(PUBLISH_RATE),
    KOERIER_MANAGE_RATE_PER_MINUTE: String(MANAGE_RATE),
  });
  for (const name of ['ingest', 'subscriptions', 'deliveryAdmin'] as const) {
    handlers.set(
      name,
      ((await import(`../../${functions[name].entry.replace(/\.ts$/, '.js')}`)) as { handler: Handler }).handler,
    );
  }
  dynamodb = countRequests(containerClients().dynamodb);
  sqs = countRequests(containerClients().sqs);
});

afterAll(async () => {
  await harness?.stop();
});

beforeEach(async () => {
  // What an earlier test left in the queue must not count here.
  await harness.drain('inbound');
  dynamodb.reset();
  sqs.reset();
});

/** Every route that needs an access token: all routes of the three API functions but the two answered without one. */
const UNAUTHENTICATED = new Set([
  'OPTIONS /events',
  'GET /subscriptions/{id}/validation',
  'POST /subscriptions/{id}/validation',
]);
const authenticatedRoutes = (['ingest', 'subscriptions', 'deliveryAdmin'] as const).flatMap((name) =>
  functions[name].routes
    .map((route) => ({
      name,
      method: route.method,
      routeKey: `${route.method} ${route.path}`,
      path: route.path.replace('{id}', randomUUID()),
    }))
    .filter((route) => !UNAUTHENTICATED.has(route.routeKey)),
);

function call(
  name: FunctionName,
  request: { method: string; path: string; routeKey: string; authorization?: string; body?: string },
) {
  return harness.invoke(handlers.get(name)!, {
    method: request.method,
    path: request.path,
    routeKey: request.routeKey,
    headers: {
      ...(request.authorization ? { authorization: request.authorization } : {}),
      'idempotency-key': randomUUID(),
      'content-type': request.path === '/events' ? 'application/cloudevents+json' : 'application/json',
    },
    body: request.body ?? (request.method === 'GET' ? '' : '{}'),
  });
}

const event = () =>
  JSON.stringify({
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:00000001823288444000:systeem',
    type: 'nl.edu.leerling.ingeschreven',
  });

async function foreignToken(): Promise<string> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  void exportJWK(publicKey);
  return new SignJWT({ client_id: 'partner-a', scope: 'events:publish subscriptions:manage admin' })
    .setProtectedHeader({ alg: 'ES256', kid: 'test-key', typ: 'at+jwt' })
    .setIssuer(TEST_ISSUER)
    .setAudience(TEST_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(privateKey);
}

describe('review #20: unauthenticated requests never reach DynamoDB or SQS', () => {
  it('review #20: no token, a malformed token, a token signed by another key or a token without the scope: 401/403 and zero DynamoDB and SQS requests, on every authenticated route', async () => {
    expect(authenticatedRoutes.length).toBeGreaterThanOrEqual(11);
    const forged = await foreignToken();
    const noScope = await harness.token('partner-a', 'events:consume');
    const refused: string[] = [];
    for (const route of authenticatedRoutes) {
      for (const authorization of [
        undefined,
        'Bearer not-a-jwt',
        `Bearer ${forged}`,
        `Basic ${Buffer.from('partner-a:secret').toString('base64')}`,
        `Bearer ${noScope}`,
      ]) {
        const response = await call(route.name, { ...route, ...(authorization ? { authorization } : {}) });
        expect([401, 403], `${route.routeKey} with ${authorization?.slice(0, 12)}`).toContain(response.status);
        expect(response.headers['content-type']).toBe('application/problem+json');
        refused.push(`${route.routeKey} ${response.status}`);
      }
    }
    expect(refused).toHaveLength(authenticatedRoutes.length * 5);
    expect({ dynamodb: dynamodb.byOperation, sqs: sqs.byOperation }).toEqual({ dynamodb: {}, sqs: {} });
  });
});

describe('review #20: per-client throttle in front of the expensive work', () => {
  it(`WH-7, EDU-20, review #20: past ${MANAGE_RATE} management requests a client gets 429 problem+json with Retry-After, costing no DynamoDB request; other clients are unaffected`, async () => {
    const token = await harness.token('manager-a', 'subscriptions:manage admin');
    const redrive = (authorization: string) =>
      call('deliveryAdmin', {
        method: 'POST',
        path: '/deliveries/dead-letter-queue/redrive',
        routeKey: 'POST /deliveries/dead-letter-queue/redrive',
        authorization,
      });
    for (let i = 0; i < MANAGE_RATE; i++) expect((await redrive(`Bearer ${token}`)).status).toBe(202);
    expect(dynamodb.total()).toBeGreaterThan(0);
    dynamodb.reset();
    // The subscriptions routes share the client's management bucket with the delivery-admin routes.
    const throttled = await call('subscriptions', {
      method: 'GET',
      path: '/subscriptions',
      routeKey: 'GET /subscriptions',
      authorization: `Bearer ${token}`,
    });
    expect(throttled.status).toBe(429);
    expect(throttled.headers['content-type']).toBe('application/problem+json');
    expect(throttled.json()).toMatchObject({ status: 429, type: problemTypeUri('rate-limited') });
    const retryAfter = Number(throttled.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60 / MANAGE_RATE);
    sqs.reset();
    expect((await redrive(`Bearer ${token}`)).status).toBe(429);
    expect({ dynamodb: dynamodb.total(), sqs: sqs.total() }).toEqual({ dynamodb: 0, sqs: 0 });

    const other = await harness.token('manager-b', 'admin');
    expect((await redrive(`Bearer ${other}`)).status).toBe(202);
  });

  it('review #20: a publisher refused by the shared DynamoDB window is then refused by the container for free until the window ends', async () => {
    const publisher = 'partner-b';
    // Another container has used up partner-b's minute in the shared window.
    const otherContainer = new DynamoDbRateWindow(containerClients().dynamodb, resourceNames.table('idempotency'));
    for (let i = 0; i < PUBLISH_RATE; i++)
      expect((await otherContainer.take(publisher, PUBLISH_RATE)).allowed).toBe(true);
    const token = await harness.token(publisher, 'events:publish');
    const publish = () =>
      call('ingest', {
        method: 'POST',
        path: '/events',
        routeKey: 'POST /events',
        authorization: `Bearer ${token}`,
        body: event(),
      });

    dynamodb.reset();
    const first = await publish();
    expect(first.status).toBe(429);
    // The window was asked: idempotency claim, window, release.
    expect(dynamodb.byOperation['UpdateItemCommand']).toBe(1);
    const windowWait = Number(first.headers['retry-after']);

    dynamodb.reset();
    const second = await publish();
    expect(second.status).toBe(429);
    expect(second.headers['content-type']).toBe('application/problem+json');
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(second.headers['retry-after'])).toBeLessThanOrEqual(windowWait);
    expect({ dynamodb: dynamodb.byOperation, sqs: sqs.byOperation }).toEqual({ dynamodb: {}, sqs: {} });
    expect(await harness.drain('inbound')).toHaveLength(0);
  });

  it(`WH-7, EDU-20, review #20: a publisher gets ${PUBLISH_RATE} events through, the next is refused by the window, and every one after that by the container, without DynamoDB or SQS`, async () => {
    const token = await harness.token('partner-a', 'events:publish');
    const publish = () =>
      call('ingest', {
        method: 'POST',
        path: '/events',
        routeKey: 'POST /events',
        authorization: `Bearer ${token}`,
        body: event(),
      });
    const statuses: number[] = [];
    for (let i = 0; i < PUBLISH_RATE + 1; i++) statuses.push((await publish()).status);
    expect(statuses).toEqual([...Array(PUBLISH_RATE).fill(202), 429]);
    dynamodb.reset();
    sqs.reset();
    for (let i = 0; i < 5; i++) {
      const refused = await publish();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect({ dynamodb: dynamodb.total(), sqs: sqs.total() }).toEqual({ dynamodb: 0, sqs: 0 });
    expect(await harness.drain('inbound')).toHaveLength(PUBLISH_RATE);
  });

  it(`review #20: replays, which the window does not count, are capped by the container's bucket at ${PUBLISH_BUCKET_HEADROOM}x the publish rate`, async () => {
    const token = await harness.token('partner-c', 'events:publish');
    const key = randomUUID();
    const body = JSON.stringify({
      specversion: '1.0',
      id: randomUUID(),
      source: 'urn:nld:oin:00000009999999999000:systeem',
      type: 'nl.edu.leerling.ingeschreven',
    });
    const send = () =>
      harness.invoke(handlers.get('ingest')!, {
        method: 'POST',
        path: '/events',
        routeKey: 'POST /events',
        headers: {
          authorization: `Bearer ${token}`,
          'idempotency-key': key,
          'content-type': 'application/cloudevents+json',
        },
        body,
      });
    const answers: string[] = [];
    for (let i = 0; i < PUBLISH_BUCKET_HEADROOM * PUBLISH_RATE; i++) {
      const response = await send();
      answers.push(`${response.status}${response.headers['idempotent-replayed'] ? ' replayed' : ''}`);
    }
    expect(answers).toEqual(['202', ...Array(PUBLISH_BUCKET_HEADROOM * PUBLISH_RATE - 1).fill('202 replayed')]);
    dynamodb.reset();
    const capped = await send();
    expect(capped.status).toBe(429);
    expect(dynamodb.total()).toBe(0);
    expect(await harness.drain('inbound')).toHaveLength(1);
  });
});
