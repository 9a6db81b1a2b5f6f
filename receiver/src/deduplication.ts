/**
 * Deduplication on `Idempotency-Key` (EDU-IDEM-15: a duplicate delivery is accepted and ignored).
 * Koerier sends every attempt of a delivery with the same key and the same body (EDU-IDEM-9, 11),
 * so a retry of a delivery the receiver already handled, because its answer was lost, is
 * recognised and not handed to the handler again. The key is remembered only after the handler
 * succeeded, for the key's lifetime (EDU-IDEM-7: 7 days, past which Koerier no longer retries
 * under it, EDU-IDEM-12).
 *
 * The store is pluggable: several receiver processes share one (Redis, a database table) so that a
 * retry reaching another process is still recognised. The kit keeps two entries a delivery: the
 * key, and the key with a fingerprint of what was delivered, so that the same key with other
 * content is told apart (EDU-IDEM-8: refused with 422).
 */

export interface DeduplicationStore {
  /** Whether `key` was remembered and has not expired. */
  seen(key: string): Promise<boolean>;
  /** Remember `key` for `ttlSeconds`. */
  remember(key: string, ttlSeconds: number): Promise<void>;
}

/** EDU-IDEM-7: an idempotency entry lives 7 days. */
export const DEFAULT_KEY_TTL_SECONDS = 7 * 24 * 3600;

/**
 * The default store: this process's memory, bounded to `maxEntries` (the oldest go first), so a
 * flood of keys cannot grow it without end. Forgotten on restart; use a shared store for more.
 */
export function memoryDeduplicationStore(
  options: { readonly maxEntries?: number; readonly now?: () => number } = {},
): DeduplicationStore {
  const maxEntries = options.maxEntries ?? 100_000;
  const now = options.now ?? Date.now;
  // Insertion order is expiry order for one TTL; a Map iterates in insertion order.
  const expiries = new Map<string, number>();
  return {
    async seen(key) {
      const expiry = expiries.get(key);
      if (expiry === undefined) return false;
      if (expiry > now()) return true;
      expiries.delete(key);
      return false;
    },
    async remember(key, ttlSeconds) {
      expiries.delete(key);
      expiries.set(key, now() + ttlSeconds * 1000);
      while (expiries.size > maxEntries) expiries.delete(expiries.keys().next().value!);
    },
  };
}
