/**
 * The lane sweeper (issue 33, docs/ORDERING.md "Sweeper"), run on a schedule: finds ordered lanes
 * whose settle message or head message was lost for good and queues it again
 * (core/delivery-message/lane-sweep.ts).
 */
import { sweepLanes } from '../core/delivery-message/lane-sweep.js';
import type { ScheduledApp } from './scheduled-app.js';
import type { KoerierDependencies } from './dependencies.js';

/** How long past its settling window a staged event may wait for its settle message: a busy deliveries queue's lag. */
export const STAGED_MARGIN_MS = 5 * 60_000;
/**
 * How long a released head may go untaken, and a lapsed hold unrenewed, before its message counts
 * as lost: past the hold's 20 minutes after a receive (ordered-dispatch.ts), so a head waiting for
 * a retry under its hold is never copied.
 */
export const HEAD_BOUND_MS = 30 * 60_000;
/** Index entries read per kind and run: a run stays well inside the function's timeout. */
const ENTRIES_PER_RUN = 500;

export type LaneSweeperAppDependencies = Pick<
  KoerierDependencies,
  'config' | 'log' | 'clock' | 'laneSweepIndex' | 'orderedLanes' | 'subscriptions' | 'outbox'
>;

export function laneSweeperApp(deps: LaneSweeperAppDependencies): ScheduledApp {
  return async () => {
    const report = await sweepLanes(
      {
        index: deps.laneSweepIndex,
        lanes: deps.orderedLanes,
        subscription: async (id) => {
          const subscription = await deps.subscriptions.get(id);
          return subscription === undefined ? undefined : { id: subscription.id, delivery: subscription.delivery };
        },
        outbox: deps.outbox,
      },
      {
        now: deps.clock(),
        settlingWindowMs: deps.config.orderingSettlingMs,
        stagedMarginMs: STAGED_MARGIN_MS,
        headBoundMs: HEAD_BOUND_MS,
        limit: ENTRIES_PER_RUN,
      },
    );
    // A queued message is the sign of a message lost: worth a warning; a quiet run is not worth a line.
    if (report.settles > 0 || report.heads > 0)
      deps.log.warn('lane sweeper queued lost ordered messages again', { ...report });
  };
}
