/**
 * Review #11, last gap: the 202 answer of the ingest names the accepted events, and a batch of
 * 1,000 events with long sources and ids once made it larger than DynamoDB's 400 KB item, so the
 * idempotency completion failed and a retry was processed again instead of replayed. The 202 is
 * bounded like the problems are; here, against the real DynamoDB idempotency store on dynalite
 * (which enforces the 400 KB item limit as DynamoDB does), the largest 202 is stored and replayed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectFitsOneIdempotencyItem } from '../support/idempotency-item.js';
import {
  acceptedAnswer,
  MAX_ACCEPTED_ANSWER_BYTES,
  type AcceptedAnswer,
} from '../../functions/core/http/accepted-answer.js';
import { jsonResponse } from '../../functions/core/http/messages.js';
import { startHandlerHarness, type HandlerHarness } from '../support/handler-harness.js';
import { eventually } from '../support/waiting.js';

let harness: HandlerHarness;
let handler: (event: never, context: never) => Promise<unknown>;

beforeAll(async () => {
  harness = await startHandlerHarness();
  ({ handler } = (await import('../../functions/handlers/ingest.js')) as { handler: typeof handler });
});

afterAll(async () => {
  await harness?.stop();
});

async function post(body: string, key: string) {
  return harness.invoke(handler, {
    method: 'POST',
    path: '/events',
    routeKey: 'POST /events',
    headers: {
      authorization: `Bearer ${await harness.token('partner-a', 'events:publish')}`,
      'idempotency-key': key,
      'content-type': 'application/cloudevents-batch+json',
    },
    body,
  });
}

/** How many messages were taken from the inbound queue once `expected` came (an empty receive may come early). */
async function drainAll(expected: number): Promise<number> {
  let count = 0;
  return eventually(
    () => `${expected} messages on the inbound queue (${count} came)`,
    async () => {
      count += (await harness.drain('inbound')).length;
      return count >= expected && count;
    },
  );
}

describe('review #11: the 202 of the ingest fits the idempotency item', () => {
  it(
    'review #11: 1,000 events with 4 KB sources, ids that escape to twice their size and a warning each: a bounded 202, stored and replayed byte for byte',
    { timeout: 120_000 },
    async () => {
      const run = randomUUID();
      // Each {source, id} takes about 8 KB in the answer: 1,000 of them would be 8 MB.
      const members = Array.from({ length: 1000 }, (_, i) => ({
        specversion: '1.0',
        id: `${'"\\'.repeat(1000)}-${run}-${i}`,
        source: `/scholen/${'s'.repeat(4000)}`,
        type: 'nl.example.leerling.v1',
        // An extension name longer than 20 characters is a SHOULD-level finding: one warning per name.
        [`${'a'.repeat(40)}${i}`]: 1,
      }));
      const body = JSON.stringify(members);
      const key = randomUUID();

      const first = await post(body, key);
      expect(first.status).toBe(202);
      expect(Buffer.byteLength(first.body)).toBeLessThanOrEqual(MAX_ACCEPTED_ANSWER_BYTES);
      const answer = first.json() as AcceptedAnswer;
      expect(answer.acceptedCount).toBe(1000);
      expect(answer.accepted.length).toBeGreaterThan(10);
      expect(answer.accepted.length + answer.acceptedNotListed!).toBe(1000);
      expect(answer.accepted).toEqual(
        members.slice(0, answer.accepted.length).map(({ source, id }) => ({ source, id })),
      );
      expect(answer.warnings!.length).toBeGreaterThan(10);
      expect(answer.warningsNotListed).toBeGreaterThan(0);
      expect(await drainAll(1000)).toBe(1000);

      const replay = await post(body, key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.status).toBe(202);
      expect(replay.body).toBe(first.body);
      // A replay stores nothing again.
      expect(await harness.drain('inbound')).toHaveLength(0);
    },
  );

  it('review #11: the largest possible 202 body fits one idempotency item, with a long client id, and comes back byte for byte', async () => {
    // Every string as long and as costly to escape as possible; more events and warnings than any request may hold.
    const worst = '"\\\u0001'.repeat(40_000) + '😀'.repeat(20_000);
    // Entries small enough that many are listed, each escaping to far more bytes than it has characters.
    const costly = '"\\\u0001'.repeat(300) + '😀'.repeat(300);
    const events = Array.from({ length: 1000 }, (_, i) => ({ source: costly, id: `${costly}${i}` }));
    const warnings = Array.from({ length: 10_000 }, (_, index) => ({
      attribute: worst,
      rule: worst,
      requirement: worst,
      message: worst,
      index,
    }));
    const response = jsonResponse(202, acceptedAnswer(events, warnings));
    expect(Buffer.byteLength(response.body)).toBeLessThanOrEqual(MAX_ACCEPTED_ANSWER_BYTES);
    expect(Buffer.byteLength(response.body)).toBeGreaterThan(MAX_ACCEPTED_ANSWER_BYTES - 64 * 1024);

    expect(response.status).toBe(202);
    await expectFitsOneIdempotencyItem(response);
  });
});
