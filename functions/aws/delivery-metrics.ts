/**
 * The delivery function's figures as a CloudWatch Embedded Metric Format record: CloudWatch reads
 * it from the log stream, so the alarm on suspensions in bulk needs no PutMetricData call. Dead
 * letters are counted through the `Metrics` port instead, push and pull alike (issue 29, item 3). The names come from functions/config/resources.ts, which the alarms read too.
 */
import { deliveryMetrics } from '../config/resources.js';

export interface DeliveryFigures {
  readonly attempts: number;
  /** Attempts not answered with a 2xx. */
  readonly failures: number;
  /** Subscriptions suspended because their target kept failing. */
  readonly suspended: number;
}

/** One line: a metric record, not a log line (no level, not subject to the log level). `stack` is the deployment's stack name. */
export function deliveryMetricsRecord(figures: DeliveryFigures, timestamp: number, stack: string): string {
  const metrics = [deliveryMetrics.attempts, deliveryMetrics.failures, deliveryMetrics.suspended].map((name) => ({
    Name: name,
    Unit: 'Count',
  }));
  return `${JSON.stringify({
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        { Namespace: deliveryMetrics.namespace, Dimensions: [[deliveryMetrics.stackDimension]], Metrics: metrics },
      ],
    },
    [deliveryMetrics.stackDimension]: stack,
    [deliveryMetrics.attempts]: figures.attempts,
    [deliveryMetrics.failures]: figures.failures,
    [deliveryMetrics.suspended]: figures.suspended,
  })}\n`;
}
