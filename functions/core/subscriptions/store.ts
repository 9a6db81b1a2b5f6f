/**
 * The subscription store port. An implementation keeps the route index in step with the records
 * (routable subscriptions, and only those, have route entries), so callers never touch the index.
 */
import type { Subscription, SubscriptionStatus, SuspensionCause } from './subscription.js';

/** A subscription as a caller writes it: the store assigns `version` and `routeKeys`. */
export type SubscriptionDraft = Omit<Subscription, 'version' | 'routeKeys'>;

export interface SubscriptionPage {
  readonly items: readonly Subscription[];
  /** Opaque; pass it back to get the next page. Absent (or undefined) on the last page. */
  readonly cursor?: string | undefined;
}

export interface SubscriptionStore {
  get(id: string): Promise<Subscription | undefined>;
  /** Throws `SubscriptionConflictError` when the id exists. */
  create(draft: SubscriptionDraft): Promise<Subscription>;
  /** Replaces `previous`; throws `SubscriptionConflictError` when it changed meanwhile. */
  save(draft: SubscriptionDraft, previous: Subscription): Promise<Subscription>;
  /** Throws `SubscriptionConflictError` when it changed meanwhile. */
  delete(previous: Subscription): Promise<void>;
  /** The owner's subscriptions, oldest first. Throws `InvalidCursorError` for a cursor not of this owner. */
  listByOwner(owner: string, page: { limit: number; cursor?: string | undefined }): Promise<SubscriptionPage>;
  /** Every client's subscriptions, for an admin (issue 12 item 8), in no particular order. Throws `InvalidCursorError` for a cursor not of this list. */
  listAll(page: { limit: number; cursor?: string | undefined }): Promise<SubscriptionPage>;
  /**
   * For the delivery function (retire on 410, suspend, resume): sets the status and reason and
   * keeps the route index in step. Undefined when the subscription does not exist; throws
   * `SubscriptionConflictError` when `expectedVersion` is given and no longer current.
   * `suspendedFor` is kept only with the status `suspended`.
   */
  updateStatus(
    id: string,
    status: SubscriptionStatus,
    reason: string | undefined,
    expectedVersion?: number,
    suspendedFor?: SuspensionCause,
  ): Promise<Subscription | undefined>;
}

export class SubscriptionConflictError extends Error {
  override name = 'SubscriptionConflictError';
}

export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';
}

/**
 * What `updateStatus` saves, the same for every store: the current record with the new status and
 * reason (a suspension's cause only while suspended), or a conflict when the record moved past
 * `expectedVersion` meanwhile.
 */
export function withStatus(
  current: Subscription,
  change: {
    status: SubscriptionStatus;
    reason: string | undefined;
    expectedVersion?: number;
    suspendedFor?: SuspensionCause;
    now: number;
  },
): SubscriptionDraft {
  if (change.expectedVersion !== undefined && current.version !== change.expectedVersion) {
    throw new SubscriptionConflictError(
      `subscription ${current.id} is at version ${current.version}, not ${change.expectedVersion}`,
    );
  }
  const { routeKeys: _routeKeys, version: _version, statusReason: _reason, suspendedFor: _cause, ...rest } = current;
  return {
    ...rest,
    status: change.status,
    ...(change.reason === undefined ? {} : { statusReason: change.reason }),
    ...(change.status === 'suspended' && change.suspendedFor !== undefined
      ? { suspendedFor: change.suspendedFor }
      : {}),
    updatedAt: new Date(change.now).toISOString(),
  };
}

/**
 * `updateStatus` for every store: read the record, apply `withStatus`, save it under the version
 * read (so a concurrent change is a conflict, never overwritten). Undefined when there is none.
 */
export async function updateStatusVia(
  store: Pick<SubscriptionStore, 'get' | 'save'>,
  now: number,
  id: string,
  change: {
    status: SubscriptionStatus;
    reason: string | undefined;
    expectedVersion: number | undefined;
    suspendedFor: SuspensionCause | undefined;
  },
): Promise<Subscription | undefined> {
  const current = await store.get(id);
  if (!current) return undefined;
  const { status, reason, expectedVersion, suspendedFor } = change;
  return store.save(
    withStatus(current, {
      status,
      reason,
      ...(expectedVersion === undefined ? {} : { expectedVersion }),
      ...(suspendedFor === undefined ? {} : { suspendedFor }),
      now,
    }),
    current,
  );
}
