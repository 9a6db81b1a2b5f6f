/**
 * What an accepted publish costs in AWS requests (issue 15), and that the cheaper design keeps the
 * guarantees when a Lambda deployment runs several containers: each "container" here is its own
 * DynamoDbIdempotencyStore and DynamoDbRateWindow (their memory is per container), all on one
 * dynalite table and one SQS queue, with a clock the test moves.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbIdempotencyStore } from '../../functions/aws/dynamodb-idempotency-store.js';
import { DynamoDbRateWindow } from '../../functions/aws/dynamodb-rate-window.js';
import { SqsMessageQueue } from '../../functions/aws/sqs-message-queue.js';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Principal } from '../../functions/core/auth/access-tokens.js';
import { parsePublishGrants } from '../../functions/core/auth/publish-grants.js';
import { InMemoryClaimCheckStore, InMemoryPayloadLedger } from '../support/memory/claim-check-memory-adapters.js';
import type { HttpRequest } from '../../functions/core/http/messages.js';
import { acceptEvents, type IngestDependencies, type IngestSettings } from '../../functions/core/ingest/index.js';
import type { InboundQueue } from '../../functions/core/ingest/ports.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { countRequests, type RequestCounter } from '../support/request-counter.js';

const PUBLISHER: Principal = { clientId: 'partner-a', scopes: new Set(['events:publish']) };
const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';
const LOCK_SECONDS = 60;
// 10 s into a clock minute, so no test straddles a rate window.
const START = Date.UTC(2026, 2, 1, 12, 0, 10);

let emulators: Emulators;
let dynamodb: DynamoDBClient;
let sqs: SQSClient;
let dynamodbRequests: RequestCounter;
let sqsRequests: RequestCounter;
let tableName: string;
let queueUrl: string;
let now: number;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  sqs = new SQSClient(emulators.clientSettings('sqs'));
  dynamodbRequests = countRequests(dynamodb);
  sqsRequests = countRequests(sqs);
  tableName = emulators.resourceEnvironment[resourceEnv.table('idempotency')]!;
  queueUrl = emulators.resourceEnvironment[resourceEnv.queueUrl('inbound')]!;
});

afterAll(async () => {
  dynamodb?.destroy();
  sqs?.destroy();
  await emulators?.stop();
});

beforeEach(async () => {
  now = START;
  await queuedIds(); // what an earlier test left, out of sight
  dynamodbRequests.reset();
  sqsRequests.reset();
});

const settings = (publishRatePerMinute: number): IngestSettings => ({
  publishRatePerMinute,
  maxEventBytes: 64 * 1024,
  inlineEventBytes: 64 * 1024,
  maxQueuedEventBytes: 248 * 1024,
  publishGrants: parsePublishGrants(JSON.stringify({ 'partner-a': ['urn:nld:oin:00000001823288444000:'] })),
  idempotency: { ttlSeconds: 3600, lockSeconds: LOCK_SECONDS },
});

/** One container: its own idempotency store and rate window (their memory), the shared table and queue. */
function container(options: { rate?: number; inbound?: InboundQueue } = {}): IngestDependencies {
  return {
    idempotency: new DynamoDbIdempotencyStore(dynamodb, tableName),
    rateWindow: new DynamoDbRateWindow(dynamodb, tableName, { clock: () => now }),
    inbound: options.inbound ?? new SqsMessageQueue(sqs, queueUrl),
    claimCheck: {
      store: new InMemoryClaimCheckStore(),
      ledger: new InMemoryPayloadLedger(),
      publicBaseUrl: 'https://koerier.example',
      retentionSeconds: 86400,
    },
    settings: settings(options.rate ?? 6000),
    log: { info: () => {}, warn: () => {}, error: () => {} },
    clock: () => now,
  };
}

const event = () => ({ specversion: '1.0', id: randomUUID(), source: SOURCE, type: 'nl.edu.leerling.ingeschreven' });

function publishRequest(body: unknown, key = randomUUID()): HttpRequest {
  const batch = Array.isArray(body);
  return {
    method: 'POST',
    path: '/events',
    headers: {
      'content-type': batch ? 'application/cloudevents-batch+json' : 'application/cloudevents+json',
      'idempotency-key': key,
    },
    query: {},
    routeKey: 'POST /events',
    pathParameters: {},
    body: Buffer.from(JSON.stringify(body)),
  };
}

