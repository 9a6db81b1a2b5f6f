/**
 * Batch delivery of an ordered subscription (issue 33, "Push": "where the target takes batches,
 * consecutive events of one key in one request, in order"; docs/ORDERING.md "Batches", ORD-6).
 * When the delivery function holds a lane's head and the target takes batches, the numbered events
 * stored right behind it go along in the same request — the head's *run* — each stamped with its
 * own `sequence`, in sequence order:
 *
 * - only numbered events (`e#`), never a staged one not yet settled, and never across a gap (a
 *   number not stored yet ends the run);
 * - at most ORDERED_RUN_MAX_EVENTS and ORDERED_RUN_MAX_BYTES, as an unordered batch from one
 *   router batch is; an event the subscriber may no longer receive ends it too (it goes later on
 *   its own and is withheld there), so a run is never split;
 * - its end is fixed in the lane the first time (`fixRun`), so a retry sends the same events
 *   under the same Idempotency-Key (EDU-IDEM-11). The key is derived from the run's deliveries.
 *
 * The run then settles as one: delivered, the lane moves past its last event; failed, the failure
 * policy applies to it as to one event, and each of its events becomes its own dead letter
 * (payload and `sequence` kept), so a redrive of them is delivered in order, one by one.
 */
import { decodeDeliveryMessage, lineageOf, type DeliveryMessage } from '../delivery-message/delivery-message.js';
import { deliveryIdOf } from '../delivery-message/delivery-rules.js';
import type { LaneRuns } from '../ordering/lane-runs.js';
import type { LaneAddress } from '../ordering/ordered-lanes.js';
import type { QueuedDelivery } from './dispatch-ports.js';
import type { DeadLetterStep } from './settle-attempt.js';

/** Events in one request at most: what one router batch (ten inbound messages) gives an unordered batch. */
export const ORDERED_RUN_MAX_EVENTS = 10;
/** The events' bytes in one request at most: an unordered batch's limit (an SQS message less its margin). */
export const ORDERED_RUN_MAX_BYTES = 248 * 1024;

export interface RunLimits {
  readonly maxEvents: number;
  readonly maxBytes: number;
  /** Whether the subscriber may receive this event now (hand-out-check.ts); absent, every one. */
  readonly mayJoin?: (message: DeliveryMessage) => boolean;
}

/**
 * The head's run: its own message first, then the events behind it, or the head alone when
 * nothing may join it (or the lane is not held at it any more). `holder` holds the head.
 */
export async function runOfHead(
  lanes: LaneRuns,
  lane: LaneAddress,
  head: { readonly sequence: number; readonly message: DeliveryMessage; readonly holder: string },
  limits: RunLimits,
): Promise<DeliveryMessage[]> {
  const behind = await lanes.behind(lane, head.sequence, limits.maxEvents - 1);
  const stored = behind.events.map(({ body }) => decodeDeliveryMessage(body));
  if (behind.through !== undefined) return [head.message, ...stored];
  const run = [head.message];
  let bytes = eventBytes(head.message);
  for (const message of stored) {
    bytes += eventBytes(message);
    // An erased event (no events left) is passed over on its own (ordered-dispatch.ts); it ends the run.
    if (message.events.length === 0 || bytes > limits.maxBytes || limits.mayJoin?.(message) === false) break;
    run.push(message);
  }
  if (run.length === 1) return run;
  const through = head.sequence + run.length - 1;
  const fixed = await lanes.fixRun(lane, head.sequence, through, head.holder);
  if (fixed === through) return run;
  if (fixed === undefined) return [head.message];
  // Another copy of the head fixed its run first: send that one.
  return [head.message, ...stored.slice(0, fixed - head.sequence)];
}

/** The one delivery of a run: its events in sequence order, under a key of its own derived from its deliveries. */
export function runDelivery(head: QueuedDelivery, run: readonly DeliveryMessage[]): QueuedDelivery {
  const { message } = head;
  const events = run.flatMap((one) => one.events);
  const deliveryId = deliveryIdOf(
    run.map((one) => one.deliveryId),
    message.subscriptionId,
    ['ordered-run', ...events],
  );
  return { messageId: head.messageId, receiveCount: head.receiveCount, message: { ...message, deliveryId, events } };
}

/** A run's dead letter as one per event: each with its own delivery, payload and `sequence`, so each is redriven in its place. */
export function deadLetterPerEvent(step: DeadLetterStep, run: readonly DeliveryMessage[]): DeadLetterStep[] {
  const { correlationId: _batch, redriveOf: _none, ...shared } = step.deadLetter;
  return run
    .filter((one) => one.events.length > 0)
    .map((one) => ({
      ...step,
      deadLetter: {
        ...shared,
        deliveryId: one.deliveryId,
        events: one.events,
        createdAt: one.createdAt,
        ...lineageOf(one),
      },
    }));
}

function eventBytes(message: DeliveryMessage): number {
  return message.events.reduce((sum, event) => sum + Buffer.byteLength(event) + 1, 0);
}
