/**
 * A pull subscription's place in its owner's quota (issue 28 item 13, `maxPullSubscriptions`):
 * each holds two SQS queues, so a client holds at most its limit of them. The place is taken
 * before the queues are made (functions/core/quotas/holds.ts: a write conditional on the ledger's
 * version, so two creates at once cannot both take the last place) and given back when the
 * subscription is deleted. Push subscriptions are not counted: they hold no queue of their own.
 */
import { countQuotaExceeded } from '../quotas/client-quotas.js';
import { releaseHold, takeHold, type HoldLedger } from '../quotas/holds.js';
import type { SubscriptionStore } from './store.js';

export interface PullSubscriptionQuota {
  readonly holds: HoldLedger;
  /** The owner's limit now: its partner's own, else the deployment's default. */
  readonly limitOf: (owner: string) => number;
}

/**
 * A place taken whose subscription is not stored (yet) still counts this long: longer than the
 * subscriptions function may run (30 s), so a create still making its queues is never weeded out,
 * and a create that died between its place and its record frees the place after it.
 */
export const UNSTORED_PLACE_MS = 120_000;

const PAGE = 100;

export function pullHoldsKey(owner: string): string {
  return `pull-subscriptions/${owner}`;
}

/** Takes `id`'s place in `owner`'s quota, or throws the 409 `quota-exceeded`. */
export async function holdPullSubscription(
  quota: PullSubscriptionQuota,
  store: Pick<SubscriptionStore, 'get' | 'listByOwner'>,
  owner: string,
  id: string,
  now: number,
): Promise<void> {
  const limit = quota.limitOf(owner);
  const outcome = await takeHold(quota.holds, {
    key: pullHoldsKey(owner),
    id,
    limit,
    now,
    isLive: async (held, takenAt) => now - takenAt < UNSTORED_PLACE_MS || (await store.get(held)) !== undefined,
    // Pull subscriptions made before the quota was counted count from the first create after it.
    initial: () => pullSubscriptionsOf(store, owner),
  });
  if (!outcome.taken) {
    throw countQuotaExceeded(
      owner,
      'maxPullSubscriptions',
      limit,
      outcome.held,
      'Delete a pull subscription it no longer uses, or use a push subscription.',
    );
  }
}

/** Gives the place of a deleted pull subscription back. */
export function releasePullSubscription(quota: PullSubscriptionQuota, owner: string, id: string): Promise<void> {
  return releaseHold(quota.holds, pullHoldsKey(owner), id);
}

async function pullSubscriptionsOf(store: Pick<SubscriptionStore, 'listByOwner'>, owner: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listByOwner(owner, { limit: PAGE, cursor });
    ids.push(
      ...page.items.filter((subscription) => subscription.delivery === 'pull').map((subscription) => subscription.id),
    );
    cursor = page.items.length > 0 ? page.cursor : undefined;
  } while (cursor);
  return ids;
}
