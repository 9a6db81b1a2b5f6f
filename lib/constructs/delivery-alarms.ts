/**
 * Alarms on the figures the delivery function writes per batch as CloudWatch Embedded Metric
 * Format records (functions/aws/delivery-metrics.ts, names in lib/resources.ts): a sustained delivery error rate, and any
 * delivery given up on (dead-lettered). Both notify the alarm topic, on alarm and on recovery.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { deliveryMetrics } from '../resources.js';

export interface DeliveryAlarmsProps {
  readonly topic: sns.ITopic;
  /** Share of failed attempts above which a period counts as failing. @default 0.5 */
  readonly maxErrorRate?: number;
  /** @default 5 minutes */
  readonly period?: Duration;
  /** Consecutive failing periods that raise the error-rate alarm. @default 3 */
  readonly errorRatePeriods?: number;
}

export class DeliveryAlarms extends Construct {
  readonly errorRate: cloudwatch.Alarm;
  readonly deadLettered: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: DeliveryAlarmsProps) {
    super(scope, id);
    const period = props.period ?? Duration.minutes(5);
    const maxErrorRate = props.maxErrorRate ?? 0.5;
    const errorRatePeriods = props.errorRatePeriods ?? 3;
    const sum = (metricName: string): cloudwatch.Metric =>
      new cloudwatch.Metric({
        namespace: deliveryMetrics.namespace,
        metricName,
        dimensionsMap: { [deliveryMetrics.stackDimension]: Stack.of(this).stackName },
        statistic: cloudwatch.Stats.SUM,
        period,
      });

    // A period without attempts is no failure; one without any record stays missing (idle, not failing).
    this.errorRate = new cloudwatch.Alarm(this, 'ErrorRate', {
      alarmDescription:
        `More than ${maxErrorRate * 100}% of webhook delivery attempts failed in each of ${errorRatePeriods} consecutive periods ` +
        `of ${period.toHumanString()}: check the subscribers' endpoints and GET /subscriptions/{id}/deliveries.`,
      metric: new cloudwatch.MathExpression({
        expression: 'IF(attempts > 0, failures / attempts, 0)',
        usingMetrics: { attempts: sum(deliveryMetrics.attempts), failures: sum(deliveryMetrics.failures) },
        label: 'Delivery error rate',
        period,
      }),
      threshold: maxErrorRate,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: errorRatePeriods,
      datapointsToAlarm: errorRatePeriods,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.deadLettered = new cloudwatch.Alarm(this, 'DeadLettered', {
      alarmDescription:
        'Webhook deliveries were dead-lettered (retries exhausted): inspect them with GET /subscriptions/{id}/dead-letters and ' +
        'redrive them with POST /subscriptions/{id}/dead-letters/redrive.',
      metric: sum(deliveryMetrics.deadLettered),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    const notify = new actions.SnsAction(props.topic);
    for (const alarm of [this.errorRate, this.deadLettered]) {
      alarm.addAlarmAction(notify);
      alarm.addOkAction(notify);
    }
  }
}
