/**
 * The synthesised stack matches functions/config/resources.ts: every check iterates over the description, so
 * the tests grow with it. Each check runs twice: on resources.ts itself, and on resources.ts plus
 * resources and a function of every grant kind, proving that additions appear without touching
 * the constructs.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { STAGE_THROTTLE } from '../../lib/constructs/http-api.js';
import { PULL_QUEUE_ACTIONS } from '../../lib/constructs/koerier-function.js';
import { koerierResources, type ResourceDescription } from '../../lib/koerier-stack.js';
import {
  resourceEnv,
  servedPath,
  type BucketName,
  type FunctionSpec,
  type KeyName,
  type QueueName,
  type TableName,
} from '../../functions/config/resources.js';
import { synthContext, logicalId, referencedIds, synthKoerier, type Synthesised } from './synth.js';

const FOURTEEN_DAYS = 14 * 24 * 3600;

/**
 * resources.ts plus a table, a queue, and functions using every kind of grant and a queue trigger.
 * Names and paths start with `extra` so they never collide with what resources.ts gains.
 */
const extended: ResourceDescription = {
  ...koerierResources,
  tables: {
    ...koerierResources.tables,
    extraArchive: {
      partitionKey: { name: 'source', type: 'S' },
      sortKey: { name: 'seq', type: 'N' },
      ttlAttribute: 'ttl',
    },
  },
  queues: {
    ...koerierResources.queues,
    extraOutbox: { visibilityTimeoutSeconds: 180, retentionSeconds: 3600, maxReceiveCount: 3 },
  },
  functions: {
    ...koerierResources.functions,
    extraConsumer: {
      entry: 'functions/handlers/api-description.ts',
      memoryMb: 1024,
      timeoutSeconds: 30,
      queueTrigger: { queue: 'extraOutbox' as QueueName, batchSize: 10, maxBatchingWindowSeconds: 2 },
      tables: { extraArchive: 'readwrite', subscriptions: 'read' } as NonNullable<FunctionSpec['tables']>,
      queues: { deliveries: 'send', extraOutbox: 'consume' } as NonNullable<FunctionSpec['queues']>,
      deadLetterQueues: { inbound: 'consume' },
      buckets: { payloads: 'read' },
      keys: { credentials: 'decrypt' },
    },
    extraApi: {
      entry: 'functions/handlers/api-description.ts',
      memoryMb: 256,
      timeoutSeconds: 10,
      routes: [
        { method: 'GET', path: '/extra/{id}/events' },
        { method: 'DELETE', path: '/extra/{id}' },
      ],
      queues: { inbound: 'send+consume' },
      buckets: { payloads: 'readwrite' },
      keys: { credentials: 'encrypt+decrypt' },
    },
  },
};

/** Actions a grant must allow on its resource, and actions it must not. */
const grantActions: Record<string, { allows: string[]; denies: string[] }> = {
  'table:read': {
    allows: ['dynamodb:GetItem', 'dynamodb:Query'],
    denies: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
  },
  'table:readwrite': {
    allows: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    denies: [],
  },
  'queue:send': {
    allows: ['sqs:SendMessage'],
    denies: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:PurgeQueue'],
  },
  'queue:consume': {
    allows: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'],
    denies: ['sqs:SendMessage', 'sqs:PurgeQueue'],
  },
  'queue:send+consume': {
    allows: ['sqs:SendMessage', 'sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'],
    denies: ['sqs:PurgeQueue'],
  },
  'bucket:read': { allows: ['s3:GetObject'], denies: ['s3:PutObject', 's3:DeleteObject', 's3:ListBucket'] },
  'bucket:readwrite': {
    allows: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
    denies: ['s3:ListBucket', 's3:PutBucketPolicy'],
  },
  // The replay worker lists the archive's hourly prefixes.
  'bucket:list+read': {
    allows: ['s3:GetObject', 's3:ListBucket'],
    denies: ['s3:PutObject', 's3:DeleteObject', 's3:PutBucketPolicy'],
  },
  // Issue 31 item 4: the erasure worker lists the archive by hour and rewrites or deletes its objects.
  'bucket:list+readwrite': {
    allows: ['s3:GetObject', 's3:ListBucket', 's3:PutObject', 's3:DeleteObject'],
    denies: ['s3:PutBucketPolicy', 's3:PutLifecycleConfiguration'],
  },
  // SSE-KMS on a bucket: reading decrypts the data key, writing generates one; nothing else.
  'bucketKey:read': { allows: ['kms:Decrypt'], denies: ['kms:GenerateDataKey', 'kms:Encrypt'] },
  'bucketKey:readwrite': {
    allows: ['kms:Decrypt', 'kms:GenerateDataKey'],
    denies: ['kms:Encrypt', 'kms:ScheduleKeyDeletion'],
  },
  'bucketKey:list+read': { allows: ['kms:Decrypt'], denies: ['kms:GenerateDataKey', 'kms:Encrypt'] },
  'bucketKey:list+readwrite': {
    allows: ['kms:Decrypt', 'kms:GenerateDataKey'],
    denies: ['kms:Encrypt', 'kms:ScheduleKeyDeletion'],
  },
  'key:encrypt': { allows: ['kms:Encrypt'], denies: ['kms:Decrypt'] },
  'key:decrypt': { allows: ['kms:Decrypt'], denies: ['kms:Encrypt'] },
  'key:encrypt+decrypt': {
    allows: ['kms:Encrypt', 'kms:Decrypt'],
    denies: ['kms:ScheduleKeyDeletion', 'kms:PutKeyPolicy'],
  },
  // Issue 12: the delivery-signing key (lib/constructs/signing-key.ts).
  'signing:sign': { allows: ['kms:Sign'], denies: ['kms:Decrypt', 'kms:Encrypt', 'kms:ScheduleKeyDeletion'] },
  'signing:public-keys': { allows: ['kms:GetPublicKey'], denies: ['kms:Sign', 'kms:ScheduleKeyDeletion'] },
};

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** The pull subscriptions' queues (`koerier-pull-*`, made at run time), as one resource of the grants. */
const PULL_QUEUES = 'pull queues';
const isPullQueueArn = (resource: unknown) => JSON.stringify(resource).endsWith(':koerier-pull-*"]]}');

