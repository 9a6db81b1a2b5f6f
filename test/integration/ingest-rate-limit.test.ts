/** The ingest's rate limit per publisher (WH-7, EDU-20), with a limit of 3 requests a minute. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHandlerHarness, type HandlerHarness } from '../support/handler-harness.js';

// The window is the clock minute. Its clock (and that of the container throttle, which remembers
// the window's refusals until the window ends) starts 1 s into a minute, so neither test straddles
// a boundary and none waits for one. The handlers build both themselves: the clock is handed to
// the real classes of this file's modules.
const clock = await vi.hoisted(async () => (await import('../support/clocks.js')).clockIntoMinute(1_000));
vi.mock(import('../../functions/aws/dynamodb-rate-window.js'), async (original) =>
  (await import('../support/clocks.js')).rateWindowModuleWithClock(await original(), clock),
);
vi.mock(import('../../functions/core/throttling/client-throttle.js'), async (original) =>
  (await import('../support/clocks.js')).clientThrottleModuleWithClock(await original(), clock),
);

let harness: HandlerHarness;
let handler: (event: never, context: never) => Promise<unknown>;

beforeAll(async () => {
  harness = await startHandlerHarness({ KOERIER_PUBLISH_RATE_PER_MINUTE: '3' });
  ({ handler } = (await import('../../functions/handlers/ingest.js')) as { handler: typeof handler });
});

afterAll(async () => {
  await harness?.stop();
});

// Each partner under its own organisation (handler harness grants).
const SOURCE_A = 'urn:nld:oin:00000001823288444000:systeem:lvs';
const SOURCE_B = 'urn:nld:oin:00000002222222222000:systeem:lvs';
const newEvent = (source = SOURCE_A) =>
  JSON.stringify({ specversion: '1.0', id: randomUUID(), source, type: 'nl.edu.leerling.ingeschreven' });

async function publish(token: string, key = randomUUID(), body = newEvent()) {
  return harness.invoke(handler, {
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
}

describe('rate limit per publisher', () => {
  it('WH-7, EDU-20: past the allowed rate a publisher gets 429 with Retry-After, and other publishers are unaffected', async () => {
    const a = await harness.token('partner-a', 'events:publish');
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await publish(a)).status);
    expect(statuses).toEqual([202, 202, 202, 429]);
    const limited = await publish(a);
    expect(limited.headers['content-type']).toBe('application/problem+json');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(
      (await publish(await harness.token('partner-b', 'events:publish'), randomUUID(), newEvent(SOURCE_B))).status,
    ).toBe(202);
    expect(await harness.drain('inbound')).toHaveLength(4);
  });

  it('WH-7: a replay does not count against the rate, and a 429 leaves the key free for the retry', async () => {
    const b = await harness.token('partner-b', 'events:publish');
    const key = randomUUID();
    // partner-b used 1 of 3 above; the first request with this key takes the 2nd, its replays none.
    const body = newEvent(SOURCE_B);
    expect((await publish(b, key, body)).status).toBe(202);
    expect((await publish(b, key, body)).headers['idempotent-replayed']).toBe('true');
    expect((await publish(b, randomUUID(), newEvent(SOURCE_B))).status).toBe(202);
    const refusedKey = randomUUID();
    expect((await publish(b, refusedKey, newEvent(SOURCE_B))).status).toBe(429);
    expect((await publish(b, refusedKey, newEvent(SOURCE_B))).status).toBe(429);
  });
});
