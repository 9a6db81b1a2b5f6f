/**
 * The alarms that concern the operator of Koerier (issue 13, item 6), on the alarm topic, on alarm
 * and on recovery. Each one means Koerier itself is in trouble, whatever any one partner does:
 *
 * - the inbound queue's oldest event is old: the router is not keeping up, or not running;
 * - a function fails (Lambda `Errors`: crashes and timeouts; a delivery a target refused is not one);
 * - the API answers 5xx (an outage behind it: SQS, DynamoDB, KMS);
 * - suspensions in bulk: several subscriptions suspended for failing targets within the hour, which
 *   points at Koerier's own egress, certificates or network rather than at the partners;
 * - ordered events appended out of acceptance order (docs/ORDERING.md): the settling window is too
 *   short for how late the router is, a deployment setting to raise;
 * - and, in DeadLetterAlarms, any message in an SQS dead-letter queue (a message Koerier could not handle).
 *
 * What concerns one subscriber — its target failing, its dead letters — pages no one: it is told to
 * the subscriber as an operational event (functions/core/operations), and to operators who subscribe
 * to those. Alarms on Koerier's own metrics filter on the `Stack` dimension; AWS's own metrics are per
 * queue, function and API, which belong to one stack; so two stacks in one account never share an alarm.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { deliveryMetrics } from '../../functions/config/resources.js';
import { LATE_APPEND_MESSAGE } from '../../functions/core/ordering/lane-settling.js';

export interface OperatorAlarmsProps {
  readonly topic: sns.ITopic;
  /** The queue accepted events wait in for the router (absent from a description without one). */
  readonly inboundQueue: sqs.IQueue | undefined;
  readonly functions: ReadonlyMap<string, lambda.IFunction>;
  readonly api: Pick<apigw.HttpApi, 'metricServerError'>;
  /** Whether the delivery function (which counts suspensions) is deployed. */
  readonly delivery: boolean;
  /** The log groups of the functions that settle ordered lanes (delivery, pull), where late appends are logged; none: no such alarm. */
  readonly orderedLogGroups?: readonly logs.ILogGroup[];
  /** Age of the oldest inbound event that counts as stuck. @default 5 minutes */
  readonly maxInboundAge?: Duration;
  /** 5xx answers per 5 minutes that count, in each of two consecutive periods. @default 5 */
  readonly api5xxPer5Minutes?: number;
  /** Subscriptions suspended for failing targets within one hour that count as "in bulk". @default 3 */
  readonly suspendedPerHour?: number;
}

export class OperatorAlarms extends Construct {
  readonly inboundAge: cloudwatch.Alarm | undefined;
  /** One per function. */
  readonly functionErrors: ReadonlyMap<string, cloudwatch.Alarm>;
  readonly api5xx: cloudwatch.Alarm;
  readonly suspendedInBulk: cloudwatch.Alarm | undefined;
  readonly orderedLateAppends: cloudwatch.Alarm | undefined;

