/**
 * What the deliveries table holds about one event in one subscription (issue 30 item 1), read at
 * trace time rather than written at routing time: the attempts whose record names the event, and
 * the dead letters of the routing. Neither needs a write the delivery path did not make already.
 */
import type { AttemptRecord, DeadLetter } from '../delivery/delivery-records.js';
import type { EventIdentity } from '../routing/routed-events.js';

/** Attempts one subscription's part of a trace lists at most (the newest); `attemptCount` counts all read. */
export const MAX_TRACED_ATTEMPTS = 20;

export interface EventDeliveries {
  /** Oldest first; redrives and splits of the routing's delivery included (they name the event too). */
  readonly attempts: readonly AttemptRecord[];
  /** The dead letters the routing's delivery left, without their events. */
  readonly deadLetters: readonly Omit<DeadLetter, 'events'>[];
  /** False when the history since the routing was longer than one trace reads: older attempts may be missing. */
  readonly complete: boolean;
}

export interface EventDeliveryReader {
  /** `routedAt`: epoch ms the routing planned the deliveries (their `createdAt`); nothing before it is read. */
  deliveriesOf(subscriptionId: string, event: EventIdentity, routedAt: number): Promise<EventDeliveries>;
}
