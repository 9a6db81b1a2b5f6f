/**
 * The outbox of a deployment that orders per key (issue 33, docs/ORDERING.md): a delivery the
 * router marked with its key (`ordering.key`, no sequence yet) is appended to its lane — which
 * gives it its sequence, stamped on the event — and queued only when it is the lane's head. The
 * rest of the lane waits in the lane, not in a queue, so a waiting key costs no receives; the
 * delivery function (push) or an acknowledgement (pull) queues the next one (`releaseNext`).
 * Everything else — unordered deliveries, redrives, splits, replays — passes through unchanged.
 */
import { decodeDeliveryMessage, encodeDeliveryMessage, type DeliveryMessage } from './delivery-message.js';
import type { Outbox, OutboxAddress, OutboxEntry } from './outbox.js';
import type { LaneAddress, OrderedLanes } from '../ordering/ordered-lanes.js';
import { stampSequence } from '../ordering/sequence-stamp.js';

/**
 * How long after its acceptance an event waits before it is appended (docs/ORDERING.md,
 * "Acceptance order"): the time an earlier event of its key, accepted just before it and routed by
 * another router batch side by side, has to reach the lane first.
 */
export const SETTLING_WINDOW_MS = 1000;

export interface OrderedOutboxOptions {
  readonly settlingWindowMs?: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Told of an event appended out of acceptance order (it came past the settling window). */
  readonly onLate?: (message: DeliveryMessage, sequence: number) => void;
}

/** `lanes` is asked for on the first ordered delivery: an outbox that never sees one builds none. */
export function orderedOutbox(inner: Outbox, lanes: () => OrderedLanes, options: OrderedOutboxOptions = {}): Outbox {
  const { settlingWindowMs = SETTLING_WINDOW_MS, now = Date.now } = options;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const enqueueAll = async (entries: readonly OutboxEntry[]): Promise<void> => {
    const through: OutboxEntry[] = [];
    // Per lane in acceptance order (the position the ingest gave); lanes side by side.
    const byLane = new Map<string, OutboxEntry[]>();
    for (const entry of entries) {
      const { ordering } = entry.message;
      if (ordering === undefined || ordering.sequence !== undefined) through.push(entry);
      else {
        const id = JSON.stringify([entry.message.subscriptionId, ordering.key]);
        byLane.set(id, [...(byLane.get(id) ?? []), entry]);
      }
    }
    const heads = await Promise.all(
      [...byLane.values()].map(async (unsorted) => {
        const laneEntries = [...unsorted].sort((a, b) => Math.sign(positionOf(a) - positionOf(b)) || 0);
        // Settle: the newest has waited the window since its acceptance, so an earlier event of
        // the key in a batch routed beside this one has had that long to reach the lane first.
        const newest = Math.max(...laneEntries.map(positionOf).filter(Number.isFinite));
        if (newest > 0) {
          const wait = Math.ceil(newest / 1000) + settlingWindowMs - now();
          if (wait > 0) await sleep(wait);
        }
        const queued: OutboxEntry[] = [];
        for (const entry of laneEntries) {
          const { key, position } = entry.message.ordering!;
          const lane = { subscriptionId: entry.message.subscriptionId, key };
          const appended = await lanes().append(
            lane,
            entry.message.deliveryId,
            (sequence) => encodeDeliveryMessage(sequenced(entry.message, sequence)),
            position,
          );
          if (appended.late === true) options.onLate?.(entry.message, appended.sequence);
          if (appended.head)
            queued.push({ subscription: entry.subscription, message: decodeDeliveryMessage(appended.body) });
        }
        return queued;
      }),
    );
    const all = [...through, ...heads.flat()];
    if (all.length > 0) await inner.enqueueAll(all);
  };
  return {
    enqueueAll,
    enqueue: (subscription, messages) => enqueueAll(messages.map((message) => ({ subscription, message }))),
  };
}

/** Entries without a position (a message from before positions, a test) keep their order at the end. */
function positionOf(entry: OutboxEntry): number {
  return entry.message.ordering?.position ?? Number.POSITIVE_INFINITY;
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
