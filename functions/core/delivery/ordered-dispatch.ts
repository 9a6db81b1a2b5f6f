/**
 * The delivery function's share of ordered delivery per key (issue 33, docs/ORDERING.md, ORD-3):
 * for a subscription with `ordering`, at most one delivery of a key is in flight, and the lane
 * moves on only once it is settled — delivered, or settled by the subscription's failure policy:
 *
 *   block  a delivery that would be dead-lettered is tried again instead (the key waits); on the
 *          queue's last receive it is parked, so nothing overtakes it and nothing is lost
 *   park   it is dead-lettered and the lane parked: the later events of the key wait in the lane,
 *          in order, until the owner redrives the dead letter; that redrive unparks the lane
 *   skip   it is dead-lettered and the lane goes on; the receiver sees the gap in `sequence`
 *
 * Other keys never wait: each key's hold is its own, and a delivery of another key is not read here.
 * Where the target takes batches, the head goes with the numbered events behind it in one request
 * (ordered-run.ts), and the policy applies to that run as to one event.
 * SubscriptionDispatch calls `admit` before the hand-out and `settle` for every step it applies.
 */
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Outbox } from '../delivery-message/outbox.js';
import type { LaneAddress, OrderedLanes } from '../ordering/ordered-lanes.js';
import type { LaneRuns } from '../ordering/lane-runs.js';
import { decodeDeliveryMessage, type DeliveryMessage } from '../delivery-message/delivery-message.js';
import { takesBatches } from '../delivery-message/delivery-rules.js';
import { isSettleMessage, resendHead } from '../delivery-message/ordered-outbox.js';
import { settleOnMessage } from '../delivery-message/settle-message.js';
import { orderingKeyOf, parseSequence, type OrderingSettings } from '../ordering/ordering-settings.js';
import { redrivenLaneKey } from '../ordering/replay-lanes.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { QueuedDelivery } from './dispatch-ports.js';
import { withheldFrom } from './hand-out-check.js';
import {
  deadLetterPerEvent,
  ORDERED_RUN_MAX_BYTES,
  ORDERED_RUN_MAX_EVENTS,
  runDelivery,
  runOfHead,
} from './ordered-run.js';
import type { DeadLetterStep, NextStep } from './settle-attempt.js';

/** How long a hold lasts past its last take: beyond SQS's longest delay (15 min) plus an attempt. */
const HOLD_MS = 20 * 60_000;
/** A copy of a lane's event that came before its turn comes back after this. */
const EARLY_RETRY_SECONDS = 5;
/** `block`: the wait between tries of a delivery the target refused for good. */
const BLOCK_RETRY_SECONDS = 60;

interface Held {
  readonly lane: LaneAddress;
  readonly sequence: number;
  /** The last sequence of the run sent with it (ordered-run.ts); absent, it went alone. */
  readonly through?: number;
}

export interface OrderedDispatchDependencies {
  readonly lanes: OrderedLanes & LaneRuns;
  readonly outbox: Pick<Outbox, 'enqueue'>;
  readonly now: Clock;
  readonly log: Log;
  readonly maxReceiveCount: number;
  /** The settling window (docs/ORDERING.md, "Acceptance order"); default SETTLING_WINDOW_MS. */
  readonly settlingWindowMs?: number;
  /** The owners' entitlements now: an event the subscriber may no longer receive does not join a run. */
  readonly entitlements?: Entitlements;
  /** A run's limits; default ORDERED_RUN_MAX_EVENTS and ORDERED_RUN_MAX_BYTES. */
  readonly maxRunEvents?: number;
  readonly maxRunBytes?: number;
}

export class OrderedDispatch {
  private readonly held = new Map<string, Held>();
  /** The deliveries of each run sent, by queue message: a failed run is a dead letter per event. */
  private readonly runs = new Map<string, readonly DeliveryMessage[]>();
  private readonly settings: OrderingSettings;

  constructor(
    private readonly subscription: Subscription,
    private readonly deps: OrderedDispatchDependencies,
  ) {
    this.settings = subscription.ordering!;
  }

  /**
   * The deliveries that may go now; the others get their step through `apply` (a copy already
   * settled or in flight: let go; one before its turn: later).
   */
  async admit(
    deliveries: readonly QueuedDelivery[],
    apply: (delivery: QueuedDelivery, next: NextStep) => Promise<void>,
  ): Promise<QueuedDelivery[]> {
    const admitted: QueuedDelivery[] = [];
    for (const delivery of deliveries) {
      if (isSettleMessage(delivery.message)) {
        await apply(delivery, await this.settleLaneOf(delivery));
        continue;
      }
      const place = this.placeOf(delivery);
      if (place === undefined) {
        admitted.push(delivery);
        continue;
      }
      const now = this.deps.now();
      const redrive = delivery.message.redriveOf !== undefined;
      const taken = await this.deps.lanes.take(place.lane, place.sequence, {
        holder: delivery.messageId,
        until: now + HOLD_MS,
        now,
        redrive,
      });
      if (taken === 'mine') {
        this.held.set(delivery.messageId, place);
        if (delivery.message.events.length === 0) {
          // Its events were erased while it waited in the lane (core/erasure/erase-ordered-lanes.ts):
          // nothing to send; the lane moves past it and the receiver sees the gap in `sequence`.
          this.deps.log.info('ordered event erased while it waited: its place is passed over', {
            subscriptionId: this.subscription.id,
            deliveryId: delivery.message.deliveryId,
            sequence: place.sequence,
          });
          await apply(delivery, { kind: 'done' });
        } else admitted.push(redrive ? delivery : await this.withRun(delivery, place));
      } else if (taken === 'settled' && redrive) {
        // A skipped event redriven: the lane is past it, so it goes on its own, with its old sequence.
        admitted.push(delivery);
      } else if (taken === 'early') {
        await apply(delivery, { kind: 'retry', delaySeconds: EARLY_RETRY_SECONDS });
      } else {
        this.deps.log.info('ordered delivery not sent: its place is settled or held by another copy', {
          subscriptionId: this.subscription.id,
          deliveryId: delivery.message.deliveryId,
          sequence: place.sequence,
          lane: taken,
        });
        // It may be the head of a lane whose next event was never queued (a crash after the advance).
        if (taken === 'settled') await resendHead(place.lane, delivery.message, this.subscription, this.deps);
        await apply(delivery, { kind: 'done' });
      }
    }
    return admitted;
  }

