/**
 * The idempotency mechanism on DynamoDB (dynalite): the same store contract the in-memory store
 * passes, the DynamoDB requests each outcome costs, and exactly one SQS message when 20 requests
 * race with one key.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbIdempotencyStore, idempotencyKeyOf } from '../../functions/aws/dynamodb-idempotency-store.js';
import { jsonResponse } from '../../functions/core/http/messages.js';
import { withIdempotency, type IdempotencyContext } from '../../functions/core/idempotency/index.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { countRequests, type RequestCounter } from '../support/request-counter.js';
import { controlledClock, ingestRequest } from '../unit/idempotency/store-contract.js';
import { describeIdempotencyStoreContract } from '../unit/idempotency/store-contract.js';

let emulators: Emulators;
let dynamodb: DynamoDBClient;
let sqs: SQSClient;
let requests: RequestCounter;
let tableName: string;
let queueUrl: string;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false }); // fixed clocks in the past: no sweeping by real time
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  sqs = new SQSClient(emulators.clientSettings('sqs'));
  requests = countRequests(dynamodb);
  tableName = emulators.resourceEnvironment[resourceEnv.table('idempotency')]!;
  queueUrl = emulators.resourceEnvironment[resourceEnv.queueUrl('inbound')]!;
});

afterAll(async () => {
  dynamodb?.destroy();
  sqs?.destroy();
  await emulators?.stop();
});

describeIdempotencyStoreContract('DynamoDB (dynalite)', () => new DynamoDbIdempotencyStore(dynamodb, tableName));

describe('idempotency on DynamoDB: requests and the queue', () => {
  const context = (): IdempotencyContext => ({
    clientId: 'publisher-a',
    operation: 'POST /events',
    store: new DynamoDbIdempotencyStore(dynamodb, tableName),
    clock: controlledClock(),
    ttlSeconds: 7 * 24 * 3600,
    lockSeconds: 60,
  });
  const accept = async () => jsonResponse(202, { accepted: 1 });

  it('CARD-4: an accepted request costs 2 DynamoDB requests (conditional claim, completion)', async () => {
    requests.reset();
    await withIdempotency(ingestRequest(randomUUID(), '{}'), context(), accept);
    expect(requests.byOperation).toEqual({ PutItemCommand: 1, UpdateItemCommand: 1 });
  });

  it('CARD-4: a replay costs the failed claim plus, on dynalite only, a GetItem (AWS returns the item with the failure)', async () => {
    const ctx = context();
    const key = randomUUID();
    await withIdempotency(ingestRequest(key, '{}'), ctx, accept);
    requests.reset();
    const replay = await withIdempotency(ingestRequest(key, '{}'), ctx, accept);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(requests.byOperation).toEqual({ PutItemCommand: 1, GetItemCommand: 1 });
  });

  it('CARD-4: a 5xx costs 2 DynamoDB requests (claim, conditional delete)', async () => {
    requests.reset();
    await withIdempotency(ingestRequest(randomUUID(), '{}'), context(), async () => jsonResponse(503, {}));
    expect(requests.byOperation).toEqual({ PutItemCommand: 1, DeleteItemCommand: 1 });
  });

  it('EDU-IDEM-16: the table key holds client, operation and key, so clients cannot collide', async () => {
    const ctx = context();
    const key = randomUUID();
    await withIdempotency(ingestRequest(key, '{}'), ctx, accept);
    const { GetItemCommand } = await import('@aws-sdk/client-dynamodb');
    const item = await dynamodb.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: `idempotency#publisher-a#POST%20%2Fevents#${key}` } },
      }),
    );
    expect(item.Item?.state?.S).toBe('completed');
    expect(Number(item.Item?.expiresAt?.N)).toBe(Math.floor(ctx.clock!() / 1000) + 7 * 24 * 3600);
  });

  it('review #1, EDU-IDEM-16: a client id of 3 KB gets its own bounded key: accepted, replayed, and never shared with a client id one character apart', async () => {
    const longClient = `urn:nld:oin:${'0'.repeat(3000)}`;
    const neighbour = `${longClient.slice(0, -1)}1`;
    const key = randomUUID();
    let processed = 0;
    const process = async () => {
      processed++;
      return jsonResponse(202, { accepted: processed });
    };
    const first = await withIdempotency(ingestRequest(key, '{}'), { ...context(), clientId: longClient }, process);
    expect(first.status).toBe(202);
    const replay = await withIdempotency(ingestRequest(key, '{}'), { ...context(), clientId: longClient }, process);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    const other = await withIdempotency(ingestRequest(key, '{}'), { ...context(), clientId: neighbour }, process);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(processed).toBe(2);
    // The stored key is within DynamoDB's partition-key limit (dynalite would refuse it otherwise).
    const stored = idempotencyKeyOf({ clientId: longClient, operation: 'POST /events', key });
    expect(stored).toMatch(/^idempotency#sha256=[A-Za-z0-9_-]{43}$/);
    const { GetItemCommand } = await import('@aws-sdk/client-dynamodb');
    expect(
      (await dynamodb.send(new GetItemCommand({ TableName: tableName, Key: { pk: { S: stored } } }))).Item?.state?.S,
    ).toBe('completed');
  });

  it('review #1: a key exactly at the 2,048-byte limit stays readable; one byte more is hashed; both are stored', async () => {
    const fixed = `idempotency#${encodeURIComponent('POST /events')}#00000000-0000-4000-8000-000000000000#`.length;
    const atLimit = {
      clientId: 'c'.repeat(2048 - fixed),
      operation: 'POST /events',
      key: '00000000-0000-4000-8000-000000000000',
    };
    expect(Buffer.byteLength(idempotencyKeyOf(atLimit))).toBe(2048);
    expect(idempotencyKeyOf(atLimit)).toBe(`idempotency#${atLimit.clientId}#POST%20%2Fevents#${atLimit.key}`);
    const past = { ...atLimit, clientId: `${atLimit.clientId}c` };
    expect(idempotencyKeyOf(past)).toMatch(/^idempotency#sha256=/);
    const store = new DynamoDbIdempotencyStore(dynamodb, tableName);
    const now = Date.now();
    for (const scope of [atLimit, past]) {
      const claim = await store.claim({
        scope,
        fingerprint: 'f',
        claimId: randomUUID(),
        now,
        lockExpiresAt: now + 60_000,
        expiresAt: Math.floor(now / 1000) + 3600,
      });
      expect(claim.claimed).toBe(true);
    }
  });

  it('EDU-IDEM-18: 20 concurrent requests with one key put exactly one event in SQS; the others get 409 or the replay', async () => {
    const ctx = context();
    const key = randomUUID();
    const send = async () => {
      const sent = await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ key }) }));
      return jsonResponse(202, { messageId: sent.MessageId });
    };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => withIdempotency(ingestRequest(key, '{"id":"1"}'), ctx, send)),
    );

    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    expect(attributes.Attributes?.ApproximateNumberOfMessages).toBe('1');
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    expect(received.Messages?.map((m) => m.Body)).toEqual([JSON.stringify({ key })]);

    const fresh = responses.filter((r) => r.status === 202 && r.headers['idempotent-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    for (const r of responses.filter((r) => r !== fresh[0])) {
      expect([409, 202]).toContain(r.status);
      if (r.status === 202) expect(r.body).toBe(fresh[0]!.body);
    }
  });
});
