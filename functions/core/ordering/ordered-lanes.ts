/**
 * The order of one (subscription, key) — its lane — as DynamoDB holds it (docs/ORDERING.md,
 * "Design"). Koerier's queues are standard SQS queues, which neither keep order nor hold a key
 * back; the lane does both: every event of the key is appended to it with the next sequence, and
 * only its head is on a queue at any time. Settling the head (delivered, or settled by the
 * failure policy) moves the lane on and hands back the next event to queue.
 *
 * Two writers may find the same head free at once (the router appending it, the delivery
 * function settling the one before), so a head can be queued twice; the hold (`take`) lets one
 * copy through and drops the other, so no key has two deliveries in flight.
 */

export interface LaneAddress {
  readonly subscriptionId: string;
  /** The event's key (ordering-settings.ts `orderingKeyOf`). */
  readonly key: string;
}

export interface Appended {
  /** Its place in the lane, from 1: the `sequence` stamped on the event. */
  readonly sequence: number;
  /** What was stored: `body` built for that sequence. */
  readonly body: string;
  /** Everything before it is settled and the lane is not parked: the caller queues it now. */
  readonly head: boolean;
  /**
   * It came after an event accepted later than it had been appended (past the settling window):
   * it is appended at the end, out of acceptance order, and the caller says so (docs/ORDERING.md).
   */
  readonly late?: boolean;
}

/**
 * `mine`: the caller holds the lane's head, and sends it. `settled`: that sequence was settled
 * before (a copy, or a message that came back): let it go. `held`: another copy is in flight: let
 * this one go. `early`: the lane has not reached it yet (a copy queued ahead of its turn): later.
 * `parked`: the lane waits for a redrive of its head.
 */
export type LaneTake = 'mine' | 'settled' | 'held' | 'early' | 'parked';

export interface OrderedLanes {
  /**
   * Appends a delivery at the lane's end; `build` makes the stored message for the sequence it
   * gets. The same `deliveryId` again (the router retrying a record) answers its first place.
   * `position` (acceptance-position.ts): the lane's numbers follow it — a sequence is only given
   * to a position above every one given before; a lower one is appended at the end, `late`.
   */
  append(
    lane: LaneAddress,
    deliveryId: string,
    build: (sequence: number) => string,
    position?: number,
  ): Promise<Appended>;
  /**
   * Takes the hold of the head for `holder` (one queue message) until `until` (epoch ms); the same
   * holder takes it again. `redrive`: the owner redrove the parked head, which unparks the lane.
   */
  take(
    lane: LaneAddress,
    sequence: number,
    hold: { holder: string; until: number; now: number; redrive: boolean },
  ): Promise<LaneTake>;
  /** The head is settled: the lane moves past it. Answers the next event's stored message, when there is one. */
  advance(lane: LaneAddress, sequence: number): Promise<string | undefined>;
  /** The head failed and the policy parks it: the lane holds everything from it until a redrive. */
  park(lane: LaneAddress, sequence: number): Promise<void>;
}
