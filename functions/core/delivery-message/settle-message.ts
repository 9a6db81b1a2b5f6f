/**
 * What a settle message does when a consumer meets it (docs/ORDERING.md, "Design" 3): the
 * delivery function meets it on the deliveries queue (push), a receive on the subscription's own
 * queue (pull). Either way it is never sent or handed out: it settles its lane — appends the
 * staged events whose window has passed, in acceptance order — and queues the lane's head.
 */
import { decodeDeliveryMessage, type OrderingMark } from './delivery-message.js';
import { resendHead, sequencedBody, SETTLING_WINDOW_MS } from './ordered-outbox.js';
import type { Outbox, OutboxAddress } from './outbox.js';
import type { Log } from '../ports/log.js';
import { LATE_APPEND_MESSAGE, settleLane, settlesAt } from '../ordering/lane-settling.js';
import type { OrderedLanes } from '../ordering/ordered-lanes.js';

/** A settle message that found another settler at work on its lane comes back after this. */
const SETTLE_BUSY_RETRY_SECONDS = 2;

export interface SettleMessageDependencies {
  readonly lanes: OrderedLanes;
  readonly outbox: Pick<Outbox, 'enqueue'>;
  readonly log: Log;
  /** The settling window; default SETTLING_WINDOW_MS. */
  readonly settlingWindowMs?: number;
}

/**
 * Settles the lane of the settle message `holder` (a queue message id) with `ordering` (its key
 * and position); `returning`: the message was received before. Answers undefined when the message is done, or the seconds after which it is to
 * come back: it came before its window (a clock step), or another settler holds the lane.
 */
export async function settleOnMessage(
  subscription: OutboxAddress,
  holder: string,
  ordering: OrderingMark,
  now: number,
  deps: SettleMessageDependencies,
  /** The message was received before and not deleted: its settler may have died after appending. */
  returning = false,
): Promise<number | undefined> {
  const lane = { subscriptionId: subscription.id, key: ordering.key };
  const settlingWindowMs = deps.settlingWindowMs ?? SETTLING_WINDOW_MS;
  const waitMs = settlesAt(ordering.position!, settlingWindowMs) - now;
  if (waitMs > 0) return Math.ceil(waitMs / 1000);
  const outcome = await settleLane(deps.lanes, lane, { holder, now, settlingWindowMs, build: sequencedBody });
  if (outcome.kind === 'busy') return SETTLE_BUSY_RETRY_SECONDS;
  for (const { deliveryId, sequence } of outcome.late)
    deps.log.warn(LATE_APPEND_MESSAGE, { subscriptionId: subscription.id, deliveryId, sequence });
  if (outcome.heads.length > 0) await deps.outbox.enqueue(subscription, outcome.heads.map(decodeDeliveryMessage));
  // Back with nothing left to append: a settler that died between appending and queuing the head
  // (a kill -9) left the lane waiting for a head on no queue. Queue it once more (a copy that finds
  // it queued or held already is let go).
  else if (returning && outcome.appended === 0) await resendHead(lane, { ordering }, subscription, deps);
  return undefined;
}
