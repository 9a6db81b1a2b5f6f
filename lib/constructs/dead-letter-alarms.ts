/**
 * An alarm per dead-letter queue that fires as soon as one message lands in it, published to an
 * encrypted SNS topic (with an email subscription when `koerier:alarmEmail` is set).
 */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface DeadLetterAlarmsProps {
  readonly deadLetterQueues: ReadonlyMap<string, sqs.IQueue>;
  readonly email?: string;
}

export class DeadLetterAlarms extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: ReadonlyMap<string, cloudwatch.Alarm>;

  constructor(scope: Construct, id: string, props: DeadLetterAlarmsProps) {
    super(scope, id);
    // CloudWatch can publish to an encrypted topic only with a customer-managed key whose
    // policy lets it use the key; the AWS-managed SNS key cannot grant that.
    const key = new kms.Key(this, 'TopicKey', {
      description: 'Koerier alarm topic',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: ['*'], // in a key policy, "*" means this key
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    this.topic = new sns.Topic(this, 'Topic', { masterKey: key, enforceSSL: true });
    if (props.email) this.topic.addSubscription(new subscriptions.EmailSubscription(props.email));

    const alarms = new Map<string, cloudwatch.Alarm>();
    for (const [name, queue] of props.deadLetterQueues) {
      const alarm = new cloudwatch.Alarm(this, name, {
        alarmDescription: `Messages reached the dead-letter queue of ${name}: inspect and replay them.`,
        metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      alarm.addAlarmAction(new actions.SnsAction(this.topic));
      alarm.addOkAction(new actions.SnsAction(this.topic));
      alarms.set(name, alarm);
    }
    this.alarms = alarms;
  }
}