  /**
   * A settle message (the router staged its lane's events, ordered-outbox.ts): appends the lane's
   * staged events whose settling window has passed, in acceptance order, and queues the head. The
   * message itself is then done — its event is in the lane — or comes back when it came early or
   * another settler was at work.
   */
  private async settleLaneOf(delivery: QueuedDelivery): Promise<NextStep> {
    const { message, messageId } = delivery;
    const later = await settleOnMessage(
      this.subscription,
      messageId,
      message.ordering!,
      this.deps.now(),
      this.deps,
      delivery.receiveCount > 1,
    );
    return later === undefined ? { kind: 'done' } : { kind: 'retry', delaySeconds: later };
  }

  /**
   * Where the target takes batches, the head with the numbered events behind it as one delivery
   * (ordered-run.ts). A redrive goes alone: it is a dead letter's own event, in its place.
   */
  private async withRun(delivery: QueuedDelivery, place: Held): Promise<QueuedDelivery> {
    if (!takesBatches(this.subscription)) return delivery;
    const { entitlements } = this.deps;
    const mayJoin = (message: DeliveryMessage) =>
      entitlements === undefined ||
      withheldFrom({ messageId: '', receiveCount: 0, message }, this.subscription, entitlements) === 'send';
    // A head the subscriber may no longer receive goes alone, to be withheld: a run with it would be split.
    if (!mayJoin(delivery.message)) return delivery;
    const run = await runOfHead(
      this.deps.lanes,
      place.lane,
      { sequence: place.sequence, message: delivery.message, holder: delivery.messageId },
      {
        maxEvents: this.deps.maxRunEvents ?? ORDERED_RUN_MAX_EVENTS,
        maxBytes: this.deps.maxRunBytes ?? ORDERED_RUN_MAX_BYTES,
        mayJoin,
      },
    );
    if (run.length === 1) return delivery;
    this.held.set(delivery.messageId, { ...place, through: place.sequence + run.length - 1 });
    this.runs.set(delivery.messageId, run);
    return runDelivery(delivery, run);
  }

  /** The dead letters to write for `step`: one per event of a run, else the step's own. */
  deadLettersOf(delivery: QueuedDelivery, step: DeadLetterStep): DeadLetterStep[] {
    const run = this.runs.get(delivery.messageId);
    return run === undefined ? [step] : deadLetterPerEvent(step, run);
  }

  /** The step the failure policy makes of `next`, with the lane moved on, parked or left held. */
  async settle(delivery: QueuedDelivery, next: NextStep): Promise<NextStep> {
    const held = this.held.get(delivery.messageId);
    if (held === undefined || next.kind === 'retry') return next;
    this.held.delete(delivery.messageId);
    if (next.kind === 'dead-letter' && this.settings.onFailure !== 'skip') {
      const lastReceive = delivery.receiveCount >= this.deps.maxReceiveCount - 1;
      if (this.settings.onFailure === 'block' && !lastReceive) {
        this.held.set(delivery.messageId, held);
        return { kind: 'retry', delaySeconds: BLOCK_RETRY_SECONDS };
      }
      await this.deps.lanes.parkThrough(held.lane, held.sequence, held.through ?? held.sequence);
      this.deps.log.warn('ordered key parked: its event is a dead letter; a redrive of it unparks the key', {
        subscriptionId: this.subscription.id,
        deliveryId: delivery.message.deliveryId,
        sequence: held.sequence,
        ...(held.through === undefined ? {} : { through: held.through }),
      });
      return next;
    }
    // The lane moves past the head (or its whole run), and its next event, when free, is queued.
    const following = await this.deps.lanes.advanceThrough(held.lane, held.sequence, held.through ?? held.sequence);
    if (following !== undefined) await this.deps.outbox.enqueue(this.subscription, [decodeDeliveryMessage(following)]);
    return next;
  }

  /**
   * The delivery's lane and place: the router's mark, or for a redrive (a dead letter sent again,
   * which carries no mark) the key and the stamped `sequence` of its event.
   */
  private placeOf({ message, events = [] }: QueuedDelivery): Held | undefined {
    if (message.ordering?.sequence !== undefined)
      return {
        lane: { subscriptionId: this.subscription.id, key: message.ordering.key },
        sequence: message.ordering.sequence,
      };
    if (message.redriveOf === undefined || events.length !== 1) return undefined;
    const key = orderingKeyOf(events[0]!.attributes, this.settings);
    const sequence = parseSequence(events[0]!.attributes['sequence']);
    if (key === undefined || sequence === undefined) return undefined;
    // A replayed event's dead letter goes back into its replay's lane, not the live one (replay-lanes.ts).
    return { lane: { subscriptionId: this.subscription.id, key: redrivenLaneKey(message, key) }, sequence };
  }
}
