/**
 * The alarm set (issue 13, item 6): what concerns the operator pages the alarm topic — inbound
 * queue age, function errors, API 5xx, SQS dead-letter queue depth, subscriptions suspended in bulk —
 * and what concerns one subscriber (its dead letters, its failing target) pages no one.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { deliveryMetricsRecord } from '../../functions/aws/delivery-metrics.js';
import { OperatorAlarms } from '../../lib/constructs/operator-alarms.js';
import { koerierResources } from '../../lib/koerier-stack.js';
import { deliveryMetrics, observability } from '../../functions/config/resources.js';
import { createLogger, logger } from '../../functions/app/logger.js';
import { LATE_APPEND_MESSAGE } from '../../functions/core/ordering/lane-settling.js';
import { logicalId, newApp, synthKoerier, type CfnResourceJson, type Synthesised } from './synth.js';

let synth: Synthesised;
let alarms: CfnResourceJson[];
beforeAll(() => {
  synth = synthKoerier();
  alarms = Object.values(synth.resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
});

const props = (resource: { node: unknown } | undefined) =>
  synth.resources[logicalId(synth.stack, resource as never)]!.Properties;

/** Every metric an alarm reads, as namespace/name. */
function watched(alarm: CfnResourceJson): string[] {
  const direct =
    alarm.Properties.MetricName === undefined ? [] : [`${alarm.Properties.Namespace}/${alarm.Properties.MetricName}`];
  const queried = (alarm.Properties.Metrics ?? []).flatMap(
    (query: { MetricStat?: { Metric: { Namespace: string; MetricName: string } } }) =>
      query.MetricStat ? [`${query.MetricStat.Metric.Namespace}/${query.MetricStat.Metric.MetricName}`] : [],
  );
  return [...direct, ...queried];
}

