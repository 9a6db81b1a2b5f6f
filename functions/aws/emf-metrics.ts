/**
 * The `Metrics` port in AWS: CloudWatch Embedded Metric Format records written to standard output,
 * where CloudWatch reads them (no PutMetricData call). Written here rather than through Powertools
 * for AWS Lambda's Metrics, whose records these are byte for byte but for the timestamp
 * (test/unit/observability/emf-metrics.test.ts compares them): Powertools was about 11 KB of every
 * bundle for a record format of a few lines (issue 15, item 4).
 *
 * Figures are summed in memory during an invocation and written by `flush()` (the handler
 * adapters call it once per invocation): one EMF record per set of dimension values, so a batch of
 * 10 deliveries to one subscription costs a handful of lines, not one per attempt. Every record
 * carries `service` and `Stack` (the stack's name), so two stacks in one account keep their
 * figures apart.
 *
 * Where the per-subscription line is drawn: `SubscriptionDeliveries` (per subscription and
 * outcome), `SubscriptionDeadLetters` and the replay figures carry `SubscriptionId`; latency, the
 * ingest and the router do not. Each per-subscription metric is a custom metric CloudWatch bills
 * per month: about 4 × the number of subscriptions in all (docs/OPERATIONS.md, "Metrics").
 */
import type { Metrics } from '../core/ports/metrics.js';
import { observability } from '../config/resources.js';

/** The CloudWatch units Koerier's figures are in. */
const MetricUnit = { Count: 'Count', Milliseconds: 'Milliseconds' } as const;

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

interface Pending {
  readonly dimensions: Readonly<Record<string, string>>;
  readonly values: Map<string, { unit: Unit; total: number; samples: number[] }>;
}

/** EMF takes at most 100 values of one metric per record; latency beyond that is sampled by the first 100. */
const MAX_SAMPLES = 100;

export class EmfMetrics implements Metrics {
  private pending = new Map<string, Pending>();

  /** `write` replaces standard output (tests read the records). */
  constructor(
    private readonly stack: string,
    private readonly write?: (line: string) => void,
  ) {}

  eventsAccepted(count: number): void {
    if (count > 0) this.add({}, observability.metrics.eventsAccepted, MetricUnit.Count, count);
  }

  publishRejected(rule: string): void {
    this.add({ Rule: rule }, observability.metrics.publishRejected, MetricUnit.Count, 1);
  }

  eventsRouted(figures: { readonly routed: number; readonly duplicates: number; readonly deliveries: number }): void {
    const { metrics } = observability;
    this.add({}, metrics.eventsRouted, MetricUnit.Count, figures.routed);
    this.add({}, metrics.duplicatesDropped, MetricUnit.Count, figures.duplicates);
    this.add({}, metrics.deliveriesQueued, MetricUnit.Count, figures.deliveries);
  }

  deliveryAttempted(attempt: {
    readonly subscriptionId: string;
    readonly outcome: string;
    readonly latencyMs: number;
  }): void {
    const { metrics } = observability;
    this.add({ Outcome: attempt.outcome }, metrics.deliveryOutcomes, MetricUnit.Count, 1);
    this.add({}, metrics.attemptLatency, MetricUnit.Milliseconds, attempt.latencyMs, true);
    this.add(
      { SubscriptionId: attempt.subscriptionId, Outcome: attempt.outcome },
      metrics.subscriptionDeliveries,
      MetricUnit.Count,
      1,
    );
  }

  deadLettered(subscriptionId: string, reason: string): void {
    this.add({ Reason: reason }, observability.metrics.deadLetters, MetricUnit.Count, 1);
    this.add({ SubscriptionId: subscriptionId }, observability.metrics.subscriptionDeadLetters, MetricUnit.Count, 1);
  }

  replayProgress(
    subscriptionId: string,
    step: { readonly scanned: number; readonly matched: number; readonly sent: number; readonly failed: number },
  ): void {
    const { metrics } = observability;
    const dimensions = { SubscriptionId: subscriptionId };
    this.add(dimensions, metrics.replayScanned, MetricUnit.Count, step.scanned);
    this.add(dimensions, metrics.replayMatched, MetricUnit.Count, step.matched);
    this.add(dimensions, metrics.replaySent, MetricUnit.Count, step.sent);
    this.add(dimensions, metrics.replayFailed, MetricUnit.Count, step.failed);
  }

  awsRequestThrottled(service: string, operation: string): void {
    this.add(
      { Service: service, Operation: operation },
      observability.metrics.awsRequestsThrottled,
      MetricUnit.Count,
      1,
    );
  }

  flush(): void {
    const pending = [...this.pending.values()];
    this.pending = new Map();
    const write = this.write ?? ((line: string) => process.stdout.write(`${line}\n`));
    for (const { dimensions, values } of pending) {
      const figures = [...values];
      const record = {
        _aws: {
          Timestamp: Date.now(),
          CloudWatchMetrics: [
            {
              Namespace: observability.namespace,
              Dimensions: [['service', 'Stack', ...Object.keys(dimensions)]],
              Metrics: figures.map(([name, { unit }]) => ({ Name: name, Unit: unit })),
            },
          ],
        },
        service: observability.service,
        Stack: this.stack,
        ...dimensions,
        // A sampled figure is its values (one value alone, as itself); a count is its total.
        ...Object.fromEntries(
          figures.map(([name, { total, samples }]) => [
            name,
            samples.length === 0 ? total : samples.length === 1 ? samples[0] : samples,
          ]),
        ),
      };
      write(JSON.stringify(record));
    }
  }

  /** Counts add up; `sampled` figures (latency) keep each value, so CloudWatch can give percentiles. */
  private add(dimensions: Record<string, string>, name: string, unit: Unit, value: number, sampled = false): void {
    const key = JSON.stringify(dimensions);
    let entry = this.pending.get(key);
    if (!entry) this.pending.set(key, (entry = { dimensions, values: new Map() }));
    let figure = entry.values.get(name);
    if (!figure) entry.values.set(name, (figure = { unit, total: 0, samples: [] }));
    figure.total += value;
    if (sampled && figure.samples.length < MAX_SAMPLES) figure.samples.push(value);
  }
}
