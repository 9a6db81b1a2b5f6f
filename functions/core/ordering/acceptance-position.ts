/**
 * An accepted event's place in acceptance order (issue 33, docs/ORDERING.md "Acceptance order"):
 * the wall clock in epoch milliseconds at the ingest, times 1,000, plus a count within the process
 * so that it strictly increases there (two events of one request, or two requests in the same
 * millisecond, never share one). Across
 * processes it is as good as their clocks agree: a publisher that waits for a 202 before its next
 * event gets a later position as long as the clocks differ by less than its round trip.
 * A number below 2^53 until the year 2255, so it travels as a plain JSON number.
 */
let last = 0;

// Date.now(), not performance.now(): a Lambda container's monotonic clock may stand still while
// it is frozen between invocations, and positions must compare across containers.
export function nextAcceptancePosition(nowMicros: number = Date.now() * 1000): number {
  last = Math.max(nowMicros, last + 1);
  return last;
}

/** The position as the inbound message attribute carries it; undefined when absent or not a position. */
export function parseAcceptancePosition(text: string | undefined): number | undefined {
  if (text === undefined || !/^[1-9]\d{0,15}$/.test(text)) return undefined;
  return Number(text);
}
