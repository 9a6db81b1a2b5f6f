/**
 * What the gateway counts, as core sees it (issue 13, item 4). The use cases say what happened;
 * the adapters decide how it is written: CloudWatch Embedded Metric Format through Powertools in
 * AWS (functions/aws/emf-metrics.ts), counters in the Prometheus text format on the laptop
 * (local/prometheus-metrics.ts). Labels are identifiers and fixed vocabularies only — never a
 * `source`, `id` or `type` of an event, whose number has no bound.
 */
export interface Metrics {
  /** Events the ingest stored (the 202's events). */
  eventsAccepted(count: number): void;
  /** One publish request the ingest refused, by the rule that refused it (the problem type's slug). */
  publishRejected(rule: string): void;
  /** One router batch: events routed, duplicates dropped, deliveries queued. */
  eventsRouted(figures: { readonly routed: number; readonly duplicates: number; readonly deliveries: number }): void;
  /** One delivery attempt: its outcome (`delivered`, `retrying`, `dead-lettered`, `retired`) and how long it took. */
  deliveryAttempted(attempt: {
    readonly subscriptionId: string;
    readonly outcome: string;
    readonly latencyMs: number;
  }): void;
  /** One delivery kept as a dead letter, with its reason. */
  deadLettered(subscriptionId: string, reason: string): void;
  /** What one step of a replay did (added to the replay's running totals): events scanned, matched, sent, failed. */
  replayProgress(
    subscriptionId: string,
    step: { readonly scanned: number; readonly matched: number; readonly sent: number; readonly failed: number },
  ): void;
  /**
   * One request to an AWS service that it refused as throttling (the SDK backs off and may try
   * again): by the SDK's service id (`DynamoDB`, `SQS`, `S3`, `KMS`) and operation (`PutItem`).
   */
  awsRequestThrottled(service: string, operation: string): void;
  /** Writes what was recorded since the last flush: once per invocation, by the handler adapters. */
  flush(): void;
}

/** For callers and tests that keep no figures. */
export const noMetrics: Metrics = {
  eventsAccepted: () => undefined,
  publishRejected: () => undefined,
  eventsRouted: () => undefined,
  deliveryAttempted: () => undefined,
  deadLettered: () => undefined,
  replayProgress: () => undefined,
  awsRequestThrottled: () => undefined,
  flush: () => undefined,
};
