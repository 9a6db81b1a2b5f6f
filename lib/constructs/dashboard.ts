/**
 * The operator's CloudWatch dashboard (issue 13, item 4): what the gateway does, stage by stage —
 * events accepted and refused at the ingest, routed, delivered by outcome with the attempt
 * latency, dead letters by reason, the busiest subscriptions, replays — next to the queues' age
 * and the functions' errors and duration. It reads the figures the functions write through the
 * `Metrics` port (names in functions/config/resources.ts `observability`; dimensions `service` and `Stack`, so
 * two stacks in one account each see their own). Alarms are not here (lib/constructs/*-alarms.ts).
 * What each figure means: docs/OPERATIONS.md, "Metrics".
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { observability } from '../../functions/config/resources.js';

export interface KoerierDashboardProps {
  readonly functions: ReadonlyMap<string, lambda.IFunction>;
  readonly queues: ReadonlyMap<string, { readonly queue: sqs.IQueue; readonly deadLetterQueue: sqs.IQueue }>;
  /** @default 5 minutes */
  readonly period?: Duration;
}

/** The delivery outcomes an attempt record can have (core/delivery/delivery-records.ts `AttemptOutcome`). */
const OUTCOMES = ['delivered', 'retrying', 'dead-lettered', 'retired'] as const;

export class KoerierDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: KoerierDashboardProps) {
    super(scope, id);
    const period = props.period ?? Duration.minutes(5);
    const stack = Stack.of(this).stackName;
    const { metrics: names, namespace, service } = observability;
    const base = { service, Stack: stack };
    const metric = (
      metricName: string,
      extra: Record<string, string> = {},
      statistic: string = cloudwatch.Stats.SUM,
      label?: string,
    ) =>
      new cloudwatch.Metric({
        namespace,
        metricName,
        dimensionsMap: { ...base, ...extra },
        statistic,
        period,
        ...(label ? { label } : {}),
      });
    // Dimensions whose values are not known at synth (rules, reasons, subscriptions): a SEARCH over this stack's series.
    const search = (metricName: string, dimensions: readonly string[], label: string) =>
      new cloudwatch.MathExpression({
        expression: `SEARCH('{${namespace},${['service', 'Stack', ...dimensions].join(',')}} MetricName="${metricName}" Stack="${stack}"', 'Sum', ${period.toSeconds()})`,
        label,
        period,
        usingMetrics: {},
      });

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${stack}-koerier`,
      defaultInterval: Duration.hours(3),
    });
    const width = 8;
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Ingest: events accepted, requests refused by rule',
        width,
        left: [metric(names.eventsAccepted, {}, cloudwatch.Stats.SUM, 'accepted')],
        right: [search(names.publishRejected, ['Rule'], 'refused')],
      }),
      new cloudwatch.GraphWidget({
        title: 'Router: routed, duplicates dropped, deliveries queued',
        width,
        left: [metric(names.eventsRouted), metric(names.duplicatesDropped), metric(names.deliveriesQueued)],
      }),
      new cloudwatch.GraphWidget({
        title: 'Delivery attempts by outcome',
        width,
        stacked: true,
        left: OUTCOMES.map((outcome) =>
          metric(names.deliveryOutcomes, { Outcome: outcome }, cloudwatch.Stats.SUM, outcome),
        ),
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Attempt latency (ms)',
        width,
        left: ['p50', 'p90', 'p99'].map((statistic) => metric(names.attemptLatency, {}, statistic, statistic)),
      }),
      new cloudwatch.GraphWidget({
        title: 'Dead letters by reason (left) and by subscription (right)',
        width,
        left: [search(names.deadLetters, ['Reason'], 'dead letters')],
        right: [search(names.subscriptionDeadLetters, ['SubscriptionId'], 'per subscription')],
      }),
      new cloudwatch.GraphWidget({
        title: 'Deliveries per subscription and outcome',
        width,
        left: [search(names.subscriptionDeliveries, ['SubscriptionId', 'Outcome'], 'deliveries')],
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'AWS requests throttled, by service and operation (the SDK backs off and retries)',
        width,
        left: [search(names.awsRequestsThrottled, ['Service', 'Operation'], 'throttled')],
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Replays: events scanned, matched, sent, failed',
        width,
        left: [names.replayScanned, names.replayMatched, names.replaySent, names.replayFailed].map((name) =>
          search(name, ['SubscriptionId'], name),
        ),
      }),
      new cloudwatch.GraphWidget({
        title: 'Queues: age of the oldest message (s)',
        width,
        left: [...props.queues].map(([name, { queue }]) =>
          queue.metricApproximateAgeOfOldestMessage({ period, label: name, statistic: cloudwatch.Stats.MAXIMUM }),
        ),
        right: [...props.queues].map(([name, { deadLetterQueue }]) =>
          deadLetterQueue.metricApproximateNumberOfMessagesVisible({
            period,
            label: `${name}-dlq`,
            statistic: cloudwatch.Stats.MAXIMUM,
          }),
        ),
      }),
      new cloudwatch.GraphWidget({
        title: 'Functions: errors (left), p99 duration in ms (right)',
        width,
        left: [...props.functions].map(([name, fn]) => fn.metricErrors({ period, label: name })),
        right: [...props.functions].map(([name, fn]) => fn.metricDuration({ period, label: name, statistic: 'p99' })),
      }),
    );
  }
}
