/**
 * The delivery function's figures as a CloudWatch Embedded Metric Format record: CloudWatch reads
 * it from the log stream, so the alarms on the delivery error rate and on dead letters need no
 * PutMetricData call. The names come from functions/config/resources.ts, which the alarms read too.
 */
import { deliveryMetrics } from '../config/resources.js';

export interface DeliveryFigures {
  readonly attempts: number;
  /** Attempts not answered with a 2xx. */
  readonly failures: number;
  readonly deadLettered: number;
  /** Subscriptions suspended because their target kept failing. */
  readonly suspended: number;
}

/** One line: a metric record, not a log line (no level, not subject to the log level). `stack` is the deployment's stack name. */
export function deliveryMetricsRecord(figures: DeliveryFigures, timestamp: number, stack: string): string {
  const metrics = [
    deliveryMetrics.attempts,
    deliveryMetrics.failures,
    deliveryMetrics.deadLettered,
    deliveryMetrics.suspended,
  ].map((name) => ({
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
    [deliveryMetrics.deadLettered]: figures.deadLettered,
    [deliveryMetrics.suspended]: figures.suspended,
  })}\n`;
}
