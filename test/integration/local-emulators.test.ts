import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { buckets, keys, localName, queues, resourceEnv, tables } from '../../functions/config/resources.js';

/** Sets variables for the duration of a test file and puts the old values back afterwards. */
function useEnvironment(values: Record<string, string>): () => void {
  const previous = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  return () => {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

describe('laptop emulators reached through the standard AWS SDK endpoint variables', () => {
  let emulators: Emulators;
  let restoreEnvironment: () => void;

  beforeAll(async () => {
    emulators = await startEmulators();
    restoreEnvironment = useEnvironment({ ...emulators.awsEnvironment, ...emulators.resourceEnvironment });
  });
  afterAll(async () => {
    restoreEnvironment?.();
    await emulators?.stop();
  });

  it('names every resource of functions/config/resources.ts in the resource environment', () => {
    const expected: Record<string, string> = {};
    for (const name of Object.keys(tables) as (keyof typeof tables)[])
      expected[resourceEnv.table(name)] = localName.table(name);
    for (const name of Object.keys(buckets) as (keyof typeof buckets)[])
      expected[resourceEnv.bucket(name)] = localName.bucket(name);
    for (const name of Object.keys(keys) as (keyof typeof keys)[]) expected[resourceEnv.key(name)] = `local:${name}`;
    expect(emulators.resourceEnvironment).toMatchObject(expected);
    for (const name of Object.keys(queues) as (keyof typeof queues)[]) {
      expect(emulators.resourceEnvironment[resourceEnv.queueUrl(name)]).toBe(
        `${emulators.endpoints.sqs}/000000000000/${localName.queue(name)}`,
      );
      expect(emulators.resourceEnvironment[resourceEnv.deadLetterQueueUrl(name)]).toBe(
        `${emulators.endpoints.sqs}/000000000000/${localName.deadLetterQueue(name)}`,
      );
    }
    expect(emulators.awsEnvironment).toMatchObject({
      AWS_ENDPOINT_URL_DYNAMODB: emulators.endpoints.dynamodb,
      AWS_ENDPOINT_URL_SQS: emulators.endpoints.sqs,
      AWS_ENDPOINT_URL_S3: emulators.endpoints.s3,
      AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
      AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    });
  });

  it('CARD-4: a DynamoDB client built with no endpoint option writes to dynalite, with conditional writes and the GSI', async () => {
    const client = new DynamoDBClient({});
    expect(await client.config.endpoint?.()).toBeUndefined(); // nothing but the environment points it here
    const table = localName.table('subscriptions');
    const described = await client.send(new DescribeTableCommand({ TableName: table }));
    expect(described.Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName)).toEqual(['byOwner']);

    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: { id: { S: 'sub-1' }, owner: { S: 'dev-subscriber' }, createdAt: { S: '2025-01-01T00:00:00Z' } },
        ConditionExpression: 'attribute_not_exists(id)',
      }),
    );
    await expect(
      client.send(
        new PutItemCommand({
          TableName: table,
          Item: { id: { S: 'sub-1' } },
          ConditionExpression: 'attribute_not_exists(id)',
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    const byOwner = await client.send(
      new QueryCommand({
        TableName: table,
        IndexName: 'byOwner',
        KeyConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': { S: 'dev-subscriber' } },
      }),
    );
    expect(byOwner.Items?.map((item) => item.id?.S)).toEqual(['sub-1']);
    client.destroy();
  });

  it('CARD-5: every queue has a dead-letter queue in its redrive policy, and messages carry their system attributes', async () => {
    const client = new SQSClient({});
    for (const name of Object.keys(queues) as (keyof typeof queues)[]) {
      const { Attributes } = await client.send(
        new GetQueueAttributesCommand({ QueueUrl: process.env[resourceEnv.queueUrl(name)], AttributeNames: ['All'] }),
      );
      expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}')).toEqual({
        deadLetterTargetArn: `arn:aws:sqs:${emulators.region}:000000000000:${localName.deadLetterQueue(name)}`,
        maxReceiveCount: queues[name].maxReceiveCount,
      });
      expect(Attributes?.VisibilityTimeout).toBe(String(queues[name].visibilityTimeoutSeconds));
    }
    const queueUrl = process.env[resourceEnv.queueUrl('inbound')];
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"hello":"world"}' }));
    const received = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        WaitTimeSeconds: 1,
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    expect(received.Messages?.[0]?.Body).toBe('{"hello":"world"}');
    expect(received.Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('1');
    client.destroy();
  });

  it('CARD-6: an S3 client built with no endpoint option stores and reads objects in s3rver, path-style, without flexible checksums', async () => {
    const client = new S3Client({});
    const bucket = process.env[resourceEnv.bucket('payloads')];
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'claim/1', Body: 'large data', ContentType: 'text/plain' }),
    );
    const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'claim/1' }));
    expect(await object.Body?.transformToString()).toBe('large data');
    expect(object.ContentType).toBe('text/plain');
    client.destroy();
  });
});

describe('laptop emulators with a persisted state directory', () => {
  it('review #22: keeps tables, items, objects and queued messages across a restart', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'koerier-state-'));
    try {
      const config = (emulators: Emulators) => ({
        region: emulators.region,
        credentials: {
          accessKeyId: emulators.awsEnvironment.AWS_ACCESS_KEY_ID ?? '',
          secretAccessKey: emulators.awsEnvironment.AWS_SECRET_ACCESS_KEY ?? '',
        },
      });
      const first = await startEmulators({ stateDir });
      const dynamodb = new DynamoDBClient({ ...config(first), endpoint: first.endpoints.dynamodb });
      await dynamodb.send(
        new PutItemCommand({ TableName: localName.table('idempotency'), Item: { pk: { S: 'kept' } } }),
      );
      const s3 = new S3Client({ ...config(first), endpoint: first.endpoints.s3, forcePathStyle: true });
      await s3.send(new PutObjectCommand({ Bucket: localName.bucket('payloads'), Key: 'kept', Body: 'still here' }));
      const sqs = new SQSClient({ ...config(first), endpoint: first.endpoints.sqs });
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: first.resourceEnvironment[resourceEnv.queueUrl('inbound')],
          MessageBody: 'kept too',
        }),
      );
      [dynamodb, s3, sqs].forEach((client) => client.destroy());
      await first.stop();

      const second = await startEmulators({ stateDir });
      try {
        const dynamodbAgain = new DynamoDBClient({ ...config(second), endpoint: second.endpoints.dynamodb });
        const item = await dynamodbAgain.send(
          new GetItemCommand({ TableName: localName.table('idempotency'), Key: { pk: { S: 'kept' } } }),
        );
        expect(item.Item?.pk?.S).toBe('kept');
        const s3Again = new S3Client({ ...config(second), endpoint: second.endpoints.s3, forcePathStyle: true });
        const object = await s3Again.send(new GetObjectCommand({ Bucket: localName.bucket('payloads'), Key: 'kept' }));
        expect(await object.Body?.transformToString()).toBe('still here');
        const sqsAgain = new SQSClient({ ...config(second), endpoint: second.endpoints.sqs });
        const { Messages } = await sqsAgain.send(
          new ReceiveMessageCommand({
            QueueUrl: second.resourceEnvironment[resourceEnv.queueUrl('inbound')],
            MaxNumberOfMessages: 10,
          }),
        );
        expect(Messages?.map((message) => message.Body)).toEqual(['kept too']);
        [dynamodbAgain, s3Again, sqsAgain].forEach((client) => client.destroy());
      } finally {
        await second.stop();
      }
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});
