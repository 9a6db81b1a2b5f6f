/**
 * The lane sweeper (issue 33, docs/ORDERING.md "Sweeper"): a lane moves on only through queue
 * messages — a settle message numbers its staged events, the head's delivery message delivers the
 * head — so a lane whose message is lost for good (moved to the SQS dead-letter queue after its
 * last receive, deleted by an erasure with the event it carried, a crash between the lane's write
 * and the send) would wait until the key's next event, or for ever when its head was lost. The
 * sweeper, run on a schedule, finds such lanes through a sparse index (only lanes that wait on a
 * message are in it) and queues the lost message again.
 *
 * Queuing again is safe because a second copy is harmless by design: a settle message settles under
 * the lane's lease and appends a staged event once (its place `d#` is remembered), and a head's
 * copy takes the lane's hold, which lets one copy of a sequence through and drops the other
 * (`settled`, `held`). So the sweeper can err towards queuing: a copy too many costs a message.
 */
import { decodeDeliveryMessage } from './delivery-message.js';
import type { Outbox, OutboxAddress } from './outbox.js';
import { settledUpTo } from '../ordering/lane-settling.js';
import type { LaneAddress, OrderedLanes } from '../ordering/ordered-lanes.js';

/** What the sweeper reads of a lane's state. */
export interface SweptLaneState {
  readonly next: number;
  /** The highest sequence given (0: none). */
  readonly last: number;
  readonly parked: boolean;
  /** Until when the head's hold runs (epoch ms); undefined when nobody holds it. */
  readonly holdUntil?: number | undefined;
  /** Until when a settler's lease runs (epoch ms); undefined when nobody settles. */
  readonly settleUntil?: number | undefined;
}

/** A lane the index names, with the time its wait began (epoch ms). */
export interface SweepEntry {
  readonly lane: LaneAddress;
  readonly since: number;
}

/**
 * The sweep index (functions/aws/dynamodb-lane-sweep-index.ts): attributes on items the lanes write
 * anyway — a staged event carries its acceptance time, a lane's state the time its head was last
 * released — so an event costs no request more.
 */
export interface LaneSweepIndex {
  /** Lanes with a staged event accepted at or before `before` (epoch ms), oldest first; a lane may repeat. */
  staged(before: number, limit: number): Promise<SweepEntry[]>;
  /** Lanes whose mark (head released, or a look the sweeper asked for) is at or before `before`. */
  marked(before: number, limit: number): Promise<SweepEntry[]>;
  state(lane: LaneAddress): Promise<SweptLaneState | undefined>;
  /** The stored delivery message of the lane's event at `sequence`, if it is still waiting. */
  stored(lane: LaneAddress, sequence: number): Promise<string | undefined>;
  /**
   * Takes the lane's staged events accepted at or before `before` out of the index: from now on the
   * lane's mark watches them, one entry per lane instead of one per event (a pull consumer away
   * for days would otherwise have the sweeper read every waiting event on every run).
   */
  unmarkStaged(lane: LaneAddress, before: number): Promise<void>;
  /**
   * Sets the lane's mark to `at` (undefined: removes it), only while it is still `seen` (undefined:
   * whatever it is): a head released meanwhile has set its own.
   */
  remark(lane: LaneAddress, seen: number | undefined, at: number | undefined): Promise<void>;
}

export interface SweepOptions {
  /** Epoch ms. */
  readonly now: number;
  readonly settlingWindowMs: number;
  /** How long past its settling window a staged event waits before its lane counts as stranded. */
  readonly stagedMarginMs: number;
  /** How long a released head may go untaken (and a lapsed hold unrenewed) before it counts as lost. */
  readonly headBoundMs: number;
  /** Index entries read per kind and run. */
  readonly limit: number;
}

export interface SweepDependencies {
  readonly index: LaneSweepIndex;
  readonly lanes: Pick<OrderedLanes, 'staged'>;
  /** The subscription's queue address; undefined when it is gone (its lanes are left to expire). */
  readonly subscription: (id: string) => Promise<OutboxAddress | undefined>;
  /**
   * Where the messages go (the subscription's queue). The ordered outbox is fine: a settle message
   * through it stages its event again (the same item) and goes out undelayed, its window long past.
   */
  readonly outbox: Pick<Outbox, 'enqueue'>;
}

