/**
 * What batch delivery of an ordered subscription needs of a lane besides `OrderedLanes` (issue 33,
 * "Push": consecutive events of one key in one request; core/delivery/ordered-run.ts,
 * docs/ORDERING.md "Batches"). When a head is handed out to a target that takes batches, the
 * numbered events stored right behind it go in the same request — its *run* — and the lane is
 * settled over the whole run at once:
 *
 * - the run's end is fixed the first time a head's run is made (`fixRun`), so every attempt of the
 *   head, a retry or another copy after a lapsed hold, sends the same events under the same
 *   Idempotency-Key (EDU-IDEM-11);
 * - `advanceThrough` moves the lane past the run, `parkThrough` parks it at the run's first event
 *   with every event of the run a dead letter, each in one conditional write on the lane's state
 *   (dynalite has no transactions).
 *
 * Kept apart from OrderedLanes so that the lane store's other users (the router, pull, erasure)
 * are not touched by it.
 */
import type { LaneAddress } from './ordered-lanes.js';

/** A numbered event waiting in a lane: its sequence and its stored delivery message. */
export interface StoredLaneEvent {
  readonly sequence: number;
  readonly body: string;
}

export interface RunBehind {
  /** The run's end an earlier attempt of this head fixed (`fixRun`), when one did: `events` end there. */
  readonly through?: number;
  /**
   * The stored events from `head + 1` on, lowest first, consecutive: they stop before the first
   * number not stored (not yet appended, or numbered by a settler that has not stored it yet).
   */
  readonly events: readonly StoredLaneEvent[];
}

export interface LaneRuns {
  /** The events behind `head` that may join its run: at most `limit`, or up to the run's end fixed before. */
  behind(lane: LaneAddress, head: number, limit: number): Promise<RunBehind>;
  /**
   * Fixes `head` … `through` as the head's run when the lane's head is `head`, held by `holder`,
   * and no run was fixed for it before. Answers the end fixed now for `head` (this one, or an
   * earlier attempt's), or undefined when the lane is not at `head` held by `holder` and no run is fixed.
   */
  fixRun(lane: LaneAddress, head: number, through: number, holder: string): Promise<number | undefined>;
  /**
   * `first` … `last` are settled (delivered, or dead letters under `skip`): the lane's `next` moves
   * past `last`. When an earlier run parked as a whole (`parkThrough`) reaches past `last`, the lane
   * parks again at `last + 1`: that event is a dead letter whose redrive comes in its turn. Answers
   * the next event's stored message when the lane is free to send it now.
   */
  advanceThrough(lane: LaneAddress, first: number, last: number): Promise<string | undefined>;
  /**
   * The run `first` … `last` failed and the policy parks it: the lane waits parked at `first`, and
   * each redrive of the run's dead letters is delivered in turn (`advanceThrough` parks again at the
   * next one) before the events after `last` go on. A single event (`first === last`) only parks:
   * a redrive failing again leaves an earlier run's end as it was.
   */
  parkThrough(lane: LaneAddress, first: number, last: number): Promise<void>;
}
