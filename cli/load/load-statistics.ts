/**
 * What `koerier load` counts and how it reports it: latencies kept whole (a run is bounded, at most
 * a few million samples) so p99.9 is read off the sorted samples rather than estimated, answers
 * tallied by status, and the report as a table for people and JSON for scripts.
 */

/** The nearest-rank percentile (p in 0..100) of samples; undefined when there are none. */
export function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export interface LatencySummary {
  readonly count: number;
  readonly p50: number | undefined;
  readonly p99: number | undefined;
  readonly p999: number | undefined;
  readonly max: number | undefined;
}

export function summarise(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (value: number | undefined) => (value === undefined ? undefined : Math.round(value * 10) / 10);
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    p999: round(percentile(sorted, 99.9)),
    max: round(sorted.at(-1)),
  };
}

export interface PublishFigures {
  readonly rate: number;
  readonly durationSeconds: number;
  readonly batch: number;
  readonly requests: number;
  readonly eventsSent: number;
  readonly accepted: number;
  /** Accepted events a 202 marked duplicate: none is expected, as every event has a fresh id. */
  readonly duplicates: number;
  /** Accepted events per second of the run (first request sent to last answer). */
  readonly acceptedPerSecond: number;
  readonly elapsedSeconds: number;
  /** Latency of the 202 answers, in ms. */
  readonly latency202: LatencySummary;
  /** Answers other than 202 by status (`network` for no answer at all), in requests. */
  readonly errorsByStatus: Readonly<Record<string, number>>;
  readonly throttled429: number;
  /** Requests sent more than LATE_MS after their turn: the generator (or the gateway) could not hold the rate. */
  readonly lateRequests: number;
}

export interface EndToEndFigures {
  readonly subscription: string;
  readonly received: number;
  /** Accepted events never received within the drain time. */
  readonly missing: number;
  readonly receivedTwice: number;
  /** From the event's `time` (set when sent) to its receipt by the pull, in ms. */
  readonly delay: LatencySummary;
}

export interface LoadReport {
  readonly publish: PublishFigures;
  readonly endToEnd?: EndToEndFigures;
}

export function formatReport(report: LoadReport): string {
  const { publish, endToEnd } = report;
  const ms = (value: number | undefined) => (value === undefined ? '-' : `${value} ms`);
  const lines = [
    `Offered  ${publish.rate} events/s for ${publish.durationSeconds} s in requests of ${publish.batch} ` +
      `(${publish.requests} requests, ${publish.eventsSent} events)`,
    `Accepted ${publish.accepted} events in ${publish.elapsedSeconds} s: ${publish.acceptedPerSecond} events/s` +
      (publish.duplicates > 0 ? ` (${publish.duplicates} marked duplicate)` : ''),
    `202      p50 ${ms(publish.latency202.p50)}  p99 ${ms(publish.latency202.p99)}  p99.9 ${ms(publish.latency202.p999)}  ` +
      `max ${ms(publish.latency202.max)}  (${publish.latency202.count} answers)`,
    `429      ${publish.throttled429} requests`,
    `Errors   ${
      Object.entries(publish.errorsByStatus)
        .map(([status, count]) => `${status}: ${count}`)
        .join(', ') || 'none'
    }`,
    `Late     ${publish.lateRequests} requests sent late (the generator or the gateway could not hold the rate)`,
  ];
  if (endToEnd)
    lines.push(
      `Pulled   ${endToEnd.received} events from ${endToEnd.subscription}, ${endToEnd.missing} missing, ` +
        `${endToEnd.receivedTwice} received twice`,
      `End to end p50 ${ms(endToEnd.delay.p50)}  p99 ${ms(endToEnd.delay.p99)}  p99.9 ${ms(endToEnd.delay.p999)}  ` +
        `max ${ms(endToEnd.delay.max)}`,
    );
  return `${lines.join('\n')}\n`;
}