  constructor(scope: Construct, id: string, props: OperatorAlarmsProps) {
    super(scope, id);
    const maxInboundAge = props.maxInboundAge ?? Duration.minutes(5);
    const api5xx = props.api5xxPer5Minutes ?? 5;
    const suspended = props.suspendedPerHour ?? 3;
    const fiveMinutes = Duration.minutes(5);

    // Sustained for three minutes: one slow batch is no outage.
    this.inboundAge =
      props.inboundQueue &&
      new cloudwatch.Alarm(this, 'InboundQueueAge', {
        alarmDescription:
          `Accepted events have waited more than ${maxInboundAge.toHumanString()} for the router: check the router function's errors and ` +
          'throttles and its event source mapping (enabled?). Events are safe in the queue meanwhile.',
        metric: props.inboundQueue.metricApproximateAgeOfOldestMessage({
          period: Duration.minutes(1),
          statistic: 'Maximum',
        }),
        threshold: maxInboundAge.toSeconds(),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });

    const functionErrors = new Map<string, cloudwatch.Alarm>();
    for (const [name, fn] of props.functions) {
      functionErrors.set(
        name,
        new cloudwatch.Alarm(this, `FunctionErrors-${name}`, {
          alarmDescription:
            `The ${name} function failed (crash or timeout) in two consecutive 5-minute periods: read its log group for "function failed" ` +
            'and the Lambda errors. Queue consumers retry what failed; HTTP callers got a 500.',
          metric: fn.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 2,
          datapointsToAlarm: 2,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    this.functionErrors = functionErrors;

    this.api5xx = new cloudwatch.Alarm(this, 'Api5xx', {
      alarmDescription:
        `The API answered ${api5xx} or more 5xx in each of two consecutive 5-minute periods: callers are refused for Koerier's own ` +
        'trouble (503 events-not-stored: SQS; 500: a function failed). Check the function alarms and the access logs.',
      metric: props.api.metricServerError({ period: fiveMinutes, statistic: 'Sum' }),
      threshold: api5xx,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.suspendedInBulk = props.delivery
      ? new cloudwatch.Alarm(this, 'SuspendedInBulk', {
          alarmDescription:
            `${suspended} or more subscriptions were suspended for failing targets within one hour: when many partners fail at once, ` +
            "suspect Koerier's side (egress addresses, client certificate, DNS, network). GET /subscriptions?owner=* lists them; " +
            'POST /subscriptions/{id}/resume once fixed.',
          metric: new cloudwatch.Metric({
            namespace: deliveryMetrics.namespace,
            metricName: deliveryMetrics.suspended,
            dimensionsMap: { [deliveryMetrics.stackDimension]: Stack.of(this).stackName },
            statistic: cloudwatch.Stats.SUM,
            period: Duration.hours(1),
          }),
          threshold: suspended,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        })
      : undefined;

    const orderedLogGroups = props.orderedLogGroups ?? [];
    this.orderedLateAppends = orderedLogGroups.length > 0 ? this.lateAppendsAlarm(orderedLogGroups) : undefined;

    const notify = new actions.SnsAction(props.topic);
    for (const alarm of [
      this.inboundAge,
      ...functionErrors.values(),
      this.api5xx,
      this.suspendedInBulk,
      this.orderedLateAppends,
    ]) {
      if (!alarm) continue;
      alarm.addAlarmAction(notify);
      alarm.addOkAction(notify);
    }
  }

  /**
   * From the log line, not an EMF metric: it is rare, and a metric filter costs nothing per event.
   * A metric filter cannot add the `Stack` dimension, so the stack's name is in the namespace.
   */
  private lateAppendsAlarm(logGroups: readonly logs.ILogGroup[]): cloudwatch.Alarm {
    const namespace = `${deliveryMetrics.namespace}/${Stack.of(this).stackName}`;
    const metricName = 'OrderedLateAppends';
    logGroups.forEach(
      (logGroup, index) =>
        new logs.MetricFilter(this, `OrderedLateAppendsFilter${index === 0 ? '' : index + 1}`, {
          logGroup,
          filterPattern: logs.FilterPattern.stringValue('$.message', '=', LATE_APPEND_MESSAGE),
          metricNamespace: namespace,
          metricName,
          metricValue: '1',
        }),
    );
    return new cloudwatch.Alarm(this, 'OrderedLateAppends', {
      alarmDescription:
        'An ordered event reached its lane later than the settling window and was delivered after an event accepted after it ' +
        '(docs/ORDERING.md, "Acceptance order"): raise koerier:orderingSettlingMs, or look for a router backlog ' +
        '(inbound queue age) or router retries. The delivery log names the subscription and sequence.',
      metric: new cloudwatch.Metric({
        namespace,
        metricName,
        statistic: cloudwatch.Stats.SUM,
        period: Duration.minutes(5),
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}
