/**
 * A subscription's last 7 days of deliveries per hour, from the attempt records Koerier keeps for
 * 7 days (GET /subscriptions/{id}/deliveries, issue 30 item 4). The gateway's counters (EMF in
 * CloudWatch, Prometheus on the laptop) are written per function and stack, not kept per
 * subscription and hour where a subscriber may read them; the attempt history is, with the same
 * outcomes and latencies the counters are made from. Pure: no DOM, no API.
 */
export const HOUR_MS = 3_600_000;
export const WEEK_HOURS = 7 * 24;

export interface WeekAttempt {
  readonly at: string;
  readonly outcome: string;
  readonly latencyMs?: number;
}

export interface HourlyDeliveries {
  /** Start of each hour, epoch ms, oldest first; the last is the current hour. */
  readonly hours: readonly number[];
  readonly delivered: readonly number[];
  /** Failed attempts that are tried again or ended the subscription (`retrying`, `retired`). */
  readonly failed: readonly number[];
  readonly deadLettered: readonly number[];
  /** Median and highest latency of the hour's attempts, ms; undefined in an hour without attempts. */
  readonly medianLatency: readonly (number | undefined)[];
  readonly highestLatency: readonly (number | undefined)[];
  /** Attempts counted (those within the 7 days). */
  readonly counted: number;
}

export function hourlyDeliveries(attempts: readonly WeekAttempt[], now: number): HourlyDeliveries {
  const last = Math.floor(now / HOUR_MS) * HOUR_MS;
  const first = last - (WEEK_HOURS - 1) * HOUR_MS;
  const hours = Array.from({ length: WEEK_HOURS }, (_, i) => first + i * HOUR_MS);
  const zeros = () => hours.map(() => 0);
  const delivered = zeros();
  const failed = zeros();
  const deadLettered = zeros();
  const latencies = hours.map((): number[] => []);
  let counted = 0;
  for (const attempt of attempts) {
    const at = Date.parse(attempt.at);
    if (!Number.isFinite(at) || at < first || at >= last + HOUR_MS) continue;
    const slot = Math.floor((at - first) / HOUR_MS);
    counted++;
    if (attempt.outcome === 'delivered') delivered[slot]!++;
    else if (attempt.outcome === 'dead-lettered') deadLettered[slot]!++;
    else failed[slot]!++;
    if (attempt.latencyMs !== undefined && Number.isFinite(attempt.latencyMs)) latencies[slot]!.push(attempt.latencyMs);
  }
  const sorted = latencies.map((list) => list.sort((a, b) => a - b));
  return {
    hours,
    delivered,
    failed,
    deadLettered,
    medianLatency: sorted.map((list) => (list.length === 0 ? undefined : median(list))),
    highestLatency: sorted.map((list) => list.at(-1)),
    counted,
  };
}

/** The middle value of a sorted list; the mean of the two middle ones for an even count. */
function median(sorted: readonly number[]): number {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : Math.round((sorted[middle - 1]! + sorted[middle]!) / 2);
}
