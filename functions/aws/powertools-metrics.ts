/**
 * The `Metrics` port in AWS: Powertools for AWS Lambda's Metrics, which writes CloudWatch Embedded
 * Metric Format records to standard output, where CloudWatch reads them (no PutMetricData call).
 *
 * Figures are summed in memory during an invocation and written by `flush()` (the handler
 * adapters call it once per invocation): one EMF record per set of dimension values, so a batch of
 * 10 deliveries to one subscription costs a handful of lines, not one per attempt. Every record
 * carries `Stack` (the stack's name), so two stacks in one account keep their figures apart.
 *
 * Where the per-subscription line is drawn: `SubscriptionDeliveries` (per subscription and
 * outcome), `SubscriptionDeadLetters` and the replay figures carry `SubscriptionId`; latency, the
 * ingest and the router do not. Each per-subscription metric is a custom metric CloudWatch bills
 * per month: about 4 × the number of subscriptions in all (docs/OPERATIONS.md, "Metrics").
 */
import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { Metrics as PowertoolsMetricsWriter, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Metrics } from '../core/ports/metrics.js';
import { observability } from '../../lib/resources.js';

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

interface Pending {
  readonly dimensions: Readonly<Record<string, string>>;
  readonly values: Map<string, { unit: Unit; total: number; samples: number[] }>;
}

/** Powertools keeps at most 100 values of one metric per record; latency beyond that is sampled by the first 100. */
const MAX_SAMPLES = 100;

export class PowertoolsMetrics implements Metrics {
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

  deliveryAttempted(attempt: { readonly subscriptionId: string; readonly outcome: string; readonly latencyMs: number }): void {
    const { metrics } = observability;
    this.add({ Outcome: attempt.outcome }, metrics.deliveryOutcomes, MetricUnit.Count, 1);
    this.add({}, metrics.attemptLatency, MetricUnit.Milliseconds, attempt.latencyMs, true);
    this.add({ SubscriptionId: attempt.subscriptionId, Outcome: attempt.outcome }, metrics.subscriptionDeliveries, MetricUnit.Count, 1);
  }

  deadLettered(subscriptionId: string, reason: string): void {
    this.add({ Reason: reason }, observability.metrics.deadLetters, MetricUnit.Count, 1);
    this.add({ SubscriptionId: subscriptionId }, observability.metrics.subscriptionDeadLetters, MetricUnit.Count, 1);
  }

  replayProgress(subscriptionId: string, step: { readonly scanned: number; readonly matched: number; readonly sent: number; readonly failed: number }): void {
    const { metrics } = observability;
    const dimensions = { SubscriptionId: subscriptionId };
    this.add(dimensions, metrics.replayScanned, MetricUnit.Count, step.scanned);
    this.add(dimensions, metrics.replayMatched, MetricUnit.Count, step.matched);
    this.add(dimensions, metrics.replaySent, MetricUnit.Count, step.sent);
    this.add(dimensions, metrics.replayFailed, MetricUnit.Count, step.failed);
  }

  flush(): void {
    const pending = [...this.pending.values()];
    this.pending = new Map();
    for (const { dimensions, values } of pending) {
      const writer = new PowertoolsMetricsWriter({
        namespace: observability.namespace,
        serviceName: observability.service,
        defaultDimensions: { Stack: this.stack },
      });
      if (this.write) {
        const write = this.write;
        const out = new Writable({ write: (chunk: Buffer, _encoding, done) => (write(chunk.toString('utf8').trimEnd()), done()) });
        // Powertools writes through a private Console of its own; this one writes where the caller asked.
        (writer as unknown as { console: Console }).console = new Console({ stdout: out, stderr: out });
      }
      for (const [name, value] of Object.entries(dimensions)) writer.addDimension(name, value);
      for (const [name, { unit, total, samples }] of values) {
        if (samples.length === 0) writer.addMetric(name, unit, total);
        for (const sample of samples) writer.addMetric(name, unit, sample);
      }
      writer.publishStoredMetrics();
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
