/**
 * Ordered delivery per key for pull subscriptions (issue 33 item "Pull", docs/ORDERING.md "Pull",
 * ORD-5): a receive hands out at most one locked event per key, as Service Bus sessions do, and
 * acknowledging it releases the next.
 *
 * Built on the push path's lanes. The router stages an ordered event in its lane and the ordered
 * outbox queues a delayed settle message on the subscription's own queue. Nothing but a receive
 * reads that queue, so the receive settles: a settle message it meets is never handed out; it
 * appends the lane's staged events (core/ordering/lane-settling.ts), queues the lane's head and is
 * deleted. Only a lane's head is ever on the queue, and a receive hands it out only under the
 * lane's hold (the queue message's id, as push takes it), so a second copy of a head is dropped. A
 * lock that expires or a release puts the same message back: it is still the head and its hold is
 * its own. The acknowledgement moves the lane on (`releaseNext`) and queues the next event; its
 * lock token carries the lane's key and the event's place, since SQS gives no body for a receipt
 * handle.
 *
 * Where a pull event would become a dead letter (a reject, `maxdeliverycount` receives), the
 * failure policy applies: `skip` dead-letters it and releases the next; `park` dead-letters it and
 * parks the lane until a redrive of it. Under `block` a reject is no dead letter: the event comes
 * back after PULL_BLOCK_RETRY_SECONDS (lock-settlement.ts), the key's later events waiting; only
 * `maxdeliverycount` receives (the consumer's own limit, as the queue's last receive is on push)
 * make it a dead letter, and then the key parks as with `park`. A head the
 * subscription may no longer receive (withheld) is settled unsent and releases the next.
 */
import type { Outbox } from '../delivery-message/outbox.js';
import { isSettleMessage, releaseNext, resendHead } from '../delivery-message/ordered-outbox.js';
import type { DeliveryMessage } from '../delivery-message/delivery-message.js';
import { EventText } from '../cloudevents/event-text.js';
import { settleOnMessage } from '../delivery-message/settle-message.js';
import type { LaneAddress, OrderedLanes } from '../ordering/ordered-lanes.js';
import { orderingKeyOf, parseSequence, type OrderingSettings } from '../ordering/ordering-settings.js';
import { redrivenLaneKey } from '../ordering/replay-lanes.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { PulledMessage, PullQueues, QueueEntryOutcome } from './pull-queues.js';
import type { Disposition } from './receive-assembly.js';

/** A hold lasts this long past the lock: beyond it a copy of the head (should one exist) may take the lane. */
const HOLD_MS = 20 * 60_000;
/** A copy of a lane's event that came before its turn comes back after this. */
const EARLY_RETRY_SECONDS = 5;
/**
 * An ordered event a consumer rejects under `block` comes back after this (lock-settlement.ts), as
 * push tries a refused head again after its BLOCK_RETRY_SECONDS: the key waits, retrying.
 */
export const PULL_BLOCK_RETRY_SECONDS = 60;

export interface OrderedPullDependencies {
  readonly lanes: OrderedLanes;
  /** Where a lane's head goes: the subscription's own queue (the outbox's pull branch). */
  readonly outbox: Pick<Outbox, 'enqueue'>;
  readonly queues: Pick<PullQueues, 'delete' | 'changeVisibility'>;
  readonly clock: Clock;
  readonly log: Log;
  /** The settling window (docs/ORDERING.md, "Acceptance order"); default SETTLING_WINDOW_MS. */
  readonly settlingWindowMs?: number;
}

/** An ordered event's lane key and place: what its lock token carries. */
export interface LanePlace {
  readonly key: string;
  readonly sequence: number;
}

/** What a receive may go on with: the dispositions left, and the place of each ordered head, by message id. */
export interface Admitted {
  readonly dispositions: Disposition[];
  readonly places: ReadonlyMap<string, LanePlace>;
}

export class OrderedPull {
  constructor(private readonly deps: OrderedPullDependencies) {}

