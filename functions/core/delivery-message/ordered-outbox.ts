/**
 * The outbox of a deployment that orders per key (issue 33, docs/ORDERING.md): a delivery the
 * router marked with its key and acceptance position (`ordering`, no sequence yet) is staged in its
 * lane, and one settle message per lane is queued, delayed until the settling window of the
 * lane's newest staged event has passed; the delivery function then appends the staged events in
 * acceptance order (core/ordering/lane-settling.ts) and queues the lane's head. The rest of the
 * lane waits in the lane, not in a queue, so a waiting key costs no receives; the delivery
 * function (push) or an acknowledgement (pull) queues the next one (`releaseNext`).
 * A replay of an ordered subscription marks its events for the replay's own lanes without a
 * position (core/replay/ordered-replay.ts): they are appended at once, in the order given.
 * Everything else — unordered deliveries, redrives, splits, unordered replays — passes through unchanged.
 */
import { decodeDeliveryMessage, encodeDeliveryMessage, type DeliveryMessage } from './delivery-message.js';
import type { Outbox, OutboxAddress, OutboxEntry } from './outbox.js';
import type { LaneAddress, OrderedLanes, StagedEvent } from '../ordering/ordered-lanes.js';
import { settlesAt } from '../ordering/lane-settling.js';
import { stampSequence } from '../ordering/sequence-stamp.js';

/**
 * How long after its acceptance an event is appended (docs/ORDERING.md, "Acceptance order"): the
 * time an earlier event of its key, accepted just before it and routed by another router batch
 * side by side, has to be staged in the lane first.
 */
export const SETTLING_WINDOW_MS = 1000;
/** SQS's longest message delay. */
const MAX_DELAY_SECONDS = 900;

export interface OrderedOutboxOptions {
  readonly settlingWindowMs?: number;
  readonly now?: () => number;
}

/** `lanes` is asked for on the first ordered delivery: an outbox that never sees one builds none. */
export function orderedOutbox(inner: Outbox, lanes: () => OrderedLanes, options: OrderedOutboxOptions = {}): Outbox {
  const { settlingWindowMs = SETTLING_WINDOW_MS, now = Date.now } = options;
  const enqueueAll = async (entries: readonly OutboxEntry[]): Promise<void> => {
    const through: OutboxEntry[] = [];
    const byLane = new Map<string, OutboxEntry[]>();
    for (const entry of entries) {
      const { ordering } = entry.message;
      if (ordering === undefined || ordering.sequence !== undefined) through.push(entry);
      else {
        const id = JSON.stringify([entry.message.subscriptionId, ordering.key]);
        byLane.set(id, [...(byLane.get(id) ?? []), entry]);
      }
    }
    const laneGroups = [...byLane.values()].map((laneEntries) => ({
      lane: { subscriptionId: laneEntries[0]!.message.subscriptionId, key: laneEntries[0]!.message.ordering!.key },
      positioned: laneEntries.filter((entry) => entry.message.ordering!.position !== undefined),
      unpositioned: laneEntries.filter((entry) => entry.message.ordering!.position === undefined),
    }));
    // Every lane's events of this router batch staged together (one BatchWriteItem per 25 on
    // DynamoDB), and only then the settle messages: a settle message never comes before its events.
    const staging = laneGroups.flatMap(({ lane, positioned }) =>
      positioned.map((entry) => ({ lane, event: stagedEventOf(entry) })),
    );
    if (staging.length > 0) await lanes().stage(staging);
    const queued = await Promise.all(
      laneGroups.map(async ({ lane, positioned, unpositioned }) => [
        ...settleMessageOf(positioned),
        ...(await appendNow(lanes(), lane, unpositioned)),
      ]),
    );
    const all = [...through, ...queued.flat()];
    if (all.length > 0) await inner.enqueueAll(all);
  };

  /** The lane's newest staged event's message, delayed past its settling window, settles the lane. */
  const settleMessageOf = (entries: readonly OutboxEntry[]): OutboxEntry[] => {
    if (entries.length === 0) return [];
    const newest = entries.reduce((a, b) => (b.message.ordering!.position! > a.message.ordering!.position! ? b : a));
    const waitMs = settlesAt(newest.message.ordering!.position!, settlingWindowMs) - now();
    const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.max(0, Math.ceil(waitMs / 1000)));
    return [{ ...newest, ...(delaySeconds > 0 ? { delaySeconds } : {}) }];
  };

  /**
   * Deliveries without a position (a replay's, whose archive is complete and read in order; from
   * before positions; a test) are appended at once, in their order.
   */
  const appendNow = async (
    laneLanes: OrderedLanes,
    lane: LaneAddress,
    entries: readonly OutboxEntry[],
  ): Promise<OutboxEntry[]> => {
    const queued: OutboxEntry[] = [];
    for (const entry of entries) {
      const appended = await laneLanes.append(lane, entry.message.deliveryId, (sequence) =>
        encodeDeliveryMessage(sequenced(entry.message, sequence)),
      );
      if (appended.head)
        queued.push({ subscription: entry.subscription, message: decodeDeliveryMessage(appended.body) });
    }
    return queued;
  };

  return {
    enqueueAll,
    enqueue: (subscription, messages) => enqueueAll(messages.map((message) => ({ subscription, message }))),
  };
}

