/**
 * The `Metrics` port on the laptop host: the same figures the functions write as EMF records in
 * AWS, kept as counters in memory and served at `GET /metrics` in the Prometheus text exposition
 * format (version 0.0.4). Names are the CloudWatch names in snake case with Koerier's prefix —
 * `DeliveryOutcomes` is `koerier_delivery_outcomes_total` — and the dimensions become labels
 * (`stack`, `outcome`, `rule`, `reason`, `subscription_id`); `AttemptLatency` is a summary
 * without quantiles (`_sum` and `_count`, in milliseconds).
 */
import type { Metrics } from '../functions/core/ports/metrics.js';
import type { HttpResponse } from '../functions/core/http/messages.js';
import { observability } from '../functions/config/resources.js';

type Labels = Readonly<Record<string, string>>;

const names = observability.metrics;

export interface PrometheusMetrics extends Metrics {
  /** The exposition of every figure so far. */
  render(): string;
  /** `GET /metrics` of the host. */
  answer(): HttpResponse;
}

export function prometheusMetrics(stack: string): PrometheusMetrics {
  // name → label set (as text) → value
  const counters = new Map<string, Map<string, number>>();
  let latencySum = 0;
  let latencyCount = 0;
  const add = (name: string, labels: Labels, value: number) => {
    const series = counters.get(name) ?? new Map<string, number>();
    counters.set(name, series);
    const key = labelText({ stack, ...labels });
    series.set(key, (series.get(key) ?? 0) + value);
  };
  const metrics: PrometheusMetrics = {
    eventsAccepted: (count) => add(names.eventsAccepted, {}, count),
    publishRejected: (rule) => add(names.publishRejected, { rule }, 1),
    eventsRouted: ({ routed, duplicates, deliveries }) => {
      add(names.eventsRouted, {}, routed);
      add(names.duplicatesDropped, {}, duplicates);
      add(names.deliveriesQueued, {}, deliveries);
    },
    deliveryAttempted: ({ subscriptionId, outcome, latencyMs }) => {
      add(names.deliveryOutcomes, { outcome }, 1);
      add(names.subscriptionDeliveries, { subscription_id: subscriptionId, outcome }, 1);
      latencySum += latencyMs;
      latencyCount++;
    },
    deadLettered: (subscriptionId, reason) => {
      add(names.deadLetters, { reason }, 1);
      add(names.subscriptionDeadLetters, { subscription_id: subscriptionId }, 1);
    },
    replayProgress: (subscriptionId, step) => {
      const labels = { subscription_id: subscriptionId };
      add(names.replayScanned, labels, step.scanned);
      add(names.replayMatched, labels, step.matched);
      add(names.replaySent, labels, step.sent);
      add(names.replayFailed, labels, step.failed);
    },
    awsRequestThrottled: (service, operation) => add(names.awsRequestsThrottled, { service, operation }, 1),
    // Counters are read when scraped; nothing to write per invocation.
    flush: () => undefined,
    render() {
      const lines: string[] = [];
      for (const name of Object.values(names)) {
        if (name === names.attemptLatency) {
          const metric = prometheusName(name);
          lines.push(`# HELP ${metric} ${help(name)}`, `# TYPE ${metric} summary`);
          lines.push(
            `${metric}_sum${labelText({ stack })} ${latencySum}`,
            `${metric}_count${labelText({ stack })} ${latencyCount}`,
          );
          continue;
        }
        const series = counters.get(name);
        if (!series) continue;
        const metric = `${prometheusName(name)}_total`;
        lines.push(`# HELP ${metric} ${help(name)}`, `# TYPE ${metric} counter`);
        for (const [labels, value] of series) lines.push(`${metric}${labels} ${value}`);
      }
      return `${lines.join('\n')}\n`;
    },
    answer: () => ({
      status: 200,
      headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
      body: metrics.render(),
    }),
  };
  return metrics;
}

/** `DeliveryOutcomes` → `koerier_delivery_outcomes`. */
export function prometheusName(cloudWatchName: string): string {
  return `koerier_${cloudWatchName.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase()}`;
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(
    ([name, value]) => `${name}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return `{${pairs.join(',')}}`;
}

function help(name: string): string {
  return `Koerier's ${name} (CloudWatch namespace ${observability.namespace}; docs/OPERATIONS.md, "Metrics").`;
}
