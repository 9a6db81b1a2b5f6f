/**
 * The two rules about a delivery's shape that routing writes and delivery (and a replay, a split, a
 * redrive) must read alike (issue 29, item 3): whether a subscription takes several events in one
 * delivery, and which Idempotency-Key each kind of delivery carries.
 */
import { createHash, randomUUID } from 'node:crypto';
import { uuidFromHash } from '../ids/stable-uuid.js';
import type { Subscription } from '../subscriptions/subscription.js';

/**
 * A batch goes only to a subscription that asked for batch mode and whose target declared, in the
 * validation handshake, that it takes batches (EDU-11, JSON-3); anything else gets one event per delivery.
 */
export function takesBatches(subscription: Pick<Subscription, 'contentMode' | 'batchSupported'>): boolean {
  return subscription.contentMode === 'batch' && subscription.batchSupported;
}

/**
 * The key of a routed delivery: derived from the events' routing ids (fixed when each was first
 * claimed), the subscription and the event texts, so a retry of the same routing of the same
 * payload for the same subscription always gets the same key, and a different payload never does
 * (EDU-IDEM-9, EDU-IDEM-11).
 */
export function deliveryIdOf(routingIds: readonly string[], subscriptionId: string, events: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([[...routingIds].sort(), subscriptionId]));
  for (const event of events) hash.update('\n').update(event);
  return uuidFromHash(hash);
}

/** A split's child: from the parent's key and the event's place in it, so a split done again makes no new operation (EDU-IDEM-11). */
export function splitDeliveryId(
  parent: { readonly deliveryId: string; readonly subscriptionId: string },
  index: number,
  event: string,
): string {
  return deliveryIdOf([parent.deliveryId], parent.subscriptionId, [`split#${index}`, event]);
}

/** A replayed event: a new operation (EDU-IDEM-13), the same key however often its chunk is queued. */
export function replayDeliveryId(replayId: string, event: { readonly source: string; readonly id: string }): string {
  return uuidFromHash(createHash('sha256').update(JSON.stringify(['replay', replayId, event.source, event.id])));
}

/** A redriven dead letter: a new operation with a new key (EDU-IDEM-13, redrive.ts says why). */
export function redriveDeliveryId(): string {
  return randomUUID();
}
