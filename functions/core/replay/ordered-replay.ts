/**
 * Replays of an ordered subscription in order per key (issue 33; docs/ORDERING.md, "Replays").
 *
 * A replayed event of a key goes into the replay's own lane for that key (core/ordering/replay-lanes.ts):
 * the worker marks it with that lane's key and no acceptance position, and the ordered outbox
 * appends it at once and queues only the lane's head (ordered-outbox.ts, `appendNow`). No settling
 * window: the archive is complete and the worker reads it in acceptance order (archive-reader.ts),
 * chunk after chunk, so each lane is appended in that order. From there the delivery function, or
 * a pull receive and its acknowledgement, deliver the lane one event at a time under the
 * subscription's failure policy, as they do a live lane; `sequence` counts within the replay's lane.
 * An event without the key goes unordered, as it did live.
 */
import { EventText } from '../cloudevents/event-text.js';
import type { DeliveryMessage } from '../delivery-message/delivery-message.js';
import { orderingKeyOf } from '../ordering/ordering-settings.js';
import { replayLaneKey } from '../ordering/replay-lanes.js';
import type { Subscription } from '../subscriptions/subscription.js';

/** The replay's delivery, marked for its key's lane in the replay when the subscription orders and the event has the key. */
export function inReplayLane(subscription: Pick<Subscription, 'ordering'>, message: DeliveryMessage): DeliveryMessage {
  if (subscription.ordering === undefined || message.replay === undefined || message.events.length !== 1)
    return message;
  const key = orderingKeyOf(new EventText(message.events[0]!).attributes, subscription.ordering);
  if (key === undefined) return message;
  return { ...message, ordering: { key: replayLaneKey(message.replay.id, key) } };
}