describe('alarms that concern the operator', () => {
  it("one partner's dead letters or failing webhook page no one: no alarm reads the dead-letter, failure or attempt counts", () => {
    const read = alarms.flatMap(watched);
    for (const metric of [deliveryMetrics.failures, deliveryMetrics.attempts]) {
      expect(read).not.toContain(`${deliveryMetrics.namespace}/${metric}`);
    }
    for (const metric of [observability.metrics.deadLetters, observability.metrics.subscriptionDeadLetters]) {
      expect(read).not.toContain(`${observability.namespace}/${metric}`);
    }
  });

  it('the set is: inbound queue age, errors of every function, API 5xx, suspensions in bulk, late ordered appends, and each SQS dead-letter queue; each notifies the topic on alarm and on recovery', () => {
    const topic = { Ref: logicalId(synth.stack, synth.stack.alarms.topic) };
    const expected =
      1 + Object.keys(koerierResources.functions).length + 1 + 1 + 1 + Object.keys(koerierResources.queues).length;
    expect(alarms).toHaveLength(expected);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([topic]);
      expect(alarm.Properties.OKActions).toEqual([topic]);
      expect(alarm.Properties.AlarmDescription.length).toBeGreaterThan(40);
    }
  });

  it('the inbound queue: its oldest event older than 5 minutes for 3 consecutive minutes', () => {
    const alarm = props(synth.stack.operatorAlarms.inboundAge);
    expect(alarm).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Statistic: 'Maximum',
      Period: 60,
      Threshold: 300,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      TreatMissingData: 'notBreaching',
    });
    const inbound = synth.stack.queues.byName.get('inbound')!.queue;
    expect(alarm.Dimensions).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(synth.stack, inbound), 'QueueName'] } },
    ]);
  });

  it('every function: Lambda errors (crashes, timeouts) in two consecutive 5-minute periods', () => {
    for (const [name, fn] of synth.stack.functions) {
      const alarm = props(synth.stack.operatorAlarms.functionErrors.get(name));
      expect(alarm).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 2,
        DatapointsToAlarm: 2,
      });
      expect(alarm.Dimensions).toEqual([{ Name: 'FunctionName', Value: { Ref: logicalId(synth.stack, fn.function) } }]);
    }
  });

  it('the API: 5 or more 5xx answers in each of two consecutive 5-minute periods', () => {
    expect(props(synth.stack.operatorAlarms.api5xx)).toMatchObject({
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Dimensions: [{ Name: 'ApiId', Value: { Ref: logicalId(synth.stack, synth.stack.httpApi.api) } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 5,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
    });
  });

  it('suspensions in bulk: 3 or more subscriptions suspended for failing targets within an hour, under this stack’s own Stack dimension', () => {
    expect(props(synth.stack.operatorAlarms.suspendedInBulk)).toMatchObject({
      Namespace: deliveryMetrics.namespace,
      MetricName: deliveryMetrics.suspended,
      Dimensions: [{ Name: deliveryMetrics.stackDimension, Value: synth.stack.stackName }],
      Statistic: 'Sum',
      Period: 3600,
      Threshold: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('ORD-3: ordered events appended out of acceptance order: counted from the log line of the functions that settle lanes (delivery, pull), per stack, one in 5 minutes alarms', () => {
    const namespace = `${deliveryMetrics.namespace}/${synth.stack.stackName}`;
    expect(props(synth.stack.operatorAlarms.orderedLateAppends)).toMatchObject({
      Namespace: namespace,
      MetricName: 'OrderedLateAppends',
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    const filters = Object.values(synth.resources).filter((r) => r.Type === 'AWS::Logs::MetricFilter');
    expect(filters.map((filter) => filter.Properties.LogGroupName)).toEqual(
      ['delivery', 'pull'].map((name) => ({ Ref: logicalId(synth.stack, synth.stack.functions.get(name)!.logGroup) })),
    );
    for (const filter of filters)
      expect(filter.Properties).toMatchObject({
        FilterPattern: `{ $.message = "${LATE_APPEND_MESSAGE}" }`,
        MetricTransformations: [{ MetricNamespace: namespace, MetricName: 'OrderedLateAppends', MetricValue: '1' }],
      });
    // The pattern matches the line the delivery function's logger writes, and only that message.
    const lines: string[] = [];
    const stop = logger.captureTo((line) => lines.push(line));
    try {
      createLogger('info').warn(LATE_APPEND_MESSAGE, { subscriptionId: 's', sequence: 7 });
    } finally {
      stop();
    }
    expect((JSON.parse(lines[0]!) as { message: string }).message).toBe(LATE_APPEND_MESSAGE);
  });

  it('the metric record the delivery function writes declares the suspension count the alarm reads, with the Stack dimension', () => {
    const record = JSON.parse(deliveryMetricsRecord({ attempts: 7, failures: 2, suspended: 2 }, 0, 'Koerier')) as {
      _aws: {
        CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
      };
      [figure: string]: unknown;
    };
    const [directive] = record._aws.CloudWatchMetrics;
    expect(directive!.Namespace).toBe(deliveryMetrics.namespace);
    expect(directive!.Dimensions).toEqual([[deliveryMetrics.stackDimension]]);
    expect(directive!.Metrics).toContainEqual({ Name: deliveryMetrics.suspended, Unit: 'Count' });
    expect(record).toMatchObject({
      [deliveryMetrics.stackDimension]: 'Koerier',
      [deliveryMetrics.suspended]: 2,
      [deliveryMetrics.attempts]: 7,
    });
    // Issue 29 item 3: dead letters are counted once, through the Metrics port (DeadLetters), not here too.
    expect(JSON.stringify(record)).not.toMatch(/DeadLetter/);
  });

  it('two stacks in one account keep their alarms apart: each reads its own Stack dimension', () => {
    const other = synthKoerier({ context: { 'koerier:stage': 'test' } });
    const dimension = (s: Synthesised) =>
      s.resources[logicalId(s.stack, s.stack.operatorAlarms.suspendedInBulk as never)]!.Properties.Dimensions;
    expect(other.stack.stackName).not.toBe(synth.stack.stackName);
    expect(dimension(synth)).toEqual([{ Name: 'Stack', Value: synth.stack.stackName }]);
    expect(dimension(other)).toEqual([{ Name: 'Stack', Value: other.stack.stackName }]);
  });

  it('take other thresholds; without the delivery function there is no suspension alarm', () => {
    const stack = new Stack(newApp(), 'Alarms');
    const api = new apigw.HttpApi(stack, 'Api');
    const set = new OperatorAlarms(stack, 'OperatorAlarms', {
      topic: new sns.Topic(stack, 'Topic'),
      inboundQueue: new sqs.Queue(stack, 'Inbound'),
      functions: new Map(),
      api,
      delivery: false,
      maxInboundAge: Duration.minutes(2),
      api5xxPer5Minutes: 20,
    });
    const resources = Template.fromStack(stack).toJSON().Resources;
    expect(set.suspendedInBulk).toBeUndefined();
    expect(resources[logicalId(stack, set.inboundAge!)].Properties.Threshold).toBe(120);
    expect(resources[logicalId(stack, set.api5xx)].Properties.Threshold).toBe(20);
  });
});