  /**
   * Settles the settle messages, takes each ordered event's hold, and leaves out what is not handed
   * out: settle messages, copies of a head already settled or held, events before their turn.
   */
  async admit(
    subscription: Subscription,
    dispositions: readonly Disposition[],
    lockedUntil: number,
  ): Promise<Admitted> {
    const settings = subscription.ordering;
    if (settings === undefined) return { dispositions: [...dispositions], places: new Map() };
    const kept: Disposition[] = [];
    const places = new Map<string, LanePlace>();
    const drop: PulledMessage[] = [];
    const later: { message: PulledMessage; seconds: number }[] = [];
    for (const disposition of dispositions) {
      if (disposition.kind === 'unreadable') {
        kept.push(disposition);
        continue;
      }
      const { message, delivery } = disposition;
      if (isSettleMessage(delivery)) {
        const seconds = await settleOnMessage(
          subscription,
          message.messageId,
          delivery.ordering!,
          this.deps.clock(),
          this.deps,
          message.receiveCount > 1,
        );
        if (seconds === undefined) drop.push(message);
        else later.push({ message, seconds });
        continue;
      }
      const place = placeOf(delivery, settings);
      if (place === undefined) {
        kept.push(disposition);
        continue;
      }
      const now = this.deps.clock();
      const redrive = delivery.redriveOf !== undefined;
      const lane = { subscriptionId: subscription.id, key: place.key };
      const taken = await this.deps.lanes.take(lane, place.sequence, {
        holder: message.messageId,
        until: Math.max(lockedUntil, now) + HOLD_MS,
        now,
        redrive,
      });
      if (taken === 'mine' && delivery.events.length === 0) {
        // Its events were erased while it waited in the lane (core/erasure/erase-ordered-lanes.ts):
        // nothing to hand out; the lane moves past it and the consumer sees the gap in `sequence`.
        this.deps.log.info('ordered event erased while it waited: its place is passed over', {
          subscriptionId: subscription.id,
          deliveryId: delivery.deliveryId,
          sequence: place.sequence,
        });
        await releaseNext(lane, place.sequence, subscription, this.deps);
        drop.push(message);
      } else if (taken === 'mine') {
        kept.push(disposition);
        places.set(message.messageId, place);
      } else if (taken === 'settled' && redrive) {
        // A skipped event redriven: the lane is past it, so it goes on its own, with its old sequence.
        kept.push(disposition);
      } else if (taken === 'early') later.push({ message, seconds: EARLY_RETRY_SECONDS });
      else {
        this.deps.log.info('ordered pull event not handed out: its place is settled or held by another copy', {
          subscriptionId: subscription.id,
          deliveryId: delivery.deliveryId,
          sequence: place.sequence,
          lane: taken,
        });
        // It may be the head of a lane whose next event was never queued (a crash after the advance).
        if (taken === 'settled') await resendHead(lane, delivery, subscription, this.deps);
        drop.push(message);
      }
    }
    if (drop.length > 0)
      await this.deps.queues.delete(
        subscription.id,
        drop.map((message, index) => ({ entryId: String(index), receiptHandle: message.receiptHandle })),
      );
    if (later.length > 0)
      await this.deps.queues.changeVisibility(
        subscription.id,
        later.map(({ message, seconds }, index) => ({
          entryId: String(index),
          receiptHandle: message.receiptHandle,
          seconds,
        })),
      );
    return { dispositions: kept, places };
  }

  /**
   * After the receive dead-lettered or withheld ordered heads (their places in `places`): the
   * failure policy for each dead letter, and the next event for each withheld one.
   */
  async afterSettledUnsent(
    subscription: Subscription,
    dispositions: readonly Disposition[],
    places: ReadonlyMap<string, LanePlace>,
  ): Promise<void> {
    const settings = subscription.ordering;
    if (settings === undefined) return;
    for (const disposition of dispositions) {
      const place = places.get(disposition.message.messageId);
      if (place === undefined || (disposition.kind !== 'dead-letter' && disposition.kind !== 'withheld')) continue;
      const lane = { subscriptionId: subscription.id, key: place.key };
      if (disposition.kind === 'dead-letter' && settings.onFailure !== 'skip') {
        await this.deps.lanes.park(lane, place.sequence);
        this.deps.log.warn('ordered key parked: its event is a dead letter; a redrive of it unparks the key', {
          subscriptionId: subscription.id,
          deliveryId: disposition.delivery.deliveryId,
          sequence: place.sequence,
        });
      } else await releaseNext(lane, place.sequence, subscription, this.deps);
    }
  }

  /**
   * Acknowledged heads move their lanes on and queue the next events. An entry whose lane could
   * not be moved on is answered `failed` (Unavailable): acknowledging it again moves it on then.
   */
  async afterAcknowledged(
    subscription: Subscription,
    acknowledged: readonly { readonly entryId: string; readonly lane?: LanePlace }[],
    outcomes: ReadonlyMap<string, QueueEntryOutcome>,
  ): Promise<ReadonlyMap<string, QueueEntryOutcome>> {
    const result = new Map(outcomes);
    for (const { entryId, lane } of acknowledged) {
      if (lane === undefined || outcomes.get(entryId) !== 'done') continue;
      const address: LaneAddress = { subscriptionId: subscription.id, key: lane.key };
      await releaseNext(address, lane.sequence, subscription, this.deps).catch((error: unknown) => {
        this.deps.log.error('ordered pull: an acknowledged event did not release the next', {
          subscriptionId: subscription.id,
          sequence: lane.sequence,
          error: String(error),
        });
        result.set(entryId, 'failed');
      });
    }
    return result;
  }
}

/**
 * The event's lane and place: the router's mark, or for a redrive (a dead letter sent again, which
 * carries no mark) the key and the stamped `sequence` of its event.
 */
function placeOf(delivery: DeliveryMessage, settings: OrderingSettings): LanePlace | undefined {
  if (delivery.ordering?.sequence !== undefined)
    return { key: delivery.ordering.key, sequence: delivery.ordering.sequence };
  if (delivery.redriveOf === undefined || delivery.events.length !== 1) return undefined;
  const { attributes } = new EventText(delivery.events[0]!);
  const key = orderingKeyOf(attributes, settings);
  const sequence = parseSequence(attributes['sequence']);
  // A replayed event's dead letter goes back into its replay's lane, not the live one (replay-lanes.ts).
  return key === undefined || sequence === undefined ? undefined : { key: redrivenLaneKey(delivery, key), sequence };
}
