/**
 * EDU-IDEM-1: the idempotency rules hold for synchronous and asynchronous exchanges alike. Koerier
 * is the server of synchronous requests (its guard, `withIdempotency`) and the client of
 * asynchronous deliveries (the key the router fixes, `deliveryIdOf`, sent by `webhookRequest`).
 * Here one guard — the same rules a receiver following the profile applies — meets both sides.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import { webhookRequest } from '../../../functions/core/delivery/webhook-request.js';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import {
  readIdempotencyKey,
  withIdempotency,
  type IdempotencyContext,
} from '../../../functions/core/idempotency/index.js';
import { InMemoryIdempotencyStore } from '../../support/memory/memory-idempotency-store.js';
import { deliveryIdOf } from '../../../functions/core/delivery-message/delivery-rules.js';
import { controlledClock } from './store-contract.js';

const EVENT =
  '{"specversion":"1.0","id":"e-1","source":"urn:nld:oin:00000001234567890000:systeem:test","type":"nl.example.thing.happened.v1","data":{"n":1}}';

function guardedServer(operation: string) {
  const ctx: IdempotencyContext = {
    clientId: 'caller',
    operation,
    store: new InMemoryIdempotencyStore(),
    clock: controlledClock(),
    ttlSeconds: 7 * 24 * 3600,
    lockSeconds: 60,
  };
  let runs = 0;
  const handle = (req: HttpRequest) =>
    withIdempotency(req, ctx, async (): Promise<HttpResponse> => ({
      status: 202,
      headers: { 'content-type': 'application/json' },
      body: `{"run":${++runs}}`,
    }));
  return { handle, runs: () => runs };
}

describe('EDU-IDEM-1: one set of idempotency rules for both kinds of exchange', () => {
  it('EDU-IDEM-1: synchronous — a publisher repeating POST /events with its key has it processed once and gets the first answer again', async () => {
    const ingest = guardedServer('POST /events');
    const key = randomUUID();
    const request: HttpRequest = {
      method: 'POST',
      routeKey: 'POST /events',
      path: '/events',
      headers: { 'content-type': 'application/cloudevents+json', 'idempotency-key': key },
      query: {},
      pathParameters: {},
      body: Buffer.from(EVENT),
    };
    const first = await ingest.handle(request);
    const repeat = await ingest.handle(request);
    expect(ingest.runs()).toBe(1);
    expect(repeat.body).toBe(first.body);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
  });

  it('EDU-IDEM-1: asynchronous — every attempt of a delivery carries one valid UUIDv4 key and the same payload, so a receiver under the same rules processes it once', async () => {
    const subscriptionId = randomUUID();
    const deliveryId = deliveryIdOf(['routing-1'], subscriptionId, [EVENT]);
    // The router may run twice for one event (a retried batch): the key comes out the same.
    expect(deliveryIdOf(['routing-1'], subscriptionId, [EVENT])).toBe(deliveryId);
    const message: DeliveryMessage = { version: 1, deliveryId, subscriptionId, events: [EVENT], createdAt: Date.now() };

    const receiver = guardedServer('POST /hook');
    const answers: HttpResponse[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const sent = webhookRequest({
        message,
        sink: 'https://receiver.example/hook',
        format: 'structured',
        origin: 'koerier.example',
        accessToken: 'token-1',
      });
      expect(readIdempotencyKey(sent.headers)).toBe(deliveryId);
      answers.push(
        await receiver.handle({
          method: 'POST',
          routeKey: 'POST /hook',
          path: '/hook',
          headers: sent.headers,
          query: {},
          pathParameters: {},
          body: sent.body,
        }),
      );
    }
    expect(receiver.runs()).toBe(1);
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    expect(answers.slice(1).map((a) => a.headers['idempotent-replayed'])).toEqual(['true', 'true']);
  });

  it('EDU-IDEM-1: asynchronous — another subscription or other events make another delivery, under another key', () => {
    const subscriptionId = randomUUID();
    const base = deliveryIdOf(['routing-1'], subscriptionId, [EVENT]);
    expect(deliveryIdOf(['routing-1'], randomUUID(), [EVENT])).not.toBe(base);
    expect(deliveryIdOf(['routing-2'], subscriptionId, [EVENT])).not.toBe(base);
  });
});