async function queuedIds(): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
      }),
    );
    if (Messages.length === 0) return ids.sort();
    for (const message of Messages) ids.push((JSON.parse(message.Body!) as { id: string }).id);
  }
}

describe('issue 15: AWS requests per accepted publish', () => {
  it('EDU-19, EDU-IDEM-3: a warm container accepts single events for 1 DynamoDB and 1 SQS request each: the claim holds the 202, the queue write completes it', async () => {
    const a = container();
    const events = Array.from({ length: 40 }, event);
    for (const e of events) expect((await acceptEvents(publishRequest(e), PUBLISHER, a)).status).toBe(202);
    // The rate window's leases (1, 2, 4, … slots) are the only DynamoDB requests beyond the claims.
    expect(dynamodbRequests.byOperation).toEqual({ PutItemCommand: 40, UpdateItemCommand: 6 });
    expect(sqsRequests.byOperation).toEqual({ SendMessageCommand: 40 });
    expect(await queuedIds()).toEqual(events.map((e) => e.id).sort());
  });

  it('EDU-16: a batch of 10 costs one claim and one SendMessageBatch: 0.2 requests per event, plus the leases', async () => {
    const a = container();
    for (let i = 0; i < 20; i++)
      expect((await acceptEvents(publishRequest(Array.from({ length: 10 }, event)), PUBLISHER, a)).status).toBe(202);
    expect(dynamodbRequests.byOperation['PutItemCommand']).toBe(20);
    expect(dynamodbRequests.byOperation['UpdateItemCommand']).toBeLessThanOrEqual(5);
    expect(sqsRequests.byOperation).toEqual({ SendMessageBatchCommand: 20 });
  });
});

describe('issue 15: repeats across containers keep EDU-IDEM-14 and EDU-19', () => {
  it('EDU-IDEM-14: a repeat in the container that accepted gets the byte-identical replay for one DynamoDB request and no second event', async () => {
    const a = container();
    const request = publishRequest(event());
    const first = await acceptEvents(request, PUBLISHER, a);
    dynamodbRequests.reset();
    sqsRequests.reset();
    const repeat = await acceptEvents(request, PUBLISHER, a);
    expect(repeat).toEqual({ ...first, headers: { ...first.headers, 'idempotent-replayed': 'true' } });
    // dynalite ignores ReturnValuesOnConditionCheckFailure, hence the GetItem; on AWS the failed PutItem is all.
    expect(dynamodbRequests.byOperation).toEqual({ PutItemCommand: 1, GetItemCommand: 1 });
    expect(sqsRequests.total()).toBe(0);
    expect(await queuedIds()).toHaveLength(1);
  });

  it('EDU-19: a repeat in the same container while the queue write is still under way gets 409, never the 202 before the events are stored', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const queue = new SqsMessageQueue(sqs, queueUrl);
    const a = container({ inbound: { send: async (messages) => (await held, queue.send(messages)) } });
    const e = event();
    const request = publishRequest(e);
    const first = acceptEvents(request, PUBLISHER, a);
    for (let i = 0; i < 100 && dynamodbRequests.byOperation['PutItemCommand'] === undefined; i++)
      await new Promise<void>((resolve) => setTimeout(resolve, 10));
    expect((await acceptEvents(request, PUBLISHER, a)).status).toBe(409);
    release();
    expect((await first).status).toBe(202);
    expect((await acceptEvents(request, PUBLISHER, a)).headers['idempotent-replayed']).toBe('true');
    expect(await queuedIds()).toEqual([e.id]);
  });

  it('EDU-IDEM-14, EDU-IDEM-15: another container answers 409 until the lock ends, then stores the events again before its replay, and completes the key for everyone', async () => {
    const [a, b, c] = [container(), container(), container()];
    const e = event();
    const request = publishRequest(e);
    const first = await acceptEvents(request, PUBLISHER, a);
    expect(first.status).toBe(202);

    now += 1000;
    const early = await acceptEvents(request, PUBLISHER, b);
    expect(early.status).toBe(409);
    expect(Number(early.headers['retry-after'])).toBe(LOCK_SECONDS - 1);

    now += LOCK_SECONDS * 1000;
    const late = await acceptEvents(request, PUBLISHER, b);
    expect(late).toEqual({ ...first, headers: { ...first.headers, 'idempotent-replayed': 'true' } });
    // The copy is the router's to drop by source + id (EDU-IDEM-15).
    expect(await queuedIds()).toEqual([e.id, e.id]);

    dynamodbRequests.reset();
    sqsRequests.reset();
    const third = await acceptEvents(request, PUBLISHER, c);
    expect(third).toEqual(late);
    expect(sqsRequests.total()).toBe(0);
    expect(await queuedIds()).toEqual([]);
  });

  it('EDU-19: an attempt that dies after its claim and before the queue write never leads to a 202 for events that are not stored', async () => {
    const e = event();
    const request = publishRequest(e);
    // The first container's queue write never finishes (the container died or froze).
    const dying = container({ inbound: { send: () => new Promise(() => {}) } });
    void acceptEvents(request, PUBLISHER, dying);
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (let i = 0; i < 50 && dynamodbRequests.byOperation['PutItemCommand'] === undefined; i++)
      await new Promise<void>((resolve) => setTimeout(resolve, 10));

    const b = container();
    now += 1000;
    expect((await acceptEvents(request, PUBLISHER, b)).status).toBe(409);
    expect(await queuedIds()).toEqual([]);
    now += LOCK_SECONDS * 1000;
    const retry = await acceptEvents(request, PUBLISHER, b);
    expect(retry.status).toBe(202);
    expect(await queuedIds()).toEqual([e.id]);
  });

  it('EDU-IDEM-8: a different request with a key held by a pending claim gets 422 in every container, and nothing is stored for it', async () => {
    const [a, b] = [container(), container()];
    const key = randomUUID();
    expect((await acceptEvents(publishRequest(event(), key), PUBLISHER, a)).status).toBe(202);
    await queuedIds();
    for (const c of [a, b]) {
      const reused = await acceptEvents(publishRequest(event(), key), PUBLISHER, c);
      expect(reused.status).toBe(422);
    }
    now += LOCK_SECONDS * 1000 + 1;
    expect((await acceptEvents(publishRequest(event(), key), PUBLISHER, b)).status).toBe(422);
    expect(await queuedIds()).toEqual([]);
  });
});

