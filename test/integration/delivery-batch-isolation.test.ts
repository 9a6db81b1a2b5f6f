/**
 * Issue 8, item 1, for the delivery consumer as it runs (the real handler, dynalite, HTTPS
 * receivers): in one SQS batch, a message that is not a delivery, a delivery for a subscription
 * that no longer exists, and deliveries to two working subscriptions. Only the unreadable message
 * is reported failed; every delivery is settled on its own.
 */
import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeDeliveryMessage, type DeliveryMessage } from '../../functions/core/delivery-message/delivery-message.js';
import { cloudEvent, startDeliveryHarness, type DeliveryHarness } from './delivery-harness.js';

let koerier: DeliveryHarness;
beforeAll(async () => {
  koerier = await startDeliveryHarness();
});
afterAll(async () => {
  await koerier?.stop();
});

function record(messageId: string, body: string): SQSEvent['Records'][number] {
  return {
    messageId,
    receiptHandle: `receipt-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: '1' },
  } as unknown as SQSEvent['Records'][number];
}

function delivery(subscriptionId: string): DeliveryMessage {
  return { version: 1, deliveryId: randomUUID(), subscriptionId, events: [cloudEvent()], createdAt: Date.now() };
}

describe('delivery consumer: per-record outcomes', () => {
  it('review #1: in one batch, only the record that is not a delivery fails; deliveries to two subscriptions and to a deleted one are each settled', async () => {
    const [receiverA, receiverB] = [await koerier.receiver(), await koerier.receiver()];
    const a = await koerier.subscribe(receiverA.url, { sinkCredential: receiverA.clientCredentials });
    const b = await koerier.subscribe(receiverB.url, { sinkCredential: receiverB.clientCredentials });
    const toA = [delivery(a.id), delivery(a.id)];
    const toB = delivery(b.id);
    const toDeleted = delivery(randomUUID());
    const { handler } = await import('../../functions/handlers/delivery.js');
    const event: SQSEvent = {
      Records: [
        record('a-1', encodeDeliveryMessage(toA[0]!)),
        record('garbage', '{"not":"a delivery"}'),
        record('b-1', encodeDeliveryMessage(toB)),
        record('deleted', encodeDeliveryMessage(toDeleted)),
        record('a-2', encodeDeliveryMessage(toA[1]!)),
      ],
    };
    const response = await handler(event, { getRemainingTimeInMillis: () => 60_000 });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'garbage' }]);
    expect((await receiverA.waitForRequests(2)).map((r) => r.headers['idempotency-key']).sort()).toEqual(
      toA.map((d) => d.deliveryId).sort(),
    );
    expect(
      (await receiverB.waitForRequests(1)).map((r) => [r.headers['idempotency-key'], r.headers['authorization']]),
    ).toEqual([[toB.deliveryId, `Bearer ${receiverB.accessToken}`]]);
  });
});
