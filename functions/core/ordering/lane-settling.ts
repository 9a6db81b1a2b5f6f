/**
 * Settling a lane (issue 33, docs/ORDERING.md "Acceptance order"): the events the router staged in a
 * lane are appended — numbered — in acceptance-position order once the settling window has passed
 * since their acceptance. The router does not wait for the window itself: it stages and queues a
 * settle message delayed by the window, so a busy router never holds a batch (and the events
 * behind it in the inbound queue) for the window, which is what used to make it late.
 *
 * One settler at a time per lane (a lease on the lane's state, and every numbering fenced by it):
 * staged events are appended in order, a few at a time, each group fully (numbered, stored, its
 * places remembered, unstaged) before the next, and the lane's state names the group numbered last,
 * so a settler that takes over after a crash finds every earlier event's place again and numbers
 * nothing twice (`OrderedLanes.appendStaged`).
 */
import type { LaneAddress, LaneHead, OrderedLanes, SettledAppend, StagedEvent } from './ordered-lanes.js';

/**
 * The log line of an event appended out of acceptance order (docs/ORDERING.md): the stack's alarm
 * on late appends counts this exact message in the delivery function's log (lib/constructs/operator-alarms.ts).
 */
export const LATE_APPEND_MESSAGE = 'ordered event appended out of acceptance order: it came past the settling window';

/** How long a settler's lease lasts: a settler that stops without giving it back holds up its lane this long. */
export const SETTLING_LEASE_MS = 60_000;
/** Staged events read per query. */
const STAGED_PAGE = 100;

export interface SettleOptions {
  /** Who settles: a queue message id. */
  readonly holder: string;
  /** Epoch milliseconds. */
  readonly now: number;
  readonly settlingWindowMs: number;
  /** The stored message of a staged event at `sequence`. */
  readonly build: (staged: StagedEvent, sequence: number) => string;
}

export type SettleOutcome =
  | {
      readonly kind: 'settled';
      /** The stored messages of appended events that are now the lane's head: the caller queues them. */
      readonly heads: readonly string[];
      /** Events appended out of acceptance order: staged after a later one was numbered. */
      readonly late: readonly { readonly deliveryId: string; readonly sequence: number }[];
      readonly appended: number;
    }
  /** Another settler holds the lane: try again shortly. */
  | { readonly kind: 'busy' };

/** The highest acceptance position whose settling window has passed at `now`. */
export function settledUpTo(now: number, settlingWindowMs: number): number {
  return (now - settlingWindowMs) * 1000 + 999;
}

/** When the settling window of the event at `position` has passed (epoch ms). */
export function settlesAt(position: number, settlingWindowMs: number): number {
  return Math.floor(position / 1000) + settlingWindowMs;
}

export async function settleLane(
  lanes: OrderedLanes,
  lane: LaneAddress,
  options: SettleOptions,
): Promise<SettleOutcome> {
  const { holder, now, settlingWindowMs } = options;
  const upTo = settledUpTo(now, settlingWindowMs);
  // The router queues a settle message per lane and router batch, and the first pass past the
  // window appends every event of the lane whose window has passed: most messages find theirs
  // appended already. Looked for before the lease, such a message costs one read instead of the
  // lease's two writes and the read. Nothing staged means nothing of the message's own is (it was
  // staged before the message was sent, and its window has passed): a pass appended it.
  if ((await lanes.staged(lane, upTo, 1)).length === 0) return { kind: 'settled', heads: [], late: [], appended: 0 };
  if (!(await lanes.claimSettling(lane, { holder, until: now + SETTLING_LEASE_MS, now }))) return { kind: 'busy' };
  const appended: SettledAppend[] = [];
  const late: { deliveryId: string; sequence: number }[] = [];
  let released: LaneHead | undefined;
  try {
    for (;;) {
      const page = await lanes.staged(lane, upTo, STAGED_PAGE);
      const pass = await lanes.appendStaged(lane, page, options.build, holder);
      for (const one of pass.appended) {
        if (one.late === true) late.push({ deliveryId: one.deliveryId, sequence: one.sequence });
        appended.push(one);
      }
      // Another settler took the lease over (this one outlasted it): what is left is its to append.
      if (pass.leaseLost || page.length < STAGED_PAGE) break;
    }
  } finally {
    released = await lanes.releaseSettling(lane, holder);
  }
  if (appended.length === 0) return { kind: 'settled', heads: [], late, appended: 0 };
  // Stored first, read after (the delivery function advancing the lane does the reverse): if the
  // lane reached one of these meanwhile, either it or we queue it (docs/ORDERING.md, "Design" 4).
  // The release read the head after the stores; a settler that lost its lease reads it itself.
  const { next, parked } = released ?? (await lanes.head(lane));
  const heads = parked ? [] : appended.filter((one) => one.sequence === next).map((one) => one.body);
  return { kind: 'settled', heads, late, appended: appended.length };
}
