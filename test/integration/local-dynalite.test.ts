/**
 * review #23: the laptop's DynamoDB (dynalite) no longer grows without bound. Queries and Scans
 * close their LevelDB iterators (dynalite 4 left every one open), and expired items of the tables
 * with a TTL attribute are deleted, as DynamoDB's TTL does.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLevelIterators } from '../../local/dynalite-shims.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { localName } from '../../functions/config/resources.js';
import { eventually } from '../support/waiting.js';

let stateDir: string;
let emulators: Emulators;
let dynamodb: DynamoDBClient;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'koerier-dynalite-'));
  // LevelDB on disk, as `npm start` runs it; the sweeper ticks fast so the test need not wait.
  emulators = await startEmulators({ stateDir, ttlSweep: { tickMs: 50, passPauseMs: 100, pageSize: 2 } });
  dynamodb = new DynamoDBClient({
    region: emulators.region,
    endpoint: emulators.endpoints.dynamodb,
    credentials: {
      accessKeyId: emulators.awsEnvironment.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: emulators.awsEnvironment.AWS_SECRET_ACCESS_KEY ?? '',
    },
  });
});
afterAll(async () => {
  dynamodb?.destroy();
  await emulators?.stop();
  await rm(stateDir, { recursive: true, force: true });
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Closing is asynchronous: the last streams may still be finishing their destroy. */
const iteratorsClosed = (open: number) =>
  eventually(
    () => `open LevelDB iterators down to ${open} (${openLevelIterators()} open)`,
    () => openLevelIterators() === open,
    { timeoutMs: 2000, intervalMs: 10 },
  );

describe('review #23: dynalite on the laptop stays bounded', () => {
  it('review #23: 200 Queries (table and index, some cut short by Limit) and 200 Scans leave no LevelDB iterator open', async () => {
    const routes = localName.table('routes');
    const subscriptions = localName.table('subscriptions');
    for (let i = 0; i < 20; i++) {
      await dynamodb.send(
        new PutItemCommand({ TableName: routes, Item: { routeKey: { S: 'type:a' }, subscriptionId: { S: `s${i}` } } }),
      );
      await dynamodb.send(
        new PutItemCommand({
          TableName: subscriptions,
          Item: { id: { S: `s${i}` }, owner: { S: 'o' }, createdAt: { S: String(i) } },
        }),
      );
    }
    // Stop the sweeper's own Scans from being counted mid-flight.
    await emulators.ttlSweeper.stop();
    // None of our own before the Queries and Scans: the sweeper's last Scan has closed its iterator.
    await iteratorsClosed(0);
    for (let i = 0; i < 50; i++) {
      const all = await dynamodb.send(
        new QueryCommand({
          TableName: routes,
          KeyConditionExpression: 'routeKey = :k',
          ExpressionAttributeValues: { ':k': { S: 'type:a' } },
        }),
      );
      expect(all.Items).toHaveLength(20);
      await dynamodb.send(
        new QueryCommand({
          TableName: routes,
          KeyConditionExpression: 'routeKey = :k',
          ExpressionAttributeValues: { ':k': { S: 'type:a' } },
          Limit: 3,
        }),
      );
      await dynamodb.send(
        new QueryCommand({
          TableName: routes,
          KeyConditionExpression: 'routeKey = :k',
          ExpressionAttributeValues: { ':k': { S: 'type:none' } },
        }),
      );
      await dynamodb.send(
        new QueryCommand({
          TableName: subscriptions,
          IndexName: 'byOwner',
          KeyConditionExpression: '#o = :o',
          ExpressionAttributeNames: { '#o': 'owner' },
          ExpressionAttributeValues: { ':o': { S: 'o' } },
          Limit: 5,
        }),
      );
    }
    for (let i = 0; i < 100; i++) {
      await dynamodb.send(new ScanCommand({ TableName: routes }));
      await dynamodb.send(new ScanCommand({ TableName: subscriptions, Limit: 2 }));
    }
    await iteratorsClosed(0);
  });

  it('review #23: the TTL sweeper deletes items past their expiresAt in the TTL tables, and keeps the rest', async () => {
    const idempotency = localName.table('idempotency');
    const deliveries = localName.table('deliveries');
    const put = (table: string, item: Record<string, AttributeValue>) =>
      dynamodb.send(new PutItemCommand({ TableName: table, Item: item }));
    const exists = async (table: string, key: Record<string, AttributeValue>) =>
      (await dynamodb.send(new GetItemCommand({ TableName: table, Key: key }))).Item !== undefined;

    const expired = Array.from({ length: 7 }, (_, i) => ({
      pk: { S: `expired-${i}` },
      expiresAt: { N: String(nowSeconds() - 10 - i) },
    }));
    for (const item of expired) await put(idempotency, item);
    await put(idempotency, { pk: { S: 'future' }, expiresAt: { N: String(nowSeconds() + 3600) } });
    await put(idempotency, { pk: { S: 'no-ttl' } });
    // DynamoDB ignores a TTL attribute that is not a number.
    await put(idempotency, { pk: { S: 'string-ttl' }, expiresAt: { S: '1' } });
    await put(deliveries, { pk: { S: 'history#x' }, sk: { S: 'old' }, expiresAt: { N: String(nowSeconds() - 1) } });
    await put(deliveries, { pk: { S: 'history#x' }, sk: { S: 'new' }, expiresAt: { N: String(nowSeconds() + 3600) } });

    // A full pass on demand…
    expect(await emulators.ttlSweeper.sweepAll()).toBe(8);
    for (const item of expired) expect(await exists(idempotency, { pk: item.pk })).toBe(false);
    expect(await exists(deliveries, { pk: { S: 'history#x' }, sk: { S: 'old' } })).toBe(false);
    for (const pk of ['future', 'no-ttl', 'string-ttl'])
      expect(await exists(idempotency, { pk: { S: pk } })).toBe(true);
    expect(await exists(deliveries, { pk: { S: 'history#x' }, sk: { S: 'new' } })).toBe(true);
  });

  it('review #23: …and the running sweeper finds items that expire later on its own', async () => {
    const second = await startEmulators({ ttlSweep: { tickMs: 20, passPauseMs: 50, pageSize: 3 } });
    const client = new DynamoDBClient({
      region: second.region,
      endpoint: second.endpoints.dynamodb,
      credentials: {
        accessKeyId: second.awsEnvironment.AWS_ACCESS_KEY_ID ?? '',
        secretAccessKey: second.awsEnvironment.AWS_SECRET_ACCESS_KEY ?? '',
      },
    });
    try {
      const table = localName.table('idempotency');
      for (let i = 0; i < 10; i++)
        await client.send(
          new PutItemCommand({
            TableName: table,
            Item: { pk: { S: `soon-${i}` }, expiresAt: { N: String(nowSeconds() - 1) } },
          }),
        );
      await eventually(
        () => `the sweeper to delete 10 items (it deleted ${second.ttlSweeper.deleted[table] ?? 0})`,
        () => (second.ttlSweeper.deleted[table] ?? 0) >= 10,
        { intervalMs: 50 },
      );
      expect((await client.send(new ScanCommand({ TableName: table }))).Count).toBe(0);
    } finally {
      client.destroy();
      await second.stop();
    }
  });
});
