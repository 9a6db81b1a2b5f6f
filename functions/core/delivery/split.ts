/**
 * Each event of a multi-event message as a delivery of its own (JSON-3), for a subscription that
 * does not take batches (EDU-11). A split done again (the group retried, the function timed out)
 * must not make new operations: each child's key derives from the parent's key and its place in it
 * (EDU-IDEM-11), and it keeps the parent's age, so its attempts end when the parent's key lifetime
 * does (EDU-IDEM-12).
 */
import { lineageOf, type DeliveryMessage } from '../delivery-message/delivery-message.js';
import { splitDeliveryId } from '../delivery-message/delivery-rules.js';

export function splitIntoSingleEvents(messages: readonly DeliveryMessage[]): DeliveryMessage[] {
  return messages.flatMap((message) =>
    message.events.map((event, index): DeliveryMessage => ({
      version: 1,
      deliveryId: splitDeliveryId(message, index, event),
      subscriptionId: message.subscriptionId,
      events: [event],
      createdAt: message.createdAt,
      ...lineageOf(message),
    })),
  );
}
