/**
 * What IAM must allow for an AWS SDK call: each call a function makes, mapped to the IAM actions
 * it is authorised as and the resources they are evaluated on (AWS's Service Authorization
 * Reference: the resource types of each action), written as ARNs in the laptop's account and
 * region. The permissions record (./aws-operations-recorder.ts) maps every call of the e2e suite
 * with it, and test/infra/function-permissions.test.ts holds each function's role to the result;
 * test/unit/aws-operations.test.ts checks the mapping by hand.
 *
 * What is not the call's own (the key of an SSE-KMS queue or bucket, the event source mappings)
 * depends on how the resource is configured, so the permissions test adds it from the template,
 * with `sseKmsActions` below for what each call needs of such a key.
 *
 * Names that differ per event or subscription are folded, so that the record stays small: a
 * UUID in a name becomes `{id}` (a pull queue `koerier-pull-{id}`), an object key keeps its
 * first segment (`payloads/{key}`, the bucket prefix) — IAM wildcards match both as they would
 * the real name.
 */
import { LOCAL_REGION } from '../../local/emulators.js';

/** The laptop's stand-ins for what an ARN carries; its account is the SQS emulator's. */
export const LAPTOP_ACCOUNT = {
  partition: 'aws',
  region: LOCAL_REGION,
  account: '000000000000',
  urlSuffix: 'amazonaws.com',
} as const;

export interface Permission {
  /** `dynamodb:GetItem`; `unmapped:<Service>:<Operation>` for a call this file does not know yet. */
  readonly action: string;
  /** The ARN IAM evaluates the action on, or `*` for an action that takes no resource. */
  readonly resource: string;
}

type Input = Readonly<Record<string, unknown>>;

const { partition, region, account } = LAPTOP_ACCOUNT;

export const tableArn = (tableName: string): string =>
  `arn:${partition}:dynamodb:${region}:${account}:table/${tableName}`;
export const queueArn = (queueName: string): string =>
  `arn:${partition}:sqs:${region}:${account}:${foldIds(queueName)}`;
export const bucketArn = (bucket: string): string => `arn:${partition}:s3:::${bucket}`;
/** The object's ARN with its key folded to the bucket prefix: `arn:aws:s3:::koerier-payloads/payloads/{key}`. */
export const objectArn = (bucket: string, key: string): string => `${bucketArn(bucket)}/${keyPrefix(key)}{key}`;
/** A KMS key by the id a call names: an ARN as it is, anything else as a key id of the laptop's account. */
export const kmsKeyArn = (keyId: string): string =>
  keyId.startsWith('arn:') ? keyId : `arn:${partition}:kms:${region}:${account}:key/${keyId}`;

/**
 * The KMS key ARN the e2e suite gives a key of functions/config/resources.ts (`credentials`, `lockTokens`) or
 * the stack's signing key (`signing`) when it runs the functions against a stand-in KMS
 * (test/e2e/kms-keys.test.ts); the permissions test gives the template's keys the same ARNs.
 */