describe('issue 15: the publish window is leased, never exceeded', () => {
  it('WH-7, EDU-20: three containers sharing a limit of 100 admit exactly 100 between them, for far fewer than 100 writes', async () => {
    const windows = [0, 1, 2].map(() => new DynamoDbRateWindow(dynamodb, tableName, { clock: () => now }));
    const client = `client-${randomUUID()}`;
    let allowed = 0;
    for (let round = 0; round < 60; round++) {
      const decisions = await Promise.all(windows.map((w) => w.take(client, 100)));
      allowed += decisions.filter((d) => d.allowed).length;
    }
    expect(allowed).toBe(100);
    expect(dynamodbRequests.byOperation['UpdateItemCommand']).toBeLessThan(50);
  });

  it('EDU-20, issue 15: a steady publisher starts each minute with a lease of what it used the minute before: 500 requests a minute cost 1 write after the first', async () => {
    const window = new DynamoDbRateWindow(dynamodb, tableName, { clock: () => now });
    const client = `client-${randomUUID()}`;
    for (let i = 0; i < 500; i++) expect((await window.take(client, 6000)).allowed).toBe(true);
    // 1 + 2 + … + 256 = 511 slots in 9 writes.
    expect(dynamodbRequests.byOperation).toEqual({ UpdateItemCommand: 9 });
    dynamodbRequests.reset();
    now += 60_000;
    for (let i = 0; i < 500; i++) expect((await window.take(client, 6000)).allowed).toBe(true);
    expect(dynamodbRequests.byOperation).toEqual({ UpdateItemCommand: 1 });
  });

  it('EDU-20, issue 15: one publisher at 20,000 requests a minute in one container costs its window item tens of writes, not 20,000', async () => {
    const window = new DynamoDbRateWindow(dynamodb, tableName, { clock: () => now });
    const client = `client-${randomUUID()}`;
    for (let i = 0; i < 20_000; i++) expect((await window.take(client, 1_000_000)).allowed).toBe(true);
    // A limit this high is spread over 17 window items (issue 35, no hot keys), each holding 58,823 or
    // 58,824; leases double up to a tenth of that share (5,882): 1 + 2 + … + 4,096 = 8,191 after 13
    // writes, then 5,882 each, ≥ 20,000 after 16.
    expect(dynamodbRequests.byOperation).toEqual({ UpdateItemCommand: 16 });
  });
});