describe.each([
  ['functions/config/resources.ts', koerierResources],
  ['functions/config/resources.ts plus a table, a queue and functions of every grant kind', extended],
] as const)('Koerier stack from %s', (_label, description) => {
  let synth: Synthesised;
  let ids: {
    table: (name: string) => string;
    queue: (name: string) => string;
    deadLetterQueue: (name: string) => string;
    bucket: (name: string) => string;
    bucketKey: (name: string) => string;
    key: (name: string) => string;
    fn: (name: string) => string;
    role: (name: string) => string;
    logGroup: (name: string) => string;
    api: string;
    signingKey: string;
  };

  beforeAll(() => {
    synth = synthKoerier({ resources: description });
    const { stack } = synth;
    ids = {
      table: (name) => logicalId(stack, stack.tables.byName.get(name)!.table),
      queue: (name) => logicalId(stack, stack.queues.byName.get(name)!.queue),
      deadLetterQueue: (name) => logicalId(stack, stack.queues.byName.get(name)!.deadLetterQueue),
      bucket: (name) => logicalId(stack, stack.buckets.byName.get(name)!),
      bucketKey: (name) => logicalId(stack, stack.buckets.byName.get(name)!.encryptionKey!),
      key: (name) => logicalId(stack, stack.keys.byName.get(name)!),
      fn: (name) => logicalId(stack, stack.functions.get(name)!.function),
      role: (name) => logicalId(stack, stack.functions.get(name)!.role),
      logGroup: (name) => logicalId(stack, stack.functions.get(name)!.node.findChild('Logs')),
      api: logicalId(stack, stack.httpApi.api),
      signingKey: logicalId(stack, stack.signingKey!),
    };
  });

  /** Every Allow statement of the policies attached to a function's role. */
  function statementsOf(fnName: string): Statement[] {
    return Object.values(synth.resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && referencedIds(r.Properties.Roles).includes(ids.role(fnName)))
      .flatMap((r) => r.Properties.PolicyDocument.Statement as Statement[]);
  }

  /** Per resource a function's role names, the actions it may take on it. */
  function actionsByResource(fnName: string): Map<string, Set<string>> {
    const byResource = new Map<string, Set<string>>();
    for (const statement of statementsOf(fnName)) {
      expect(statement.Effect).toBe('Allow');
      const resources = asArray(statement.Resource).flatMap((r) =>
        r === '*' ? ['*'] : isPullQueueArn(r) ? [PULL_QUEUES] : referencedIds(r),
      );
      for (const resource of resources) {
        const actions = byResource.get(resource) ?? new Set<string>();
        for (const action of asArray(statement.Action)) actions.add(action);
        byResource.set(resource, actions);
      }
    }
    return byResource;
  }

  /** The (logical ID, grant kind) pairs a function's description asks for. */
  function grantsOf(spec: FunctionSpec): [string, string][] {
    const grants: [string, string][] = [];
    for (const [name, access] of Object.entries(spec.tables ?? {})) grants.push([ids.table(name), `table:${access}`]);
    for (const [name, access] of Object.entries(spec.queues ?? {})) grants.push([ids.queue(name), `queue:${access}`]);
    for (const [name, access] of Object.entries(spec.deadLetterQueues ?? {}))
      grants.push([ids.deadLetterQueue(name), `queue:${access}`]);
    for (const [name, access] of Object.entries(spec.buckets ?? {})) {
      grants.push([ids.bucket(name), `bucket:${access}`], [ids.bucketKey(name), `bucketKey:${access}`]);
    }
    for (const [name, access] of Object.entries(spec.keys ?? {})) grants.push([ids.key(name), `key:${access}`]);
    if (spec.queueTrigger) grants.push([ids.queue(spec.queueTrigger.queue), 'queue:consume']);
    // cdk.json names no mTLS secret; the stack's own signing key is the default (lib/trust-config.ts).
    for (const use of spec.trust ?? [])
      if (use !== 'client-certificate') grants.push([ids.signingKey, `signing:${use}`]);
    return grants;
  }

  it('CARD-4: every table is on-demand, point-in-time recoverable, KMS-encrypted, retained, with its keys, TTL and indexes', () => {
    for (const [name, spec] of Object.entries(description.tables)) {
      const table = synth.resources[ids.table(name)]!;
      expect(table.Type, name).toBe('AWS::DynamoDB::Table');
      expect(table.DeletionPolicy, name).toBe('Retain');
      expect(table.UpdateReplacePolicy, name).toBe('Retain');
      const p = table.Properties;
      expect(p.BillingMode, name).toBe('PAY_PER_REQUEST');
      expect(p.PointInTimeRecoverySpecification, name).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(p.SSESpecification, name).toEqual({ SSEEnabled: true });
      expect(p.KeySchema, name).toEqual([
        { AttributeName: spec.partitionKey.name, KeyType: 'HASH' },
        ...(spec.sortKey ? [{ AttributeName: spec.sortKey.name, KeyType: 'RANGE' }] : []),
      ]);
      const keys = [
        spec.partitionKey,
        spec.sortKey,
        ...(spec.globalIndexes ?? []).flatMap((i) => [i.partitionKey, i.sortKey]),
      ];
      for (const key of keys.filter((k) => k !== undefined)) {
        expect(p.AttributeDefinitions, name).toContainEqual({ AttributeName: key.name, AttributeType: key.type });
      }
      if (spec.ttlAttribute)
        expect(p.TimeToLiveSpecification, name).toEqual({ AttributeName: spec.ttlAttribute, Enabled: true });
      else expect(p.TimeToLiveSpecification, name).toBeUndefined();
      expect(
        (p.GlobalSecondaryIndexes ?? []).map((i: { IndexName: string }) => i.IndexName),
        name,
      ).toEqual((spec.globalIndexes ?? []).map((i) => i.name));
      for (const index of spec.globalIndexes ?? []) {
        expect(p.GlobalSecondaryIndexes, name).toContainEqual({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
            ...(index.sortKey ? [{ AttributeName: index.sortKey.name, KeyType: 'RANGE' }] : []),
          ],
          // ALL unless the description names the attributes it carries (the lane sweeper's index).
          Projection: index.include
            ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.include] }
            : { ProjectionType: 'ALL' },
        });
      }
    }
    expect(Object.values(synth.resources).filter((r) => r.Type === 'AWS::DynamoDB::Table')).toHaveLength(
      Object.keys(description.tables).length,
    );
  });

  it('CARD-5: every queue redrives to its own dead-letter queue after maxReceiveCount, both encrypted and TLS-only', () => {
    for (const [name, spec] of Object.entries(description.queues)) {
      const queue = synth.resources[ids.queue(name)]!.Properties;
      expect(queue, name).toEqual({
        VisibilityTimeout: spec.visibilityTimeoutSeconds,
        MessageRetentionPeriod: spec.retentionSeconds,
        SqsManagedSseEnabled: true,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [ids.deadLetterQueue(name), 'Arn'] },
          maxReceiveCount: spec.maxReceiveCount,
        },
      });
      const deadLetterQueue = synth.resources[ids.deadLetterQueue(name)]!.Properties;
      expect(deadLetterQueue, `${name}-dlq`).toEqual({
        MessageRetentionPeriod: FOURTEEN_DAYS,
        SqsManagedSseEnabled: true,
      });
      for (const id of [ids.queue(name), ids.deadLetterQueue(name)]) {
        synth.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: id }],
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({
                Effect: 'Deny',
                Action: 'sqs:*',
                Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              }),
            ]),
          },
        });
      }
    }
    expect(Object.values(synth.resources).filter((r) => r.Type === 'AWS::SQS::Queue')).toHaveLength(
      2 * Object.keys(description.queues).length,
    );
  });

  it('EDU-18: a message in any dead-letter queue raises an alarm on an encrypted, TLS-only topic', () => {
    const topicId = logicalId(synth.stack, synth.stack.alarms.topic);
    for (const name of Object.keys(description.queues)) {
      synth.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [ids.deadLetterQueue(name), 'QueueName'] } }],
        Statistic: 'Maximum',
        Period: 60,
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        EvaluationPeriods: 1,
        AlarmActions: [{ Ref: topicId }],
      });
    }
    const topic = synth.resources[topicId]!.Properties;
    const topicKey = synth.resources[referencedIds(topic.KmsMasterKeyId)[0]!]!;
    expect(topicKey.Type).toBe('AWS::KMS::Key');
    expect(topicKey.Properties.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
      }),
    );
    synth.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    synth.template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it("CARD-6, EDU-1: every bucket blocks public access, is TLS-only, KMS-encrypted with a rotating key, access-logged, expires objects after its retention (claim check: the archive's replay window plus a day past the longest queue retention), and is retained", () => {
    for (const name of Object.keys(description.buckets)) {
      const bucket = synth.resources[ids.bucket(name)]!;
      expect(bucket.DeletionPolicy, name).toBe('Retain');
      expect(bucket.Properties.PublicAccessBlockConfiguration, name).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      const [encryption] = bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration as {
        ServerSideEncryptionByDefault: { SSEAlgorithm: string; KMSMasterKeyID: { 'Fn::GetAtt': [string, string] } };
        BucketKeyEnabled: boolean;
      }[];
      expect(encryption!.ServerSideEncryptionByDefault.SSEAlgorithm, name).toBe('aws:kms');
      expect(encryption!.BucketKeyEnabled, name).toBe(true);
      expect(
        synth.resources[encryption!.ServerSideEncryptionByDefault.KMSMasterKeyID['Fn::GetAtt'][0]]!.Properties
          .EnableKeyRotation,
        name,
      ).toBe(true);
      expect(bucket.Properties.LoggingConfiguration?.DestinationBucketName, name).toBeDefined();
      const longestQueueRetentionDays =
        Math.max(...Object.values(description.queues).map((queue) => queue.retentionSeconds)) / 86400;
      const rules = bucket.Properties.LifecycleConfiguration.Rules as { ExpirationInDays?: number }[];
      if (
        (description.buckets as Record<string, { objectRetentionSeconds?: number }>)[name]!.objectRetentionSeconds ===
        undefined
      ) {
        // Contract documents (issue 14): a published version stays fetchable, nothing expires it.
        expect(
          rules.some((rule) => rule.ExpirationInDays !== undefined),
          name,
        ).toBe(false);
      } else {
        // The archive keeps events for its own retention (koerier:archiveRetentionDays, 30 days by default; docs/REPLAY.md);
        // the claim check as long as a replay of them can send its dataref, plus a day past the longest queue retention (issue 36, item 8).
        const retentionDays = name === 'archive' ? 30 : 30 + longestQueueRetentionDays + 1;
        expect(rules, name).toContainEqual(
          expect.objectContaining({ ExpirationInDays: retentionDays, Status: 'Enabled' }),
        );
      }
      synth.template.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: ids.bucket(name) },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });

  it('EDU-2: every key of the description is a rotating, retained customer-managed KMS key', () => {
    for (const name of Object.keys(description.keys)) {
      const key = synth.resources[ids.key(name)]!;
      expect(key.Properties.EnableKeyRotation, name).toBe(true);
      expect(key.DeletionPolicy, name).toBe('Retain');
    }
  });

  it('CARD-3: every function runs nodejs24.x on arm64 as an ESM bundle, with its memory, timeout, tracing and a 3-month log group', () => {
    for (const [name, spec] of Object.entries(description.functions)) {
      const fn = synth.resources[ids.fn(name)]!.Properties;
      expect(fn, name).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: spec.memoryMb,
        Timeout: spec.timeoutSeconds,
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogGroup: { Ref: ids.logGroup(name) } },
        Role: { 'Fn::GetAtt': [ids.role(name), 'Arn'] },
      });
      expect(synth.resources[ids.logGroup(name)]!.Properties.RetentionInDays, name).toBe(90);
    }
    expect(Object.values(synth.resources).filter((r) => r.Type === 'AWS::Lambda::Function')).toHaveLength(
      Object.keys(description.functions).length,
    );
  });

  it('CARD-3: every function gets the settings from the CDK context and, per grant, the resource name under its resourceEnv variable, and nothing else', () => {
    for (const [name, spec] of Object.entries(description.functions)) {
      const expected: Record<string, unknown> = {
        [settingEnv.issuer]: synthContext['koerier:issuer'],
        [settingEnv.audience]: synthContext['koerier:audience'],
        [settingEnv.jwksUrl]: synthContext['koerier:jwksUrl'],
        [settingEnv.tokenUrl]: synthContext['koerier:tokenUrl'],
        [settingEnv.accessTokenType]: synthContext['koerier:accessTokenType'],
        [settingEnv.accessTokenMaxLifetimeSeconds]: String(
          Number(synthContext['koerier:accessTokenMaxLifetimeMinutes']) * 60,
        ),
        [settingEnv.clientIdClaim]: synthContext['koerier:clientIdClaim'],
        [settingEnv.scopeClaims]: 'scope,scp',
        [settingEnv.allowedOrigins]: (synthContext['koerier:allowedOrigins'] as string[]).join(','),
        [settingEnv.webhookOrigin]: synthContext['koerier:webhookOrigin'],
        [settingEnv.idempotencyTtlSeconds]: String(7 * 24 * 3600),
        [settingEnv.entitlements]: JSON.stringify(synthContext['koerier:entitlements']),
        [settingEnv.publishers]: JSON.stringify(synthContext['koerier:publishers']),
        [settingEnv.validationAgreedClients]: '',
        [settingEnv.validationHandshake]: 'required',
        // The API's base URL carries its major version (ADR /core/uri-version).
        [settingEnv.publicBaseUrl]: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [ids.api, 'ApiEndpoint'] }, '/v1']] },
        [settingEnv.stackName]: 'Koerier',
        [settingEnv.sinkCredentials]: 'oauth2-only',
        [settingEnv.outboundPorts]: '443',
        [settingEnv.signingKeys]: { 'Fn::GetAtt': [ids.signingKey, 'Arn'] },
      };
      for (const table of Object.keys(spec.tables ?? {}))
        expected[resourceEnv.table(table as TableName)] = { Ref: ids.table(table) };
      for (const queue of Object.keys(spec.queues ?? {}))
        expected[resourceEnv.queueUrl(queue as QueueName)] = { Ref: ids.queue(queue) };
      for (const queue of Object.keys(spec.deadLetterQueues ?? {})) {
        expected[resourceEnv.deadLetterQueueUrl(queue as QueueName)] = { Ref: ids.deadLetterQueue(queue) };
      }
      for (const bucket of Object.keys(spec.buckets ?? {}))
        expected[resourceEnv.bucket(bucket as BucketName)] = { Ref: ids.bucket(bucket) };
      for (const key of Object.keys(spec.keys ?? {}))
        expected[resourceEnv.key(key as KeyName)] = { 'Fn::GetAtt': [ids.key(key), 'Arn'] };
      if ((spec.pullQueues ?? []).length > 0) expected[resourceEnv.pullQueuePrefix] = 'koerier';
      const variables = synth.resources[ids.fn(name)]!.Properties.Environment.Variables as Record<string, unknown>;
      expect(variables, name).toEqual(expected);
      // Issue 15: no `--enable-source-maps`, which parsed the map at every cold start; the bundle maps a stack when one is formatted.
      expect(variables['NODE_OPTIONS'], name).toBeUndefined();
    }
  });

  it('CARD-3: each role may touch exactly the resources its grants name, with exactly the granted kind of access', () => {
    for (const [name, spec] of Object.entries(description.functions)) {
      const byResource = actionsByResource(name);
      const grants = grantsOf(spec);
      const pull = spec.pullQueues ?? [];
      expect(new Set(byResource.keys()), name).toEqual(
        new Set([...grants.map(([id]) => id), ids.logGroup(name), '*', ...(pull.length > 0 ? [PULL_QUEUES] : [])]),
      );
      if (pull.length > 0)
        expect(byResource.get(PULL_QUEUES), name).toEqual(
          new Set(pull.flatMap((access) => PULL_QUEUE_ACTIONS[access])),
        );
      for (const [id, kind] of grants) {
        const actions = byResource.get(id)!;
        for (const action of grantActions[kind]!.allows)
          expect(actions.has(action), `${name} ${kind} allows ${action}`).toBe(true);
        // A trigger's consume grant may coexist with a send grant on the same queue.
        const alsoGranted = grants.filter(([other]) => other === id).map(([, k]) => k);
        for (const action of grantActions[kind]!.denies) {
          const grantedElsewhere = alsoGranted.some((k) => grantActions[k]!.allows.includes(action));
          if (!grantedElsewhere) expect(actions.has(action), `${name} ${kind} must not allow ${action}`).toBe(false);
        }
      }
      expect(byResource.get(ids.logGroup(name)), name).toEqual(new Set(['logs:CreateLogStream', 'logs:PutLogEvents']));
      for (const tableName of Object.keys(spec.tables ?? {})) {
        for (const index of description.tables[tableName]!.globalIndexes ?? []) {
          const onIndex = statementsOf(name).filter((s) =>
            JSON.stringify(s.Resource).includes(`/index/${index.name}"`),
          );
          expect(
            onIndex.flatMap((s) => asArray(s.Action)),
            `${name} may query ${tableName}/index/${index.name}`,
          ).toContain('dynamodb:Query');
        }
      }
      // Wildcards only where nothing narrower exists: X-Ray's "*" and a bucket's objects.
      const bucketIds = Object.keys(spec.buckets ?? {}).map((bucket) => ids.bucket(bucket));
      for (const resource of statementsOf(name).flatMap((s) => asArray(s.Resource))) {
        if (resource === '*' || !JSON.stringify(resource).includes('*') || isPullQueueArn(resource)) continue;
        expect(bucketIds, `${name}: ${JSON.stringify(resource)}`).toContain(referencedIds(resource)[0]);
        expect(JSON.stringify(resource), name).toMatch(/"\/\*"\]\]\}$/);
      }
      // The only "*" is X-Ray's, which has no resource-level permissions (the cdk-nag IAM5 acknowledgement).
      expect(byResource.get('*'), name).toEqual(new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']));
      expect(synth.resources[ids.role(name)]!.Properties.ManagedPolicyArns, name).toBeUndefined();
    }
  });

  it("CARD-7: only the pull queues (koerier-pull-*) are reached at run time: the pull function consumes (and sends an ordered key's next event, ORD-5), router and delivery-admin send, subscriptions manage, nobody purges", () => {
    const pullStatements = (name: string) =>
      statementsOf(name).filter((statement) => asArray(statement.Resource).some(isPullQueueArn));
    const actions = (name: string) => actionsByResource(name).get(PULL_QUEUES);
    expect(actions('pull')).toEqual(new Set([...PULL_QUEUE_ACTIONS.send, ...PULL_QUEUE_ACTIONS.consume]));
    expect(actions('router')).toEqual(new Set(PULL_QUEUE_ACTIONS.send));
    expect(actions('deliveryAdmin')).toEqual(new Set(PULL_QUEUE_ACTIONS.send));
    expect(actions('subscriptions')).toEqual(new Set(PULL_QUEUE_ACTIONS.manage));
    for (const name of ['ingest', 'delivery', 'apiDescription']) expect(actions(name), name).toBeUndefined();
    for (const name of ['pull', 'router', 'deliveryAdmin', 'subscriptions']) {
      for (const statement of pullStatements(name)) {
        expect(asArray(statement.Action), name).not.toContain('sqs:PurgeQueue');
        expect(
          asArray(statement.Action).some((action) => action.includes('*')),
          name,
        ).toBe(false);
      }
    }
    expect(PULL_QUEUE_ACTIONS.consume).not.toContain('sqs:SendMessage');
    expect(PULL_QUEUE_ACTIONS.send).not.toContain('sqs:ReceiveMessage');
  });

  it('CARD-3: every route of the description reaches its function through a payload-2.0 Lambda integration', () => {
    const integrationOf = (routeKey: string): string => {
      const routes = Object.values(synth.resources).filter(
        (r) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties.RouteKey === routeKey,
      );
      expect(routes, routeKey).toHaveLength(1);
      expect(routes[0]!.Properties.AuthorizationType ?? 'NONE', routeKey).toBe('NONE');
      const integration = synth.resources[referencedIds(routes[0]!.Properties.Target)[0]!]!;
      expect(integration.Properties, routeKey).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
      });
      return referencedIds(integration.Properties.IntegrationUri)[0]!;
    };
    let routeCount = 0;
    for (const [name, spec] of Object.entries(description.functions)) {
      for (const route of spec.routes ?? []) {
        expect(integrationOf(`${route.method} ${servedPath(route.path)}`), `${route.method} ${route.path}`).toBe(
          ids.fn(name),
        );
        routeCount++;
      }
      if (spec.defaultRoute) {
        expect(integrationOf('$default')).toBe(ids.fn(name));
        routeCount++;
      }
      if (spec.routes || spec.defaultRoute) {
        synth.template.hasResourceProperties('AWS::Lambda::Permission', {
          Action: 'lambda:InvokeFunction',
          Principal: 'apigateway.amazonaws.com',
          FunctionName: { 'Fn::GetAtt': [ids.fn(name), 'Arn'] },
        });
      }
    }
    synth.template.resourceCountIs('AWS::ApiGatewayV2::Route', routeCount);
  });

  it('EDU-18: every queue-triggered function receives batches and reports partial failures', () => {
    const mappings = Object.values(synth.resources).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping');
    const triggered = Object.entries(description.functions).filter(([, spec]) => spec.queueTrigger);
    expect(mappings).toHaveLength(triggered.length);
    for (const [name, spec] of triggered) {
      const trigger = spec.queueTrigger!;
      synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: ids.fn(name) },
        EventSourceArn: { 'Fn::GetAtt': [ids.queue(trigger.queue), 'Arn'] },
        BatchSize: trigger.batchSize,
        MaximumBatchingWindowInSeconds: trigger.maxBatchingWindowSeconds,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      expect(description.queues[trigger.queue]!.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(
        6 * spec.timeoutSeconds,
      );
    }
  });

  it('CARD-2: the stack outputs the API URL and every queue URL', () => {
    const outputs = synth.template.toJSON().Outputs;
    expect(outputs.ApiUrl.Value).toEqual({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [ids.api, 'ApiEndpoint'] }, '/v1']] });
    for (const name of Object.keys(description.queues)) {
      expect(outputs[`${name}QueueUrl`].Value, name).toEqual({ Ref: ids.queue(name) });
      expect(outputs[`${name}DeadLetterQueueUrl`].Value, name).toEqual({ Ref: ids.deadLetterQueue(name) });
    }
  });
});