export function laptopKmsKeyArn(name: string): string {
  return kmsKeyArn(`koerier-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function foldIds(name: string): string {
  return name.replace(UUID, '{id}');
}

/** `payloads/abc` → `payloads/`; a key without a `/` has no prefix. */
function keyPrefix(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash + 1);
}

/** The queue a URL names (its last path segment), as SQS resolves it. */
function queueNameOf(queueUrl: unknown): string {
  const url = String(queueUrl ?? '');
  return url.split('/').filter(Boolean).at(-1) ?? url;
}

const text = (value: unknown): string => String(value ?? '');

/** Operations whose IAM action has the operation's name and acts on the table, or on the index the input names. */
const DYNAMODB_TABLE_OPERATIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'DescribeTable',
  'ConditionCheckItem',
]);
/** TransactWriteItems is authorised item by item, as the single-item action of each. */
const TRANSACT_WRITE_ACTIONS: Readonly<Record<string, string>> = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
};

function dynamodb(operation: string, input: Input): Permission[] {
  if (DYNAMODB_TABLE_OPERATIONS.has(operation)) {
    const table = tableArn(text(input['TableName']));
    // Query and Scan on an index are authorised on the index's ARN only.
    const index = input['IndexName'] === undefined ? undefined : `${table}/index/${text(input['IndexName'])}`;
    return [{ action: `dynamodb:${operation}`, resource: index ?? table }];
  }
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    return Object.keys((input['RequestItems'] ?? {}) as object).map((table) => ({
      action: `dynamodb:${operation}`,
      resource: tableArn(table),
    }));
  }
  if (operation === 'TransactGetItems' || operation === 'TransactWriteItems') {
    return ((input['TransactItems'] ?? []) as Record<string, { TableName?: string }>[]).flatMap((item) =>
      Object.entries(item).map(([kind, request]) => ({
        action:
          operation === 'TransactGetItems'
            ? 'dynamodb:GetItem'
            : (TRANSACT_WRITE_ACTIONS[kind] ?? `unmapped:DynamoDB:TransactWriteItems.${kind}`),
        resource: tableArn(text(request.TableName)),
      })),
    );
  }
  return [unmapped('DynamoDB', operation)];
}

/** Batch calls are authorised as their single action, once for the queue. */
const SQS_ACTIONS: Readonly<Record<string, string>> = {
  SendMessage: 'sqs:SendMessage',
  SendMessageBatch: 'sqs:SendMessage',
  ReceiveMessage: 'sqs:ReceiveMessage',
  DeleteMessage: 'sqs:DeleteMessage',
  DeleteMessageBatch: 'sqs:DeleteMessage',
  ChangeMessageVisibility: 'sqs:ChangeMessageVisibility',
  ChangeMessageVisibilityBatch: 'sqs:ChangeMessageVisibility',
  GetQueueAttributes: 'sqs:GetQueueAttributes',
  SetQueueAttributes: 'sqs:SetQueueAttributes',
  GetQueueUrl: 'sqs:GetQueueUrl',
  CreateQueue: 'sqs:CreateQueue',
  DeleteQueue: 'sqs:DeleteQueue',
  PurgeQueue: 'sqs:PurgeQueue',
  TagQueue: 'sqs:TagQueue',
  ListQueueTags: 'sqs:ListQueueTags',
};

function sqs(operation: string, input: Input): Permission[] {
  if (operation === 'ListQueues') return [{ action: 'sqs:ListQueues', resource: '*' }];
  const action = SQS_ACTIONS[operation];
  if (!action) return [unmapped('SQS', operation)];
  // GetQueueUrl and CreateQueue name the queue; every other call its URL.
  const name =
    operation === 'GetQueueUrl' || operation === 'CreateQueue'
      ? text(input['QueueName'])
      : queueNameOf(input['QueueUrl']);
  return [{ action, resource: queueArn(name) }];
}

function s3(operation: string, input: Input): Permission[] {
  const bucket = text(input['Bucket']);
  const object = (action: string) => ({ action, resource: objectArn(bucket, text(input['Key'])) });
  switch (operation) {
    // HEAD is authorised as a GET of the object.
    case 'GetObject':
    case 'HeadObject':
      return [object('s3:GetObject')];
    case 'PutObject':
      return [object('s3:PutObject')];
    case 'DeleteObject':
      return [object('s3:DeleteObject')];
    case 'DeleteObjects':
      return ((input['Delete'] as { Objects?: { Key?: string }[] } | undefined)?.Objects ?? []).map(({ Key }) => ({
        action: 's3:DeleteObject',
        resource: objectArn(bucket, text(Key)),
      }));
    // Listing is authorised on the bucket (its `s3:prefix` condition key carries the prefix).
    case 'ListObjects':
    case 'ListObjectsV2':
    case 'HeadBucket':
      return [{ action: 's3:ListBucket', resource: bucketArn(bucket) }];
    case 'CopyObject': {
      // CopySource: `<bucket>/<key>`, URL-encoded.
      const source = decodeURIComponent(text(input['CopySource']).replace(/^\//, ''));
      const slash = source.indexOf('/');
      return [
        { action: 's3:GetObject', resource: objectArn(source.slice(0, slash), source.slice(slash + 1)) },
        object('s3:PutObject'),
      ];
    }
    default:
      return [unmapped('S3', operation)];
  }
}

const KMS_KEY_OPERATIONS = new Set([
  'Encrypt',
  'Decrypt',
  'Sign',
  'Verify',
  'GetPublicKey',
  'GenerateDataKey',
  'GenerateDataKeyWithoutPlaintext',
  'DescribeKey',
]);

function kms(operation: string, input: Input): Permission[] {
  if (!KMS_KEY_OPERATIONS.has(operation)) return [unmapped('KMS', operation)];
  // A Decrypt without KeyId is authorised on the key the ciphertext names, which the call does not show.
  const keyId = input['KeyId'];
  return [
    {
      action: `kms:${operation}`,
      resource:
        keyId === undefined
          ? 'unknown: the key its ciphertext names (the call gives no KeyId)'
          : kmsKeyArn(text(keyId)),
    },
  ];
}

function unmapped(service: string, operation: string): Permission {
  return { action: `unmapped:${service}:${operation}`, resource: '*' };
}

/**
 * The IAM actions and resources one SDK call needs. `service` is the SDK's service id
 * (`client.config.serviceId`: DynamoDB, SQS, S3, KMS), `operation` the command without `Command`.
 */
export function requiredPermissions(service: string, operation: string, input: Input): Permission[] {
  switch (service) {
    case 'DynamoDB':
      return dynamodb(operation, input);
    case 'SQS':
      return sqs(operation, input);
    case 'S3':
      return s3(operation, input);
    case 'KMS':
      return kms(operation, input);
    default:
      return [unmapped(service, operation)];
  }
}

/**
 * What a call needs of the KMS key of a resource encrypted with one (SSE-KMS), beyond its own
 * action: a producer to an SSE-KMS queue makes and reads data keys, a consumer reads them (Amazon
 * SQS Developer Guide, "Configuring KMS permissions"); an S3 upload makes a data key, a download
 * decrypts it (Amazon S3 User Guide, "Using server-side encryption with AWS KMS keys"); a HEAD
 * reads no object data. A resource encrypted with SQS- or S3-managed keys, or a table with an AWS
 * owned or AWS managed key, asks nothing of the caller.
 */
export function sseKmsActions(service: string, operation: string): string[] {
  if (service === 'SQS') {
    if (operation === 'SendMessage' || operation === 'SendMessageBatch') return ['kms:GenerateDataKey', 'kms:Decrypt'];
    if (operation === 'ReceiveMessage') return ['kms:Decrypt'];
    return [];
  }
  if (service === 'S3') {
    if (operation === 'PutObject') return ['kms:GenerateDataKey'];
    if (operation === 'GetObject') return ['kms:Decrypt'];
    if (operation === 'CopyObject') return ['kms:Decrypt', 'kms:GenerateDataKey'];
    return [];
  }
  return [];
}

/**
 * The SQS actions Lambda's event source mapping performs on its queue with the function's role
 * (AWS Lambda Developer Guide, "Using Lambda with Amazon SQS": the execution role permissions),
 * and, for an SSE-KMS queue, `kms:Decrypt` on its key. With partial batch responses Lambda
 * deletes the messages that succeeded and leaves the others to their visibility timeout.
 */
export const EVENT_SOURCE_MAPPING_ACTIONS = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
] as const;
