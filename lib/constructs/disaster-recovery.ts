/**
 * The disaster-recovery options of the stack (issue 35, docs/DISASTER-RECOVERY.md), each off unless
 * set:
 *
 * - `koerier:bucketReplicas`: the archive and payload buckets replicated to buckets in a second
 *   Region with S3 Replication Time Control (99.99 % of objects within 15 minutes) and its metrics.
 *   The destination buckets (versioned, with their own KMS keys) belong to the standby stack, so
 *   they are named here rather than made.
 * - `koerier:globalTableRegions`: the partner directory, the subscriptions and the idempotency keys
 *   in DynamoDB global tables (version 2019.11.21, multi-Region eventual consistency) with a
 *   replica in each Region named.
 */
import { Duration, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { contextKey } from '../stack-config.js';

/**
 * The tables whose loss a standby cannot rebuild from the archive: who may publish, who subscribed
 * (with the routes the router reads them by: nothing rebuilds those from the subscriptions), which
 * keys were used.
 */
export const GLOBAL_TABLES = ['partners', 'subscriptions', 'routes', 'idempotency'] as const;
export const REPLICATED_BUCKETS = ['archive', 'payloads'] as const;

export interface BucketReplica {
  /** The ARN of the destination bucket in the second Region. */
  readonly bucket: string;
  /** The destination bucket's KMS key: replicas are encrypted under it. */
  readonly kmsKey: string;
}

export interface DisasterRecoverySettings {
  readonly bucketReplicas: Readonly<Partial<Record<(typeof REPLICATED_BUCKETS)[number], BucketReplica>>>;
  readonly globalTableRegions: readonly string[];
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;
const BUCKET_ARN = /^arn:aws[a-z-]*:s3:::[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[0-9a-f-]{36}$/;

/** The settings from the app's context, refused whole with every problem named. */
export function readDisasterRecovery(scope: Construct): DisasterRecoverySettings {
  return parseDisasterRecovery(
    scope.node.tryGetContext(contextKey.bucketReplicas),
    scope.node.tryGetContext(contextKey.globalTableRegions),
    Stack.of(scope).region,
  );
}

export function parseDisasterRecovery(
  bucketReplicasRaw: unknown,
  regionsRaw: unknown,
  stackRegion: string,
): DisasterRecoverySettings {
  const problems: string[] = [];
  const parse = (value: unknown) => (typeof value === 'string' ? (JSON.parse(value) as unknown) : value);
  const regions = parse(regionsRaw ?? []);
  if (!Array.isArray(regions) || !regions.every((region) => typeof region === 'string' && REGION.test(region)))
    problems.push('koerier:globalTableRegions must be a list of Regions, e.g. ["eu-central-1"]');
  else if (regions.includes(stackRegion))
    problems.push(`koerier:globalTableRegions names the stack's own Region ${stackRegion}: list the others`);
  const replicas = parse(bucketReplicasRaw ?? {}) as Record<string, BucketReplica>;
  if (typeof replicas !== 'object' || replicas === null || Array.isArray(replicas))
    problems.push(
      'koerier:bucketReplicas must be an object, e.g. {"archive": {"bucket": "arn:aws:s3:::…", "kmsKey": "arn:aws:kms:…"}}',
    );
  else
    for (const [name, replica] of Object.entries(replicas)) {
      if (!(REPLICATED_BUCKETS as readonly string[]).includes(name))
        problems.push(
          `koerier:bucketReplicas: "${name}" is not a replicated bucket (${REPLICATED_BUCKETS.join(', ')})`,
        );
      else if (!BUCKET_ARN.test(String(replica?.bucket)) || !KMS_KEY_ARN.test(String(replica?.kmsKey)))
        problems.push(`koerier:bucketReplicas.${name} needs "bucket" (a bucket ARN) and "kmsKey" (a KMS key ARN)`);
    }
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { bucketReplicas: replicas, globalTableRegions: regions as string[] };
}

/** S3 replicates from and into versioned buckets only: the source's and the destination's (a standby's). */
export function versionForReplication(bucket: s3.Bucket): s3.CfnBucket {
  const cfn = bucket.node.defaultChild as s3.CfnBucket;
  cfn.versioningConfiguration = { status: 'Enabled' };
  // Versioning keeps an expired object as a noncurrent version: gone a day later, as before.
  bucket.addLifecycleRule({ noncurrentVersionExpiration: Duration.days(1) });
  return cfn;
}

/** Replication with Replication Time Control from `bucket` (versioned for it) to its replica. */
export function replicateBucket(
  scope: Construct,
  name: string,
  bucket: s3.Bucket,
  sourceKey: kms.IKey,
  replica: BucketReplica,
): void {
  const role = new iam.Role(scope, `${name}ReplicationRole`, {
    assumedBy: new iam.ServicePrincipal('s3'),
    description: `Koerier: replicates the ${name} bucket to its standby Region`,
  });
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['s3:GetReplicationConfiguration', 's3:ListBucket'],
      resources: [bucket.bucketArn],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['s3:GetObjectVersionForReplication', 's3:GetObjectVersionAcl', 's3:GetObjectVersionTagging'],
      resources: [bucket.arnForObjects('*')],
    }),
  );
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['s3:ReplicateObject', 's3:ReplicateDelete', 's3:ReplicateTags'],
      resources: [`${replica.bucket}/*`],
    }),
  );
  sourceKey.grantDecrypt(role);
  role.addToPolicy(new iam.PolicyStatement({ actions: ['kms:Encrypt'], resources: [replica.kmsKey] }));
  const cfn = versionForReplication(bucket);
  cfn.replicationConfiguration = {
    role: role.roleArn,
    rules: [
      {
        id: `${name}-to-standby`,
        status: 'Enabled',
        priority: 1,
        filter: { prefix: '' },
        deleteMarkerReplication: { status: 'Disabled' },
        sourceSelectionCriteria: { sseKmsEncryptedObjects: { status: 'Enabled' } },
        destination: {
          bucket: replica.bucket,
          encryptionConfiguration: { replicaKmsKeyId: replica.kmsKey },
          replicationTime: { status: 'Enabled', time: { minutes: 15 } },
          metrics: { status: 'Enabled', eventThreshold: { minutes: 15 } },
        },
      },
    ],
  };
}

