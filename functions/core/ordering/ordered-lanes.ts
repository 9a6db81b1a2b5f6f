/**
 * The order of one (subscription, key) — its lane — as DynamoDB holds it (docs/ORDERING.md,
 * "Design"). Koerier's queues are standard SQS queues, which neither keep order nor hold a key
 * back; the lane does both: every event of the key is appended to it with the next sequence, and
 * only its head is on a queue at any time. Settling the head (delivered, or settled by the
 * failure policy) moves the lane on and hands back the next event to queue.
 *
 * An event is not appended the moment the router sees it: it is first *staged* in the lane by its
 * acceptance position, and appended — numbered — only once the settling window has passed since its
 * acceptance (lane-settling.ts), so an earlier event of the key routed a little later still gets
 * the lower number (docs/ORDERING.md, "Acceptance order").
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

/** The lane's first unsettled sequence, and whether it waits parked. */
export interface LaneHead {
  readonly next: number;
  readonly parked: boolean;
}

/** A staged event as `appendStaged` appended it. */
export interface SettledAppend {
  readonly deliveryId: string;
  readonly sequence: number;
  readonly body: string;
  /** Appended at the end, out of acceptance order (as `Appended.late`). */
  readonly late?: boolean;
}

/** An event staged in a lane, waiting for its settling window to pass. */
export interface StagedEvent {
  readonly deliveryId: string;
  /** Its acceptance position (acceptance-position.ts). */
  readonly position: number;
  /** Its delivery message, encoded, without a sequence yet. */
  readonly body: string;
}

export interface OrderedLanes {
  /**
   * Stages events by their positions (the router: a batch's, of any lanes, in as few writes as the
   * store allows). The same delivery again writes the same item.
   */
  stage(entries: readonly { readonly lane: LaneAddress; readonly event: StagedEvent }[]): Promise<void>;
  /** The staged events with a position up to `upTo`, lowest first, at most `limit` of them. */
  staged(lane: LaneAddress, upTo: number, limit: number): Promise<StagedEvent[]>;
  /** Removes a staged event once it is appended. */
  unstage(lane: LaneAddress, event: Pick<StagedEvent, 'deliveryId' | 'position'>): Promise<void>;
  /**
   * Takes the lane's settling lease for `holder` until `until` (epoch ms); false while another
   * holder's lease runs. One settler at a time appends, so a staged event is numbered once.
   */
  claimSettling(lane: LaneAddress, lease: { holder: string; until: number; now: number }): Promise<boolean>;
  /**
   * Appends staged events — as `staged` read them, lowest position first — under `settler`'s
   * settling lease, in that order, and takes them out of staging: a settle pass in a few requests
   * rather than several per event. Fenced by the lease: once another settler holds it, nothing more
   * is numbered (`leaseLost`; what was appended before is answered). An event that got its place
   * before keeps it — the router staged a settled event again, or a settler died between numbering
   * and unstaging — and one at or below a position numbered before is appended at the end, `late`.
   */
  appendStaged(
    lane: LaneAddress,
    events: readonly StagedEvent[],
    build: (staged: StagedEvent, sequence: number) => string,
    settler: string,
  ): Promise<{ readonly appended: readonly SettledAppend[]; readonly leaseLost: boolean }>;
  /**
   * Gives the lease back (only `holder`'s own) and answers the lane's head as the release found it
   * (read after everything the settler stored); undefined when `holder` no longer held the lease.
   */
  releaseSettling(lane: LaneAddress, holder: string): Promise<LaneHead | undefined>;
  /** The lane's first unsettled sequence, and whether it waits parked: which appended event is its head. */
  head(lane: LaneAddress): Promise<LaneHead>;
  /**
   * Appends a delivery at the lane's end; `build` makes the stored message for the sequence it
   * gets. The same `deliveryId` again (the router retrying a record) answers its first place.
   * `position` (acceptance-position.ts): the lane's numbers follow it — a sequence is only given
   * to a position above every one given before; a lower one is appended at the end, `late`.
   * `readHead: false` skips reading the lane's state afterwards (`head` is then false): a caller
   * appending several reads it once, with `head`, after the last.
   */
  append(
    lane: LaneAddress,
    deliveryId: string,
    build: (sequence: number) => string,
    position?: number,
    readHead?: boolean,
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
  /** The stored message of the appended event at `sequence`, while the lane has not moved past it. */
  stored(lane: LaneAddress, sequence: number): Promise<string | undefined>;
  /** The head failed and the policy parks it: the lane holds everything from it until a redrive. */
  park(lane: LaneAddress, sequence: number): Promise<void>;
}
