/**
 * One Lambda function of functions/config/resources.ts: bundled with esbuild (lib/bundling.ts: `index.mjs` and its split-off chunks), its own role
 * with exactly the grants its description lists, each grant's resource name in its environment,
 * and its queue trigger.
 */
import * as path from 'node:path';
import { ArnFormat, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import { SubnetType } from 'aws-cdk-lib/aws-ec2';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventsTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { LAMBDA_HANDLER, lambdaCode } from '../bundling.js';
import {
  resourceEnv,
  type BucketName,
  type FunctionSpec,
  type KeyName,
  type PullQueueAccess,
  type QueueName,
  type TableName,
} from '../../functions/config/resources.js';
import { DEFAULT_LOG_RETENTION_DAYS } from '../retention-config.js';
import { byName } from './named.js';
import type { QueuePair } from './queues.js';
import type { TableWithSpec } from './tables.js';

export interface FunctionResources {
  readonly tables: ReadonlyMap<string, TableWithSpec>;
  readonly queues: ReadonlyMap<string, QueuePair>;
  readonly buckets: ReadonlyMap<string, s3.Bucket>;
  readonly keys: ReadonlyMap<string, kms.IKey>;
  /** The pull subscriptions' queues are `<prefix>-pull-<id>`, made at run time (docs/PULL.md). */
  readonly pullQueuePrefix: string;
}

export interface KoerierFunctionProps {
  readonly spec: FunctionSpec;
  readonly resources: FunctionResources;
  /** The settings every function reads through `loadConfig` (functions/config.ts). */
  readonly settings: Readonly<Record<string, string>>;
  /** Repository root: `spec.entry` is relative to it. */
  readonly repoRoot: string;
  /** Days its log group keeps the logs (`koerier:logRetentionDays`, lib/retention-config.ts); default 90. */
  readonly logRetentionDays?: number;
  /** Concurrent invocations set aside for this function, and the most it may run; absent: the unreserved pool. */
  readonly reservedConcurrency?: number;
  /**
   * Its queue trigger in provisioned mode (`koerier:provisionedPollers`, lib/capacity-config.ts);
   * absent: standard mode. The event source sets no maximum concurrency, which AWS does not take
   * together with provisioned mode.
   */
  readonly provisionedPollers?: lambda.ProvisionedPollerConfig;
  /** Runs the function in these private subnets (fixed egress addresses, lib/constructs/fixed-egress.ts); absent: outside any VPC. */
  readonly network?: { readonly vpc: ec2.IVpc; readonly securityGroup: ec2.ISecurityGroup };
  /** The Powertools for AWS Lambda (TypeScript) layer, whose Tracer captures the SDK clients (functions/aws/tracing.ts). */
  readonly powertoolsLayerArn?: string;
  /**
   * The signing keys (newest first) and the mTLS secret the `trust` of the spec refers to
   * (lib/trust-config.ts), with the Parameters and Secrets extension layer of the stack's region
   * that reads the secret (lib/regions.ts).
   */
  /** Out-of-band alerts' From address (`koerier:alertSender`): a function whose spec sends `email` may send from its identity only. */
  readonly alertSender?: string;
  readonly trust?: {
    readonly signingKeyArns: readonly string[];
    readonly clientCertificateSecretArn?: string | undefined;
    readonly paramsAndSecretsLayerArn?: string;
  };
}

/**
 * What Lambda needs of a function's own role to attach it to a VPC (the actions of AWS's
 * AWSLambdaVPCAccessExecutionRole, inline: the role is the function's own, with no managed policy).
 */
const VPC_ACCESS_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
];

/**
 * Item-level actions only, named one by one: no table management, no streams (Koerier reads none).
 * ConditionCheckItem is the read half of a conditional transaction.
 */
const TABLE_READ_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
];
const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];
/** Only these work on an index. */
const INDEX_ACTIONS = ['dynamodb:Query', 'dynamodb:Scan'];

/**
 * What each kind of pull-queue grant may do on `<prefix>-pull-*`, and nothing more: no
 * PurgeQueue, no ListQueues (which takes no resource), no permissions or tags.
 */
export const PULL_QUEUE_ACTIONS: Record<PullQueueAccess, readonly string[]> = {
  manage: ['sqs:CreateQueue', 'sqs:DeleteQueue', 'sqs:GetQueueUrl', 'sqs:GetQueueAttributes', 'sqs:SetQueueAttributes'],
  send: ['sqs:SendMessage', 'sqs:GetQueueUrl', 'sqs:GetQueueAttributes'],
  consume: [
    'sqs:ReceiveMessage',
    'sqs:DeleteMessage',
    'sqs:ChangeMessageVisibility',
    'sqs:GetQueueUrl',
    'sqs:GetQueueAttributes',
  ],
};

/** AWS's advice for SQS event sources: visibility timeout at least six times the function timeout. */
const VISIBILITY_TO_TIMEOUT_RATIO = 6;

