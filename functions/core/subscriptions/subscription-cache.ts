/**
 * The delivery function reads a subscription for every batch, the pull function for every receive
 * and settle; a few seconds of caching per container saves most of those reads. The price: a
 * change made elsewhere (retired, suspended, new credential, a PATCH) takes effect here within
 * `ttlMs`. Changes this container makes itself take effect at once; the dispatcher reads through
 * before it holds a delivery back for a status, and the pull app when a queue turns out gone.
 */
import { systemClock, type Clock } from '../ports/clock.js';
import type { Subscription, SubscriptionStatus, SuspensionCause } from './subscription.js';

export interface SubscriptionSource {
  get(id: string): Promise<Subscription | undefined>;
  updateStatus(
    id: string,
    status: SubscriptionStatus,
    reason: string,
    expectedVersion?: number,
    suspendedFor?: SuspensionCause,
  ): Promise<unknown>;
}

const MAX_ENTRIES = 10_000;

export function cachedSubscriptions(source: SubscriptionSource, ttlMs: number, clock: Clock = systemClock) {
  const entries = new Map<string, { readonly at: number; readonly value: Promise<Subscription | undefined> }>();
  return {
    /** `fresh` reads through, for a decision that must not rest on a stale status. */
    get(id: string, options: { fresh?: boolean } = {}): Promise<Subscription | undefined> {
      const cached = entries.get(id);
      if (!options.fresh && cached && clock() - cached.at < ttlMs) return cached.value;
      if (entries.size >= MAX_ENTRIES) entries.clear();
      const value = source.get(id);
      entries.set(id, { at: clock(), value });
      // A failed read is not remembered.
      value.catch(() => entries.delete(id));
      return value;
    },
    async updateStatus(
      id: string,
      status: SubscriptionStatus,
      reason: string,
      suspendedFor?: SuspensionCause,
    ): Promise<void> {
      entries.delete(id);
      await source.updateStatus(id, status, reason, undefined, suspendedFor);
      entries.delete(id);
    },
  };
}