describe('Koerier stack from functions/config/resources.ts, specific properties', () => {
  let synth: Synthesised;
  beforeAll(() => {
    synth = synthKoerier();
  });

  const policyActionsOn = (fnName: string, resourceId: string): string[] => {
    const role = logicalId(synth.stack, synth.stack.functions.get(fnName)!.role);
    return Object.values(synth.resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && referencedIds(r.Properties.Roles).includes(role))
      .flatMap((r) => r.Properties.PolicyDocument.Statement as Statement[])
      .filter((s) => (resourceId === '*' ? s.Resource === '*' : referencedIds(s.Resource).includes(resourceId)))
      .flatMap((s) => asArray(s.Action));
  };

  it('CARD-3: the ingest may send to the inbound queue but neither receive from it nor delete from it', () => {
    const inbound = logicalId(synth.stack, synth.stack.queues.byName.get('inbound')!.queue);
    const actions = policyActionsOn('ingest', inbound);
    expect(actions).toContain('sqs:SendMessage');
    expect(actions).not.toContain('sqs:ReceiveMessage');
    expect(actions).not.toContain('sqs:DeleteMessage');
    expect(actions.some((a) => a.includes('*'))).toBe(false);
  });

  it('EDU-IDEM-17: the ingest may write the idempotency table but no other table', () => {
    const tables = synth.stack.tables.byName;
    expect(policyActionsOn('ingest', logicalId(synth.stack, tables.get('idempotency')!.table))).toContain(
      'dynamodb:PutItem',
    );
    for (const name of ['subscriptions', 'deliveries']) {
      expect(policyActionsOn('ingest', logicalId(synth.stack, tables.get(name)!.table)), name).toEqual([]);
    }
    // Issue 33, ORD-1: it reads which ordered subscriptions refuse keyless events from the route index; it writes nothing there.
    const routes = policyActionsOn('ingest', logicalId(synth.stack, tables.get('routes')!.table));
    expect(routes).toContain('dynamodb:Query');
    expect(routes.filter((a) => /Put|Update|Delete|Write|\*/.test(a))).toEqual([]);
  });

  it('CARD-3: the API description function has no table, queue, bucket or key access at all', () => {
    const role = logicalId(synth.stack, synth.stack.functions.get('apiDescription')!.role);
    const actions = Object.values(synth.resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && referencedIds(r.Properties.Roles).includes(role))
      .flatMap((r) => (r.Properties.PolicyDocument.Statement as Statement[]).flatMap((s) => asArray(s.Action)));
    expect(actions.filter((a) => /^(dynamodb|sqs|s3|kms):/.test(a))).toEqual([]);
  });

  it('WH-7: OPTIONS /events (the webhook validation request) reaches the ingest', () => {
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'OPTIONS /v1/events' });
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: 'POST /v1/events' });
  });

  it('CARD-3: unmatched requests ($default) go to the API description function, which answers them as problems', () => {
    const route = Object.values(synth.resources).find(
      (r) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties.RouteKey === '$default',
    )!;
    const integration = synth.resources[referencedIds(route.Properties.Target)[0]!]!;
    expect(referencedIds(integration.Properties.IntegrationUri)).toEqual([
      logicalId(synth.stack, synth.stack.functions.get('apiDescription')!.function),
    ]);
  });

  it('CARD-3: the $default stage deploys automatically, throttles, and writes JSON access logs without headers', () => {
    const stage = Object.values(synth.resources).find((r) => r.Type === 'AWS::ApiGatewayV2::Stage')!.Properties;
    expect(stage.StageName).toBe('$default');
    expect(stage.AutoDeploy).toBe(true);
    expect(stage.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: STAGE_THROTTLE.rateLimit,
      ThrottlingBurstLimit: STAGE_THROTTLE.burstLimit,
    });
    const format = JSON.parse(stage.AccessLogSettings.Format);
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
      routeKey: '$context.routeKey',
    });
    expect(stage.AccessLogSettings.Format).not.toMatch(/header|authorization/i);
    const logGroup = synth.resources[referencedIds(stage.AccessLogSettings.DestinationArn)[0]!]!;
    expect(logGroup).toMatchObject({ Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 90 } });
  });

  it('EDU-IDEM-7: the idempotency table expires entries through TTL and the ingest keeps them 7 days by default', () => {
    const table = synth.resources[logicalId(synth.stack, synth.stack.tables.byName.get('idempotency')!.table)]!;
    expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: 'expiresAt', Enabled: true });
    const ingest = synth.resources[logicalId(synth.stack, synth.stack.functions.get('ingest')!.function)]!;
    expect(ingest.Properties.Environment.Variables[settingEnv.idempotencyTtlSeconds]).toBe('604800');
  });
});

