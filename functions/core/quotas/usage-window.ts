/**
 * An amount per client per fixed window (the upload quota: bytes granted per clock hour), counted
 * where every container sees it: one item per client and window, added to by a conditional write
 * that only succeeds while the total stays within the limit (functions/aws/dynamodb-usage-window.ts).
 * So two grants at once cannot together pass the limit. The window is fixed, not sliding: a
 * client may be granted its limit at the end of one hour and again at the start of the next.
 */

export type UsageDecision = { readonly added: true } | { readonly added: false; readonly used: number };

export interface UsageWindow {
  /** Adds `amount` to the window of `key` starting at `windowStart` if the total stays at most `limit`; else answers what is used. */
  add(key: string, amount: number, limit: number, windowStart: number, windowMs: number): Promise<UsageDecision>;
  /** Takes `amount` off again (a grant that failed after it was counted). */
  subtract(key: string, amount: number, windowStart: number): Promise<void>;
}

/** The window `now` falls in and the seconds until it ends (at least 1, for `Retry-After`). */
export function windowAt(
  now: number,
  windowMs: number,
): { readonly start: number; readonly retryAfterSeconds: number } {
  const start = now - (now % windowMs);
  return { start, retryAfterSeconds: Math.max(1, Math.ceil((start + windowMs - now) / 1000)) };
}