function stagedEventOf(entry: OutboxEntry): StagedEvent {
  return {
    deliveryId: entry.message.deliveryId,
    position: entry.message.ordering!.position!,
    body: encodeDeliveryMessage(entry.message),
  };
}

/** A message the router staged and queued to settle its lane: ordered, with a position, without a sequence. */
export function isSettleMessage(message: DeliveryMessage): boolean {
  return (
    message.ordering !== undefined && message.ordering.sequence === undefined && message.ordering.position !== undefined
  );
}

/** The stored message of a staged event at its place: decoded, sequenced, encoded. */
export function sequencedBody(staged: StagedEvent, sequence: number): string {
  return encodeDeliveryMessage(sequenced(decodeDeliveryMessage(staged.body), sequence));
}

/** The message at its place in the lane: the sequence in its mark and on its event. */
export function sequenced(message: DeliveryMessage, sequence: number): DeliveryMessage {
  return {
    ...message,
    ordering: { key: message.ordering!.key, sequence },
    events: message.events.map((event) => stampSequence(event, sequence)),
  };
}

/**
 * The lane's head is settled (delivered, acknowledged, or settled by the failure policy): the lane
 * moves on and its next event, when there is one, is queued. Returns whether one was.
 */
export async function releaseNext(
  lane: LaneAddress,
  sequence: number,
  subscription: OutboxAddress,
  deps: { readonly lanes: OrderedLanes; readonly outbox: Pick<Outbox, 'enqueue'> },
): Promise<boolean> {
  const next = await deps.lanes.advance(lane, sequence);
  if (next === undefined) return false;
  await deps.outbox.enqueue(subscription, [decodeDeliveryMessage(next)]);
  return true;
}

/**
 * A copy of an event its lane is already past came back (not a redrive). Usually a duplicate; but
 * when a process died between the lane's advance and the queuing of its next event (`releaseNext`:
 * the update done, the send never made), the head's message comes back settled and the next event
 * is on no queue: the key would wait for the sweeper. So the lane's current head is queued once
 * more, marked `resent`: a copy that finds it queued or held already is let go by `take`, and a
 * resent copy that finds itself settled does not resend again, so duplicates cannot chain.
 * Returns whether a head was queued.
 */
export async function resendHead(
  lane: LaneAddress,
  copy: Pick<DeliveryMessage, 'ordering'>,
  subscription: OutboxAddress,
  deps: { readonly lanes: OrderedLanes; readonly outbox: Pick<Outbox, 'enqueue'> },
): Promise<boolean> {
  if (copy.ordering?.resent === true) return false;
  const { next, parked } = await deps.lanes.head(lane);
  if (parked) return false;
  const body = await deps.lanes.stored(lane, next);
  if (body === undefined) return false;
  const head = decodeDeliveryMessage(body);
  await deps.outbox.enqueue(subscription, [{ ...head, ordering: { ...head.ordering!, resent: true } }]);
  return true;
}