export interface SweepReport {
  /** Lanes looked at. */
  readonly looked: number;
  /** Settle messages queued again. */
  readonly settles: number;
  /** Heads queued again. */
  readonly heads: number;
}

/** The longest a lane's next look is put off after a head queued again (a pull consumer that is away). */
const MAX_BACKOFF_MS = 24 * 3600_000;

export async function sweepLanes(deps: SweepDependencies, options: SweepOptions): Promise<SweepReport> {
  const { now, settlingWindowMs, stagedMarginMs, headBoundMs, limit } = options;
  const report = { looked: 0, settles: 0, heads: 0 };
  const stagedBefore = now - settlingWindowMs - stagedMarginMs;

  for (const { lane } of distinct(await deps.index.staged(stagedBefore, limit))) {
    report.looked++;
    const subscription = await deps.subscription(lane.subscriptionId);
    if (subscription === undefined) continue;
    const state = await deps.index.state(lane);
    if ((await requeueSettle(deps, subscription, lane, state, options)) === 'queued') report.settles++;
    // Watched through the lane's mark from now on: looked at again after the head bound.
    await deps.index.unmarkStaged(lane, stagedBefore);
    await deps.index.remark(lane, undefined, now);
  }

  for (const { lane, since } of distinct(await deps.index.marked(now - headBoundMs, limit))) {
    report.looked++;
    const subscription = await deps.subscription(lane.subscriptionId);
    if (subscription === undefined) {
      await deps.index.remark(lane, since, undefined);
      continue;
    }
    const state = await deps.index.state(lane);
    const settle = await requeueSettle(deps, subscription, lane, state, options);
    if (settle === 'queued') report.settles++;
    const backoff = now + Math.min(Math.max(now - since, headBoundMs), MAX_BACKOFF_MS);
    if (state === undefined || state.parked || state.next > state.last) {
      // Nothing released to deliver (caught up, or parked until a redrive); staged events still
      // waiting keep the lane in view.
      await deps.index.remark(lane, since, settle === 'none' ? undefined : backoff);
      continue;
    }
    if (state.holdUntil !== undefined && state.holdUntil > now - headBoundMs) {
      // In flight (or its hold only just lapsed): looked at again once the bound has passed since.
      await deps.index.remark(lane, since, state.holdUntil);
      continue;
    }
    const body = await deps.index.stored(lane, state.next);
    if (body !== undefined) {
      await deps.outbox.enqueue(subscription, [decodeDeliveryMessage(body)]);
      report.heads++;
    }
    await deps.index.remark(lane, since, backoff);
  }
  return report;
}

/**
 * Queues the lane's oldest staged event whose window has passed as its settle message (a staged
 * event's body is the router's settle message: ordered, positioned, unnumbered), unless a settler
 * holds the lane's lease.
 */
async function requeueSettle(
  deps: SweepDependencies,
  subscription: OutboxAddress,
  lane: LaneAddress,
  state: SweptLaneState | undefined,
  options: SweepOptions,
): Promise<'queued' | 'busy' | 'none'> {
  if (state?.settleUntil !== undefined && state.settleUntil >= options.now) return 'busy';
  const [oldest] = await deps.lanes.staged(lane, settledUpTo(options.now, options.settlingWindowMs), 1);
  if (oldest === undefined) return 'none';
  await deps.outbox.enqueue(subscription, [decodeDeliveryMessage(oldest.body)]);
  return 'queued';
}

function distinct(entries: readonly SweepEntry[]): SweepEntry[] {
  const seen = new Map<string, SweepEntry>();
  for (const entry of entries) {
    const id = JSON.stringify([entry.lane.subscriptionId, entry.lane.key]);
    if (!seen.has(id)) seen.set(id, entry);
  }
  return [...seen.values()];
}