describe('Koerier stack settings from the CDK context', () => {
  it('EDU-18: koerier:alarmEmail subscribes that address to the alarm topic', () => {
    const { template, stack } = synthKoerier({ context: { 'koerier:alarmEmail': 'ops@example.org' } });
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.org',
      TopicArn: { Ref: logicalId(stack, stack.alarms.topic) },
    });
  });

  it('EDU-IDEM-7: koerier:idempotencyTtlDays and koerier:entitlements reach every function', () => {
    const entitlements = { 'dev-subscriber': [{ typePrefix: 'nl.example.' }] };
    const { resources } = synthKoerier({
      context: { 'koerier:idempotencyTtlDays': 3, 'koerier:entitlements': entitlements },
    });
    const functions = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(0);
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables[settingEnv.idempotencyTtlSeconds]).toBe(String(3 * 24 * 3600));
      expect(JSON.parse(fn.Properties.Environment.Variables[settingEnv.entitlements])).toEqual(entitlements);
    }
  });

  it("EDU-18: koerier:archiveRetentionDays sets the archive bucket's lifecycle expiry and reaches the replay worker", () => {
    const { stack, resources } = synthKoerier({ context: { 'koerier:archiveRetentionDays': 7 } });
    const archive = resources[logicalId(stack, stack.buckets.byName.get('archive')!)]!;
    expect(archive.Properties.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ ExpirationInDays: 7, Status: 'Enabled' }),
    );
    const worker = resources[logicalId(stack, stack.functions.get('replayWorker')!.function)]!;
    expect(worker.Properties.Environment.Variables[settingEnv.archiveRetentionDays]).toBe('7');
  });

  it('CARD-2: an invalid context stops the synth with the key that is wrong', () => {
    expect(() => synthKoerier({ context: { 'koerier:issuer': 'http://insecure.example.org' } })).toThrow(
      /koerier:issuer must be an https URL/,
    );
  });
});

