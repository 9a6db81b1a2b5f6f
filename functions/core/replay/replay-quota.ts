/**
 * Replays running at once on one client's subscriptions (issue 28 item 13,
 * `maxConcurrentReplays`): each scans the archive, so a client with many subscriptions could
 * otherwise keep the replay worker scanning for it alone. The client is the subscription's owner,
 * whoever starts the replay (an admin's replay counts against the owner, whose events it sends).
 *
 * The place is taken before the replay's slot (functions/core/quotas/holds.ts, a write conditional
 * on the ledger's version, so two starts at once cannot both take the last place). A replay that
 * ends (finished, failed, cancelled) is not given back one by one: its record says it is over, so
 * it no longer counts when the ledger looks full, nor does a running one whose lease ran out.
 */
import { countQuotaExceeded } from '../quotas/client-quotas.js';
import { releaseHold, takeHold, type HoldLedger } from '../quotas/holds.js';
import type { ReplayRecord, ReplayStore } from './ports.js';

export interface ReplayQuota {
  readonly holds: HoldLedger;
  /** The owner's limit now: its partner's own, else the deployment's default. */
  readonly limitOf: (owner: string) => number;
}

/** A place whose replay record is not stored (yet) still counts this long: longer than the replays function may run (10 s). */
export const UNSTORED_REPLAY_MS = 60_000;

const holdsKey = (owner: string) => `replays/${owner}`;
/** A replay id is a UUID, so the first `@` ends it. */
const placeOf = (record: Pick<ReplayRecord, 'subscriptionId' | 'replayId'>) =>
  `${record.replayId}@${record.subscriptionId}`;

/** Takes the replay's place in `owner`'s quota, or throws the 409 `quota-exceeded`. */
export async function holdReplay(
  quota: ReplayQuota,
  store: Pick<ReplayStore, 'get'>,
  owner: string,
  record: ReplayRecord,
  leaseMs: number,
): Promise<void> {
  const now = record.createdAt;
  const limit = quota.limitOf(owner);
  const outcome = await takeHold(quota.holds, {
    key: holdsKey(owner),
    id: placeOf(record),
    limit,
    now,
    isLive: async (place, takenAt) => {
      const at = place.indexOf('@');
      const held = await store.get(place.slice(at + 1), place.slice(0, at));
      if (!held) return now - takenAt < UNSTORED_REPLAY_MS;
      return held.state === 'running' && held.updatedAt + leaseMs >= now;
    },
  });
  if (!outcome.taken) {
    throw countQuotaExceeded(
      owner,
      'maxConcurrentReplays',
      limit,
      outcome.held,
      'Wait for a running replay to finish, or cancel one.',
    );
  }
}

/** Gives the place back at once, for a replay that did not start after all. */
export function releaseReplay(quota: ReplayQuota, owner: string, record: ReplayRecord): Promise<void> {
  return releaseHold(quota.holds, holdsKey(owner), placeOf(record));
}