export class KoerierFunction extends Construct {
  readonly function: lambda.Function;
  readonly role: iam.Role;
  /** Its own log group; the stack's log-based alarms read it. */
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, name: string, props: KoerierFunctionProps) {
    super(scope, name);
    const { spec, resources } = props;
    const owner = `function '${name}'`;

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda'),
      description: `Koerier ${name}: only the grants functions/config/resources.ts lists`,
    });
    // Scoped to this function's own log group: AWSLambdaBasicExecutionRole would allow writing to every log group.
    const logGroup = (this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: (props.logRetentionDays ?? DEFAULT_LOG_RETENTION_DAYS) as logs.RetentionDays,
    }));
    logGroup.grantWrite(this.role);

    // No NODE_OPTIONS: the bundle maps its own stack traces (functions/app/source-mapped-stacks.ts), without --enable-source-maps.
    const environment: Record<string, string> = { ...props.settings };
    for (const [tableName, access] of entries(spec.tables)) {
      const { table, spec: tableSpec } = byName(resources.tables, 'table', tableName, owner);
      const actions = access === 'read' ? TABLE_READ_ACTIONS : [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS];
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [table.tableArn] }));
      // Each index by its own ARN, where CDK's table grants would allow `<table>/index/*`.
      const indexes = (tableSpec.globalIndexes ?? []).map((index) => `${table.tableArn}/index/${index.name}`);
      if (indexes.length > 0)
        this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: INDEX_ACTIONS, resources: indexes }));
      environment[resourceEnv.table(tableName as TableName)] = table.tableName;
    }
    for (const [queueName, access] of entries(spec.queues)) {
      const { queue } = byName(resources.queues, 'queue', queueName, owner);
      if (access.includes('send')) queue.grantSendMessages(this.role);
      if (access.includes('consume')) queue.grantConsumeMessages(this.role);
      environment[resourceEnv.queueUrl(queueName as QueueName)] = queue.queueUrl;
    }
    for (const [queueName] of entries(spec.deadLetterQueues)) {
      const { deadLetterQueue } = byName(resources.queues, 'queue', queueName, owner);
      deadLetterQueue.grantConsumeMessages(this.role);
      environment[resourceEnv.deadLetterQueueUrl(queueName as QueueName)] = deadLetterQueue.queueUrl;
    }
    for (const [bucketName, access] of entries(spec.buckets)) {
      const bucket = byName(resources.buckets, 'bucket', bucketName, owner);
      // Object-level actions, and listing only for `list+read` (the replay worker reads the archive by its hourly prefixes); never configuring.
      const reads = access === 'read' || access === 'list+read';
      const actions = reads ? ['s3:GetObject'] : ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'];
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [bucket.arnForObjects('*')] }));
      // `list+readwrite`: the erasure worker lists the archive by hour and rewrites or deletes what it finds.
      if (access === 'list+read' || access === 'list+readwrite')
        this.role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }),
        );
      // SSE-KMS: reading decrypts the object's data key, writing makes one.
      if (bucket.encryptionKey) {
        const keyActions = reads ? ['kms:Decrypt'] : ['kms:Decrypt', 'kms:GenerateDataKey'];
        this.role.addToPrincipalPolicy(
          new iam.PolicyStatement({ actions: keyActions, resources: [bucket.encryptionKey.keyArn] }),
        );
      }
      Validations.of(this.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(bucket.node.defaultChild as s3.CfnBucket)}.Arn>/*]`,
        reason: `Claim-check object keys are generated per event, so ${name} needs the objects of bucket ${bucketName}, and only those.`,
      });
      environment[resourceEnv.bucket(bucketName as BucketName)] = bucket.bucketName;
    }
    for (const [keyName, use] of entries(spec.keys)) {
      const key = byName(resources.keys, 'key', keyName, owner);
      const actions = [
        ...(use.includes('encrypt') ? ['kms:Encrypt'] : []),
        ...(use.includes('decrypt') ? ['kms:Decrypt'] : []),
      ];
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [key.keyArn] }));
      environment[resourceEnv.key(keyName as KeyName)] = key.keyArn;
    }

    const trust = props.trust ?? { signingKeyArns: [] };
    const wants = new Set(spec.trust ?? []);
    const [currentKey] = trust.signingKeyArns;
    if (wants.has('sign') && currentKey)
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['kms:Sign'], resources: [currentKey] }));
    if (wants.has('public-keys') && currentKey) {
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ['kms:GetPublicKey'], resources: [...trust.signingKeyArns] }),
      );
    }
    const secret = wants.has('client-certificate') ? trust.clientCertificateSecretArn : undefined;
    if (secret && trust.paramsAndSecretsLayerArn === undefined)
      throw new Error(`${owner} presents a client certificate but was given no Parameters and Secrets layer`);
    if (secret) {
      // The secret ARN's random suffix is part of it, so the grant names exactly one secret.
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secret] }),
      );
    }

    if (spec.email && props.alertSender) {
      // The identity may be the address or its domain (SES checks the one verified): both, and nothing else.
      const identity = (name: string) =>
        Stack.of(this).formatArn({ service: 'ses', resource: 'identity', resourceName: name });
      const domain = props.alertSender.slice(props.alertSender.lastIndexOf('@') + 1);
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['ses:SendEmail'],
          resources: [identity(props.alertSender), identity(domain)],
        }),
      );
    }

    const pullAccess = spec.pullQueues ?? [];
    if (pullAccess.length > 0) {
      const pattern = `${resources.pullQueuePrefix}-pull-*`;
      const arn = Stack.of(this).formatArn({
        service: 'sqs',
        resource: pattern,
        arnFormat: ArnFormat.NO_RESOURCE_NAME,
      });
      const actions = [...new Set(pullAccess.flatMap((access) => PULL_QUEUE_ACTIONS[access]))];
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [arn] }));
      // cdk-nag names the resource as it reads in the template: a pseudo parameter where the stack has no fixed env.
      const stack = Stack.of(this);
      const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
      const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
      const partition = Token.isUnresolved(stack.partition) ? '<AWS::Partition>' : stack.partition;
      Validations.of(this.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:${partition}:sqs:${region}:${account}:${pattern}]`,
        reason: `Each pull subscription gets its own queues at run time, named ${pattern}; ${name} may use those (${pullAccess.join(', ')}) and no other queue.`,
      });
      environment[resourceEnv.pullQueuePrefix] = resources.pullQueuePrefix;
    }

    this.function = new lambda.Function(this, 'Function', {
      description: `Koerier ${name} (${spec.entry})`,
      code: lambdaCode(props.repoRoot, path.join(props.repoRoot, spec.entry)),
      handler: LAMBDA_HANDLER,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: spec.memoryMb,
      timeout: Duration.seconds(spec.timeoutSeconds),
      role: this.role,
      logGroup,
      tracing: lambda.Tracing.ACTIVE,
      environment,
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
      ...(props.network === undefined
        ? {}
        : {
            vpc: props.network.vpc,
            vpcSubnets: { subnetType: SubnetType.PRIVATE_WITH_EGRESS },
            securityGroups: [props.network.securityGroup],
          }),
      // Reads the mTLS secret once per container and caches it (functions/aws/client-certificate.ts).
      ...(props.powertoolsLayerArn
        ? { layers: [lambda.LayerVersion.fromLayerVersionArn(this, 'PowertoolsLayer', props.powertoolsLayerArn)] }
        : {}),
      ...(secret && trust.paramsAndSecretsLayerArn
        ? { paramsAndSecrets: lambda.ParamsAndSecretsLayerVersion.fromVersionArn(trust.paramsAndSecretsLayerArn) }
        : {}),
    });
    if (props.network)
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: VPC_ACCESS_ACTIONS, resources: ['*'] }));
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active X-Ray tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level ' +
        'permissions (the X-Ray service authorization reference lists only "*")' +
        (props.network
          ? "; in the fixed-egress VPC Lambda manages the function's network interfaces with its role, and ec2:DescribeNetworkInterfaces " +
            'and ec2:DescribeSubnets support no resource-level permissions while the interfaces it creates have no ARN known at synth'
          : '') +
        '; every other statement names its resources.',
    });

    if (spec.queueTrigger) {
      const trigger = spec.queueTrigger;
      const { queue, spec: queueSpec } = byName(
        resources.queues,
        'queue',
        trigger.queue,
        `the queue trigger of ${owner}`,
      );
      const needed = VISIBILITY_TO_TIMEOUT_RATIO * spec.timeoutSeconds;
      if (queueSpec.visibilityTimeoutSeconds < needed) {
        // Not silently raised: the laptop host reads the same description and must behave alike.
        throw new Error(
          `queue '${trigger.queue}' has a visibility timeout of ${queueSpec.visibilityTimeoutSeconds} s, but ${owner} ` +
            `(timeout ${spec.timeoutSeconds} s) is triggered by it: it must be at least ${VISIBILITY_TO_TIMEOUT_RATIO} x ` +
            `the function timeout (${needed} s), or a batch still being processed is handed out again. ` +
            `Raise visibilityTimeoutSeconds or lower timeoutSeconds in functions/config/resources.ts.`,
        );
      }
      this.function.addEventSource(
        new SqsEventSource(queue, {
          batchSize: trigger.batchSize,
          maxBatchingWindow: Duration.seconds(trigger.maxBatchingWindowSeconds),
          reportBatchItemFailures: true,
          ...(props.provisionedPollers ? { provisionedPollerConfig: props.provisionedPollers } : {}),
        }),
      );
    }

    if (spec.schedule) {
      // A missed run is simply the next one: the scheduled work (the lane sweeper) looks again each time.
      new events.Rule(this, 'Schedule', {
        description: `Runs ${owner} every ${spec.schedule.everyMinutes} minutes`,
        schedule: events.Schedule.rate(Duration.minutes(spec.schedule.everyMinutes)),
        targets: [new eventsTargets.LambdaFunction(this.function, { retryAttempts: 0 })],
      });
    }
  }
}

/** The grants of one kind, without the absent entries `Partial<Record>` allows. */
function entries<V extends string>(grants: Partial<Record<string, V>> | undefined): [string, V][] {
  return Object.entries(grants ?? {}).filter((entry): entry is [string, V] => entry[1] !== undefined);
}