describe('Koerier stack refuses descriptions it cannot deploy safely', () => {
  const withFunction = (name: string, spec: FunctionSpec): ResourceDescription => ({
    ...koerierResources,
    functions: { ...koerierResources.functions, [name]: spec },
  });
  const base = { entry: 'functions/handlers/api-description.ts', memoryMb: 128, timeoutSeconds: 15 } as const;

  it('EDU-18: a trigger queue whose visibility timeout is under 6x the function timeout', () => {
    // inbound: visibility 60 s; 6 x 15 s = 90 s.
    const description = withFunction('extraRouter', {
      ...base,
      queueTrigger: { queue: 'inbound', batchSize: 10, maxBatchingWindowSeconds: 1 },
    });
    expect(() => synthKoerier({ resources: description })).toThrow(
      /queue 'inbound' has a visibility timeout of 60 s, but function 'extraRouter' \(timeout 15 s\) is triggered by it: it must be at least 6 x the function timeout \(90 s\)/,
    );
  });

  it('CARD-3: a grant of a resource the description does not have', () => {
    const description = withFunction('extraReader', {
      ...base,
      tables: { extraArchive: 'read' } as NonNullable<FunctionSpec['tables']>,
    });
    expect(() => synthKoerier({ resources: description })).toThrow(
      /function 'extraReader' refers to table 'extraArchive', which functions\/config\/resources.ts does not describe \(known: idempotency, /,
    );
  });

  it('CARD-3: two functions claiming one route, or both claiming $default', () => {
    const sameRoute = withFunction('extraSecond', { ...base, routes: [{ method: 'POST', path: '/events' }] });
    expect(() => synthKoerier({ resources: sameRoute })).toThrow(
      /route POST \/events is claimed by both function 'ingest' and function 'extraSecond'/,
    );
    const twoDefaults = withFunction('extraSecond', { ...base, defaultRoute: true });
    expect(() => synthKoerier({ resources: twoDefaults })).toThrow(
      /route \$default is claimed by both function 'apiDescription' and function 'extraSecond'/,
    );
  });
});