/**
 * cdk-nag's findings on what CDK makes for `dynamodb.Table`'s `replicationRegions`: the
 * ReplicaProvider (a nested stack of custom-resource functions and a waiter state machine that
 * add and remove replicas during deployments) and the managed policy it attaches per table. Both
 * are CDK's own, run only while CloudFormation changes a replica, and are acknowledged by exact
 * finding so that anything else in them still fails the synth.
 */
export function acknowledgeGlobalTableReplication(tables: Construct, tableIds: readonly string[]): void {
  const stack = Stack.of(tables);
  const provider = stack.node.tryFindChild('@aws-cdk/aws-dynamodb.ReplicaProvider');
  if (!provider) return;
  const reason =
    "CDK's DynamoDB ReplicaProvider adds and removes global-table replicas during deployments only: its own functions with the " +
    'managed basic-execution policy, DynamoDB actions on the replicated tables and their indexes, invoke grants on its own functions, and an unlogged waiter state machine CDK chooses.';
  const functionArn = (path: string) => {
    const fn = path
      .split('/')
      .reduce<Construct | undefined>((at, id) => at?.node.tryFindChild(id) as Construct, provider);
    const cfn = fn?.node.defaultChild ?? fn?.node.tryFindChild('Resource');
    return cfn ? [`AwsSolutions-IAM5[Resource::<${Stack.of(cfn).getLogicalId(cfn as CfnElement)}.Arn>:*]`] : [];
  };
  for (const id of [
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    'AwsSolutions-IAM5[Resource::*]',
    'AwsSolutions-SF1',
    'AwsSolutions-SF2',
    ...['OnEventHandler', 'IsCompleteHandler', 'Provider/framework-isComplete', 'Provider/framework-onTimeout'].flatMap(
      functionArn,
    ),
  ])
    Validations.of(provider).acknowledge({ id, reason });
  for (const id of [
    'AwsSolutions-IAM5[Action::dynamodb:*]',
    ...tableIds.map((tableId) => `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`),
  ])
    Validations.of(tables).acknowledge({ id, reason });
}
