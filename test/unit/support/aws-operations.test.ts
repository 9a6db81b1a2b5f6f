/**
 * The IAM mapping of the permissions record (test/support/aws-operations.ts), checked by hand
 * against AWS's Service Authorization Reference: which action each SDK call is authorised as, and
 * on which resource. test/infra/function-permissions.test.ts relies on it for every call the e2e
 * suite makes.
 */
import { describe, expect, it } from 'vitest';
import { laptopKmsKeyArn, requiredPermissions, sseKmsActions } from '../../support/aws-operations.js';

const TABLE = 'arn:aws:dynamodb:eu-west-1:000000000000:table';
const QUEUE = 'arn:aws:sqs:eu-west-1:000000000000';
const QUEUE_URL = 'http://127.0.0.1:41234/000000000000';
const SUBSCRIPTION = '3f2b8c1e-5d4a-4e6f-9a1b-2c3d4e5f6a7b';

describe('the IAM action and resource of each SDK call (issue 27 §2)', () => {
  it('CARD-2: DynamoDB item calls act on the table; a Query or Scan with IndexName on the index ARN only', () => {
    expect(requiredPermissions('DynamoDB', 'GetItem', { TableName: 'koerier-subscriptions', Key: {} })).toEqual([
      { action: 'dynamodb:GetItem', resource: `${TABLE}/koerier-subscriptions` },
    ]);
    expect(requiredPermissions('DynamoDB', 'UpdateItem', { TableName: 'koerier-deliveries' })).toEqual([
      { action: 'dynamodb:UpdateItem', resource: `${TABLE}/koerier-deliveries` },
    ]);
    expect(
      requiredPermissions('DynamoDB', 'Query', { TableName: 'koerier-subscriptions', IndexName: 'byOwner' }),
    ).toEqual([{ action: 'dynamodb:Query', resource: `${TABLE}/koerier-subscriptions/index/byOwner` }]);
    expect(requiredPermissions('DynamoDB', 'Query', { TableName: 'koerier-routes' })).toEqual([
      { action: 'dynamodb:Query', resource: `${TABLE}/koerier-routes` },
    ]);
  });

  it('CARD-2: batch reads and writes name their tables in RequestItems, each authorised as the batch action; transactions item by item', () => {
    expect(
      requiredPermissions('DynamoDB', 'BatchWriteItem', {
        RequestItems: { 'koerier-routes': [{}, {}], 'koerier-subscriptions': [{}] },
      }),
    ).toEqual([
      { action: 'dynamodb:BatchWriteItem', resource: `${TABLE}/koerier-routes` },
      { action: 'dynamodb:BatchWriteItem', resource: `${TABLE}/koerier-subscriptions` },
    ]);
    expect(
      requiredPermissions('DynamoDB', 'BatchGetItem', { RequestItems: { 'koerier-deliveries': { Keys: [] } } }),
    ).toEqual([{ action: 'dynamodb:BatchGetItem', resource: `${TABLE}/koerier-deliveries` }]);
    expect(
      requiredPermissions('DynamoDB', 'TransactWriteItems', {
        TransactItems: [
          { Put: { TableName: 'koerier-routes' } },
          { Delete: { TableName: 'koerier-routes' } },
          { ConditionCheck: { TableName: 'koerier-subscriptions' } },
          { Update: { TableName: 'koerier-subscriptions' } },
        ],
      }),
    ).toEqual([
      { action: 'dynamodb:PutItem', resource: `${TABLE}/koerier-routes` },
      { action: 'dynamodb:DeleteItem', resource: `${TABLE}/koerier-routes` },
      { action: 'dynamodb:ConditionCheckItem', resource: `${TABLE}/koerier-subscriptions` },
      { action: 'dynamodb:UpdateItem', resource: `${TABLE}/koerier-subscriptions` },
    ]);
    expect(
      requiredPermissions('DynamoDB', 'TransactGetItems', {
        TransactItems: [{ Get: { TableName: 'koerier-partners' } }],
      }),
    ).toEqual([{ action: 'dynamodb:GetItem', resource: `${TABLE}/koerier-partners` }]);
  });

  it('CARD-2: SQS batch calls are authorised as their single action on the queue their URL names; a pull queue is folded to koerier-pull-{id}', () => {
    expect(
      requiredPermissions('SQS', 'SendMessageBatch', {
        QueueUrl: `${QUEUE_URL}/koerier-deliveries`,
        Entries: [{}, {}],
      }),
    ).toEqual([{ action: 'sqs:SendMessage', resource: `${QUEUE}:koerier-deliveries` }]);
    expect(
      requiredPermissions('SQS', 'DeleteMessageBatch', { QueueUrl: `${QUEUE_URL}/koerier-pull-${SUBSCRIPTION}` }),
    ).toEqual([{ action: 'sqs:DeleteMessage', resource: `${QUEUE}:koerier-pull-{id}` }]);
    expect(
      requiredPermissions('SQS', 'ChangeMessageVisibilityBatch', { QueueUrl: `${QUEUE_URL}/koerier-deliveries` }),
    ).toEqual([{ action: 'sqs:ChangeMessageVisibility', resource: `${QUEUE}:koerier-deliveries` }]);
    expect(requiredPermissions('SQS', 'ReceiveMessage', { QueueUrl: `${QUEUE_URL}/koerier-deliveries-dlq` })).toEqual([
      { action: 'sqs:ReceiveMessage', resource: `${QUEUE}:koerier-deliveries-dlq` },
    ]);
    // These name the queue, not its URL.
    expect(requiredPermissions('SQS', 'GetQueueUrl', { QueueName: `koerier-pull-${SUBSCRIPTION}-dlq` })).toEqual([
      { action: 'sqs:GetQueueUrl', resource: `${QUEUE}:koerier-pull-{id}-dlq` },
    ]);
    expect(
      requiredPermissions('SQS', 'CreateQueue', { QueueName: `koerier-pull-${SUBSCRIPTION}`, Attributes: {} }),
    ).toEqual([{ action: 'sqs:CreateQueue', resource: `${QUEUE}:koerier-pull-{id}` }]);
    // A real AWS queue URL reads the same.
    expect(
      requiredPermissions('SQS', 'GetQueueAttributes', {
        QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/koerier-inbound',
      }),
    ).toEqual([{ action: 'sqs:GetQueueAttributes', resource: `${QUEUE}:koerier-inbound` }]);
    expect(requiredPermissions('SQS', 'ListQueues', { QueueNamePrefix: 'koerier' })).toEqual([
      { action: 'sqs:ListQueues', resource: '*' },
    ]);
  });

  it('CARD-2: S3 object calls act on the object ARN folded to its bucket prefix; HEAD is a GetObject; listing is ListBucket on the bucket', () => {
    expect(
      requiredPermissions('S3', 'PutObject', { Bucket: 'koerier-payloads', Key: 'payloads/0a1b2c', Body: 'x' }),
    ).toEqual([{ action: 's3:PutObject', resource: 'arn:aws:s3:::koerier-payloads/payloads/{key}' }]);
    expect(requiredPermissions('S3', 'HeadObject', { Bucket: 'koerier-payloads', Key: 'uploads/9z' })).toEqual([
      { action: 's3:GetObject', resource: 'arn:aws:s3:::koerier-payloads/uploads/{key}' },
    ]);
    expect(
      requiredPermissions('S3', 'GetObject', { Bucket: 'koerier-contracts', Key: 'schemas/leerling/1.0.0.json' }),
    ).toEqual([{ action: 's3:GetObject', resource: 'arn:aws:s3:::koerier-contracts/schemas/{key}' }]);
    expect(
      requiredPermissions('S3', 'ListObjectsV2', { Bucket: 'koerier-archive', Prefix: 'archive/2026/11/29/' }),
    ).toEqual([{ action: 's3:ListBucket', resource: 'arn:aws:s3:::koerier-archive' }]);
    expect(
      requiredPermissions('S3', 'CopyObject', {
        Bucket: 'koerier-archive',
        Key: 'archive/b',
        CopySource: 'koerier-payloads/payloads/a%20b',
      }),
    ).toEqual([
      { action: 's3:GetObject', resource: 'arn:aws:s3:::koerier-payloads/payloads/{key}' },
      { action: 's3:PutObject', resource: 'arn:aws:s3:::koerier-archive/archive/{key}' },
    ]);
  });

  it("CARD-2: KMS calls act on the key they name; the e2e KMS stand-in names the stack's keys koerier-<name>", () => {
    const credentials = laptopKmsKeyArn('credentials');
    expect(credentials).toBe('arn:aws:kms:eu-west-1:000000000000:key/koerier-credentials');
    expect(laptopKmsKeyArn('lockTokens')).toBe('arn:aws:kms:eu-west-1:000000000000:key/koerier-lock-tokens');
    expect(requiredPermissions('KMS', 'Encrypt', { KeyId: credentials, Plaintext: new Uint8Array(1) })).toEqual([
      { action: 'kms:Encrypt', resource: credentials },
    ]);
    expect(requiredPermissions('KMS', 'Sign', { KeyId: 'a1b2', Message: new Uint8Array(1) })).toEqual([
      { action: 'kms:Sign', resource: 'arn:aws:kms:eu-west-1:000000000000:key/a1b2' },
    ]);
    // Without KeyId the key is the one the ciphertext names: the record says it cannot tell.
    expect(requiredPermissions('KMS', 'Decrypt', { CiphertextBlob: new Uint8Array(1) })[0]!.resource).toMatch(
      /^unknown/,
    );
  });

  it('CARD-2: a call the mapping does not know is marked unmapped, so the permissions test fails on it rather than pass it over', () => {
    expect(requiredPermissions('SQS', 'AddPermission', { QueueUrl: `${QUEUE_URL}/koerier-inbound` })).toEqual([
      { action: 'unmapped:SQS:AddPermission', resource: '*' },
    ]);
    expect(requiredPermissions('SecretsManager', 'GetSecretValue', {})).toEqual([
      { action: 'unmapped:SecretsManager:GetSecretValue', resource: '*' },
    ]);
  });

  it('CARD-2: what a call needs of an SSE-KMS key: SQS producers make and read data keys, consumers read; S3 uploads make one, downloads read, HEAD neither', () => {
    expect(sseKmsActions('SQS', 'SendMessageBatch')).toEqual(['kms:GenerateDataKey', 'kms:Decrypt']);
    expect(sseKmsActions('SQS', 'ReceiveMessage')).toEqual(['kms:Decrypt']);
    expect(sseKmsActions('SQS', 'DeleteMessageBatch')).toEqual([]);
    expect(sseKmsActions('S3', 'PutObject')).toEqual(['kms:GenerateDataKey']);
    expect(sseKmsActions('S3', 'GetObject')).toEqual(['kms:Decrypt']);
    expect(sseKmsActions('S3', 'HeadObject')).toEqual([]);
    expect(sseKmsActions('DynamoDB', 'PutItem')).toEqual([]);
  });
});
