/**
 * The outbox (issue 29, item 3): where a delivery message goes once Koerier has decided to send it.
 * It encodes the messages and picks the queue — a push subscription's go to the deliveries queue,
 * which the delivery function reads; a pull subscription's to its own queue (docs/PULL.md) — so the
 * router, a replay, a redrive and a split all put deliveries on the same path by the same rule.
 */
import type { Subscription } from '../subscriptions/subscription.js';
import { encodeDeliveryMessage, type DeliveryMessage } from './delivery-message.js';

/** What the outbox reads of a subscription: which queue is its. */
export type OutboxAddress = Pick<Subscription, 'id' | 'delivery'>;

export interface Outbox {
  /** Puts the messages on the subscription's queue; writes every one or throws. */
  enqueue(subscription: OutboxAddress, messages: readonly DeliveryMessage[]): Promise<void>;
  /** The same for deliveries to many subscriptions, one write per queue (SQS batches of ten). */
  enqueueAll(deliveries: readonly OutboxEntry[]): Promise<void>;
}

export interface OutboxEntry {
  readonly subscription: OutboxAddress;
  readonly message: DeliveryMessage;
  /** Hidden this long after it is queued (the ordered outbox's settle messages, push and pull). */
  readonly delaySeconds?: number;
}

/** The queues behind the outbox: the ports the composition already builds (its `outbox` member is built over them). */
export interface OutboxQueues {
  readonly deliveryQueue: { send(bodies: readonly string[], delaySeconds?: number): Promise<void> };
  readonly pullQueues: {
    send(subscriptionId: string, bodies: readonly string[], delaySeconds?: number): Promise<void>;
  };
}

export function queueOutbox(queues: OutboxQueues): Outbox {
  const enqueueAll = async (deliveries: readonly OutboxEntry[]): Promise<void> => {
    // Push deliveries share the deliveries queue (queue undefined), each pull subscription has its
    // own queue; one send per queue and delay (an ordered lane's settle message is delayed, on either).
    const byQueue = new Map<string, { queue: string | undefined; delaySeconds: number; bodies: string[] }>();
    for (const { subscription, message, delaySeconds = 0 } of deliveries) {
      const queue = subscription.delivery === 'pull' ? subscription.id : undefined;
      const id = JSON.stringify([queue ?? null, delaySeconds]);
      const group = byQueue.get(id) ?? { queue, delaySeconds, bodies: [] };
      group.bodies.push(encodeDeliveryMessage(message));
      byQueue.set(id, group);
    }
    await Promise.all(
      [...byQueue.values()].map(({ queue, delaySeconds, bodies }) =>
        // Read on use: a function that only ever sends to one kind of queue is granted only that kind.
        queue === undefined
          ? delaySeconds > 0
            ? queues.deliveryQueue.send(bodies, delaySeconds)
            : queues.deliveryQueue.send(bodies)
          : delaySeconds > 0
            ? queues.pullQueues.send(queue, bodies, delaySeconds)
            : queues.pullQueues.send(queue, bodies),
      ),
    );
  };
  return {
    enqueueAll,
    enqueue: (subscription, messages) => enqueueAll(messages.map((message) => ({ subscription, message }))),
  };
}
