/**
 * EDU-IDEM-11 on the laptop host (issue 36, item 3): one delivery key, one body. A subscriber that
 * PATCHes its subscription's `contentmode` or `maxinlinebytes` while a delivery is waiting for its
 * retry must get the retry exactly as the first attempt was: the same Idempotency-Key with the same
 * body and content headers. A receiver keeping Edukoppeling Appendix C answers the same key with
 * another body with 422, which would dead-letter the event. The PATCH applies to deliveries made
 * after it.
 *
 * The receiver answers the first attempt 503 with Retry-After: 7, longer than the delivery
 * function's five-second subscription cache, so the retry reads the PATCHed subscription.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { eventually } from '../support/waiting.js';
import { apiAs, callApi, publishEvents, type KoerierClient } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
  type RecordedRequest,
} from '../support/https-receiver.js';

const authority = createLocalCertificateAuthority();
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:frozen';
let koerier: TestHost;
let publisher: KoerierClient;
let subscriber: string;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  koerier = await startTestHost(
    {
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.deliveryRetryInitialSeconds]: '1',
      [settingEnv.deliveryRetryMaxDelaySeconds]: '2',
      [settingEnv.deliveryRetryWindowSeconds]: '60',
    },
    { trustAuthority: authority },
  );
  publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await koerier?.stop();
});

/**
 * A receiver that keeps Appendix C: the first request 503 (try again in 7 s); afterwards a key it
 * has seen with another body is 422, anything else 204.
 */
async function appendixCReceiver(): Promise<HttpsReceiver> {
  const bodies = new Map<string, string>();
  const first = scripts.sequence([{ respond: 503, headers: { 'retry-after': '7' } }]);
  const receiver = await startHttpsReceiver({
    authority,
    script: (n, request) => {
      const key = request.headers['idempotency-key']!;
      const seen = bodies.get(key);
      bodies.set(key, seen ?? request.body);
      if (seen !== undefined && seen !== request.body) return { respond: 422 };
      return first(n, request);
    },
  });
  receivers.push(receiver);
  return receiver;
}

async function subscribe(
  receiver: HttpsReceiver,
  settings: Record<string, unknown>,
): Promise<{ id: string; type: string }> {
  const type = `nl.example.frozen.${randomUUID().slice(0, 8)}.v1`;
  const { status, body } = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
    ...settings,
  });
  expect(status, JSON.stringify(body)).toBe(201);
  return { id: body['id'] as string, type };
}

async function patch(id: string, changes: Record<string, unknown>): Promise<void> {
  const { status, text } = await callApi(koerier.url, subscriber, 'PATCH', `/subscriptions/${id}`, changes, {
    'content-type': 'application/merge-patch+json',
  });
  expect(status, text).toBe(200);
}

const event = (type: string, data: unknown) => ({ specversion: '1.0', id: randomUUID(), source: SOURCE, type, data });

/** What must not differ between two attempts of one delivery: the key, the body and every content header. */
function rendered(request: RecordedRequest): Record<string, unknown> {
  const content = Object.entries(request.headers).filter(([name]) => name === 'content-type' || name.startsWith('ce-'));
  return { key: request.headers['idempotency-key'], body: request.body, headers: Object.fromEntries(content) };
}

/** The subscription's attempt history, newest first, once it holds `count` attempts: [status, outcome] each. */
function history(id: string, count: number): Promise<[number | undefined, string][]> {
  return eventually(`${count} attempts in the history`, async () => {
    const response = await fetch(`${koerier.url}/subscriptions/${id}/deliveries`, {
      headers: { authorization: `Bearer ${subscriber}` },
    });
    const { attempts } = (await response.json()) as { attempts: { outcome: string; status?: number }[] };
    return attempts.length >= count
      ? attempts.map((attempt): [number | undefined, string] => [attempt.status, attempt.outcome])
      : undefined;
  });
}

describe.concurrent('one delivery key, one body (EDU-IDEM-11; issue 36, item 3)', () => {
  it('EDU-IDEM-11: contentmode PATCHed from structured to binary between a 503 and the retry: the retry has the same key, body and Content-Type; the next event goes binary', async () => {
    const receiver = await appendixCReceiver();
    const { id, type } = await subscribe(receiver, {});
    await publishEvents(publisher, event(type, { hello: 'world' }));
    const [first] = await receiver.waitForRequests(1, { timeoutMs: 15_000 });
    expect(first!.headers['content-type']).toContain('application/cloudevents+json');
    await patch(id, { contentmode: 'binary' });

    const [, retry] = await receiver.waitForRequests(2, { timeoutMs: 30_000 });
    expect(rendered(retry!)).toEqual(rendered(first!));
    expect(await history(id, 2)).toEqual([
      [204, 'delivered'],
      [503, 'retrying'],
    ]);

    // A delivery made after the PATCH follows it.
    await publishEvents(publisher, event(type, { hello: 'again' }));
    const [, , next] = await receiver.waitForRequests(3, { timeoutMs: 15_000 });
    expect(next!.headers['ce-type']).toBe(type);
    expect(next!.body).toBe('{"hello":"again"}');
  });

  it('EDU-IDEM-11, EDU-1: maxinlinebytes PATCHed from 1 MiB to 64 KiB between a 503 and the retry: a 200 KB event sent inline goes inline again under the same key', async () => {
    const receiver = await appendixCReceiver();
    const { id, type } = await subscribe(receiver, { maxinlinebytes: 1024 * 1024 });
    const published = event(type, 'x'.repeat(200_000));
    await publishEvents(publisher, published);
    const [first] = await receiver.waitForRequests(1, { timeoutMs: 15_000 });
    expect(JSON.parse(first!.body)).toEqual(published);
    await patch(id, { maxinlinebytes: 65_536 });

    const [, retry] = await receiver.waitForRequests(2, { timeoutMs: 30_000 });
    expect(rendered(retry!)).toEqual(rendered(first!));
    expect(await history(id, 2)).toEqual([
      [204, 'delivered'],
      [503, 'retrying'],
    ]);

    // The next event follows the PATCH: by reference.
    await publishEvents(publisher, event(type, 'y'.repeat(200_000)));
    const [, , next] = await receiver.waitForRequests(3, { timeoutMs: 15_000 });
    expect(JSON.parse(next!.body)).toHaveProperty('dataref');
  });
});
