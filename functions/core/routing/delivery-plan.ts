/**
 * The router's plan for one batch (route-events.ts): which deliveries its claimed events make. One
 * delivery per (event, subscription); a subscription that takes batches gets its events of the
 * batch together, cut to the largest message; an ordered subscription's event goes alone, marked
 * with its key and acceptance position for its lane (docs/ORDERING.md); a match the subscriber may
 * no longer receive, or an abonnement's filters on kenmerken turn away, makes none.
 */
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { EventText } from '../cloudevents/event-text.js';
import { encodeDeliveryMessage, type DeliveryMessage } from '../delivery-message/delivery-message.js';
import { deliveryIdOf, takesBatches } from '../delivery-message/delivery-rules.js';
import type { OutboxAddress } from '../delivery-message/outbox.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import { orderingKeyOf } from '../ordering/ordering-settings.js';
import { kenmerkenPass, mayReceiveMatched } from './may-receive.js';
import type { RouteCandidate } from './matcher.js';
import type { RoutedTo } from './routed-events.js';

/** What a plan reads of an inbound record. */
export interface PlannedRecord {
  readonly recordId: string;
  readonly acceptedPosition?: number | undefined;
  readonly correlationId?: string | undefined;
}

/** An event the router claimed, with the id its delivery keys derive from. */
export interface PlannedEvent {
  readonly record: PlannedRecord;
  readonly event: EventText;
  readonly routingId: string;
}

export interface PlannedDelivery {
  readonly subscription: OutboxAddress;
  readonly message: DeliveryMessage;
  /** The records whose events it carries: they fail together if it cannot be queued. */
  readonly recordIds: readonly string[];
}

export interface PlanDependencies {
  /** The owners' entitlements as the partner directory has them now: `mayReceive` checks each match (EDU-7). */
  readonly entitlements: Entitlements;
  readonly now: Clock;
  /** Largest delivery message body; a batch delivery is cut before it exceeds this. */
  readonly maxMessageBytes: number;
  readonly log?: Log;
}

/**
 * One delivery per (event, subscription); batch-taking subscriptions get the events grouped. A
 * pull subscription gets one message per event in its own queue, with the same stable key
 * (`deliveryIdOf`) a push delivery of the event would carry (EDU-IDEM-2).
 */
export function planDeliveries(
  claimed: readonly PlannedEvent[],
  matches: readonly RouteCandidate[][],
  deps: PlanDependencies,
  routes: Map<string, RoutedTo>,
): PlannedDelivery[] {
  const createdAt = deps.now();
  const planned: PlannedDelivery[] = [];
  const batches = new Map<string, { address: OutboxAddress; entries: PlannedEvent[] }>();
  claimed.forEach((entry, index) => {
    const candidates = matches[index]!.filter((candidate) => {
      // An abonnement's filters on kenmerken (docs/ZGW.md): a miss is no match, not a withholding.
      if (!kenmerkenPass(candidate.match, entry.event)) return false;
      const verdict = mayReceiveMatched(candidate, entry.event, deps.entitlements);
      if (verdict === 'receives') return true;
      deps.log?.info('delivery withheld: the subscriber is no longer entitled', {
        subscriptionId: candidate.subscriptionId,
        owner: candidate.owner,
        type: entry.event.type,
        id: entry.event.id,
        reason: verdict,
        ...correlationOf(entry.record),
      });
      return false;
    });
    routes.set(entry.record.recordId, {
      routedAt: createdAt,
      subscriptionIds: candidates.map((candidate) => candidate.subscriptionId),
    });
    for (const candidate of candidates) {
      const address = { id: candidate.subscriptionId, delivery: candidate.delivery };
      // A pull subscription gets one message per event; a push one its events together if it takes batches.
      const key = candidate.ordering && orderingKeyOf(entry.event.attributes, candidate.ordering);
      if (key !== undefined) {
        // Ordered (issue 33): one event per delivery, marked for its key's lane (core/delivery-message/ordered-outbox.ts).
        const { subscription, message, recordIds } = delivery(address, [entry], createdAt);
        const { acceptedPosition: position } = entry.record;
        const ordering = position === undefined ? { key } : { key, position };
        planned.push({ subscription, message: { ...message, ordering }, recordIds });
      } else if (candidate.delivery === 'push' && takesBatches(candidate)) {
        const group = batches.get(candidate.subscriptionId) ?? { address, entries: [] };
        group.entries.push(entry);
        batches.set(candidate.subscriptionId, group);
      } else {
        planned.push(delivery(address, [entry], createdAt));
      }
    }
    deps.log?.info('event routed', {
      source: entry.event.source,
      id: entry.event.id,
      type: entry.event.type,
      subscriptions: candidates.length,
      ...correlationOf(entry.record),
    });
  });
  for (const { address, entries } of batches.values()) {
    for (const chunk of chunksWithin(entries, address, deps.maxMessageBytes))
      planned.push(delivery(address, chunk, createdAt));
  }
  return planned;
}

function delivery(subscription: OutboxAddress, entries: readonly PlannedEvent[], createdAt: number): PlannedDelivery {
  const subscriptionId = subscription.id;
  const events = entries.map((entry) => entry.event.json);
  const message: DeliveryMessage = {
    version: 1,
    deliveryId: deliveryIdOf(
      entries.map((entry) => entry.routingId),
      subscriptionId,
      events,
    ),
    subscriptionId,
    events,
    createdAt,
    // A batch delivery carries its first event's; each event's own is on its `event routed` line.
    ...correlationOf(entries[0]?.record),
  };
  return { subscription, message, recordIds: entries.map((entry) => entry.record.recordId) };
}

/** Consecutive runs of the group whose delivery message stays within `maxBytes` (at least one event each). */
function chunksWithin(group: readonly PlannedEvent[], subscription: OutboxAddress, maxBytes: number): PlannedEvent[][] {
  // The message without events, then each event as spliced in (its own JSON text) plus a comma.
  const envelope = Buffer.byteLength(encodeDeliveryMessage(delivery(subscription, [], 0).message));
  const chunks: PlannedEvent[][] = [];
  let chunk: PlannedEvent[] = [];
  let bytes = envelope;
  for (const entry of group) {
    const size = entry.event.bytes + 1;
    if (chunk.length > 0 && bytes + size > maxBytes) {
      chunks.push(chunk);
      chunk = [];
      bytes = envelope;
    }
    chunk.push(entry);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

export function correlationOf(record: PlannedRecord | undefined): { correlationId?: string } {
  return record?.correlationId === undefined ? {} : { correlationId: record.correlationId };
}
