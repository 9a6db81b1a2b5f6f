/**
 * Review #20 on the laptop host, over real HTTP: the origin guard that keeps callers from going
 * around CloudFront, the per-client throttle, and that neither a refused caller nor a throttled
 * client costs a DynamoDB or SQS request (counted on the clients the handlers use).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { ORIGIN_VERIFY_HEADER } from '../../functions/app/origin-guard.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { countRequests, type RequestCounter } from '../support/request-counter.js';
import { problemTypeUri } from '../support/problem-types.js';

const ORIGIN_SECRET = `origin-${randomUUID()}`;
const MANAGE_RATE = 4;

let koerier: TestHost;
let dynamodb: RequestCounter;
let sqs: RequestCounter;

beforeAll(async () => {
  // No queue consumers: the router and delivery functions use the same SDK clients, and their
  // requests would be counted against the API's.
  koerier = await startTestHost(
    { [settingEnv.originVerifySecret]: ORIGIN_SECRET, [settingEnv.manageRatePerMinute]: String(MANAGE_RATE) },
    { queueTriggers: false },
  );
  dynamodb = countRequests(koerier.host.awsClients.dynamodb);
  sqs = countRequests(koerier.host.awsClients.sqs);
});
afterAll(async () => {
  await koerier?.stop();
});
beforeEach(() => {
  dynamodb.reset();
  sqs.reset();
});

/** As CloudFront forwards it: with the origin header. */
const viaEdge = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
  fetch(`${koerier.url}${path}`, { ...init, headers: { [ORIGIN_VERIFY_HEADER]: ORIGIN_SECRET, ...init.headers } });

const event = () =>
  JSON.stringify({
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:00000001823288444000:systeem',
    type: 'nl.edu.leerling.ingeschreven',
  });

describe('review #20: the origin guard behind CloudFront', () => {
  it('review #20: a request without the origin header, or with a wrong one, is refused 403 problem+json before any work, on public and protected routes alike', async () => {
    const token = await koerier.token('dev-publisher');
    const publish = {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/cloudevents+json',
        'idempotency-key': randomUUID(),
      },
      body: event(),
    };
    const wrongOrigins: Record<string, string>[] = [
      {},
      { [ORIGIN_VERIFY_HEADER]: 'guess' },
      { [ORIGIN_VERIFY_HEADER]: `${ORIGIN_SECRET}x` },
    ];
    for (const headers of wrongOrigins) {
      const direct = await fetch(`${koerier.url}/events`, { ...publish, headers: { ...publish.headers, ...headers } });
      expect(direct.status).toBe(403);
      expect(direct.headers.get('content-type')).toBe('application/problem+json');
      expect(await direct.json()).toMatchObject({ type: problemTypeUri('edge-bypassed'), status: 403 });
      expect((await fetch(`${koerier.url}/openapi.json`, { headers })).status).toBe(403);
    }
    expect({ dynamodb: dynamodb.total(), sqs: sqs.total() }).toEqual({ dynamodb: 0, sqs: 0 });

    expect((await viaEdge('/openapi.json')).status).toBe(200);
    const accepted = await viaEdge('/events', publish);
    expect(accepted.status).toBe(202);
    // The counters do see the handlers' requests: zero above means none were made.
    expect(dynamodb.total()).toBeGreaterThan(0);
    expect(sqs.total()).toBeGreaterThan(0);
  });
});

describe('review #20: per-client throttle on the laptop host', () => {
  it('review #20: a bad or missing token costs no DynamoDB or SQS request', async () => {
    for (const authorization of [undefined, 'Bearer x.y.z', 'Bearer']) {
      const response = await viaEdge('/subscriptions', { headers: authorization ? { authorization } : {} });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const published = await viaEdge('/events', {
        method: 'POST',
        headers: {
          ...(authorization ? { authorization } : {}),
          'content-type': 'application/cloudevents+json',
          'idempotency-key': randomUUID(),
        },
        body: event(),
      });
      expect(published.status).toBe(401);
    }
    expect({ dynamodb: dynamodb.byOperation, sqs: sqs.byOperation }).toEqual({ dynamodb: {}, sqs: {} });
  });

  it(`WH-7, EDU-20, review #20: past ${MANAGE_RATE} management requests a minute a client gets 429 problem+json with Retry-After, costing no DynamoDB request`, async () => {
    const token = await koerier.token('dev-subscriber');
    const list = () => viaEdge('/subscriptions', { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < MANAGE_RATE; i++) expect((await list()).status).toBe(200);
    dynamodb.reset();
    const throttled = await list();
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('content-type')).toBe('application/problem+json');
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await throttled.json()).toMatchObject({ status: 429, type: problemTypeUri('rate-limited') });
    expect(dynamodb.total()).toBe(0);
    // Publishing is another bucket: the same organisation's publisher is unaffected.
    const publisher = await koerier.token('dev-publisher');
    const published = await viaEdge('/events', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${publisher}`,
        'content-type': 'application/cloudevents+json',
        'idempotency-key': randomUUID(),
      },
      body: event(),
    });
    expect(published.status).toBe(202);
  });
});
