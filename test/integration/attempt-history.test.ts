/**
 * Issue 15: the attempt history packed per subscription and batch (functions/aws/dynamodb-attempt-history.ts),
 * against dynalite: the items written, the write units they cost, every attempt listed once, newest
 * first, whatever the page size and wherever a page ends inside a pack, and items of one attempt
 * written before packing read as before.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PACK_BYTES } from '../../functions/aws/dynamodb-attempt-history.js';
import { ATTEMPT_SHARDS, attemptPartition } from '../../functions/aws/delivery-table-items.js';
import { DynamoDbDeliveryState } from '../../functions/aws/dynamodb-delivery-state.js';
import { InvalidPageCursorError, type AttemptRecord } from '../../functions/core/delivery/delivery-records.js';
import { localName } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';

let emulators: Emulators;
let client: DynamoDBClient;
let deliveries: DynamoDbDeliveryState;
const table = localName.table('deliveries');
const expiresAt = () => Math.floor(Date.now() / 1000) + 3600;
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  client = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  deliveries = new DynamoDbDeliveryState(client, table);
});
afterAll(async () => {
  client?.destroy();
  await emulators?.stop();
});

/** `count` attempts of one batch, a second apart from `second` on: as the dispatcher records them. */
function batch(subscriptionId: string, second: number, count: number): AttemptRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    subscriptionId,
    deliveryId: randomUUID(),
    attempt: 1,
    at: new Date(Date.UTC(2026, 10, 26, 12, 0, second + i)).toISOString(),
    outcome: 'delivered' as const,
    status: 204,
    latencyMs: 12,
    events: [
      {
        source: 'urn:nld:oin:00000001823288444000:systeem:lvs',
        id: randomUUID(),
        type: 'nl.edu.leerling.ingeschreven.v1',
      },
    ],
  }));
}

/** The subscription's attempt packs, in whichever of its shards (issue 35) each was written. */
async function itemsOf(subscriptionId: string) {
  const items = [];
  for (let shard = 0; shard < ATTEMPT_SHARDS; shard++) {
    const result = await client.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :a)',
        ExpressionAttributeValues: {
          ':pk': { S: attemptPartition(subscriptionId, shard) },
          ':a': { S: 'attempt#' },
        },
      }),
    );
    items.push(...(result.Items ?? []));
  }
  return items;
}

async function everyPage(
  subscriptionId: string,
  limit: number,
): Promise<{ pages: AttemptRecord[][]; cursors: string[] }> {
  const pages: AttemptRecord[][] = [];
  const cursors: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await deliveries.listAttempts(subscriptionId, { limit, ...(cursor === undefined ? {} : { cursor }) });
    pages.push([...page.items]);
    cursor = page.cursor;
    if (cursor) cursors.push(cursor);
    expect(pages.length).toBeLessThan(100);
  } while (cursor);
  return { pages, cursors };
}

describe('attempt history, packed per batch (dynalite)', () => {
  it('issue 15: a batch of ten attempts for one subscription is one item of at most 4 KB (4 write units where ten items cost 10); two subscriptions, two items', async () => {
    const a = randomUUID();
    const b = randomUUID();
    await deliveries.recordAttempts([...batch(a, 0, 10), ...batch(b, 0, 3)], expiresAt());
    const items = await itemsOf(a);
    expect(items).toHaveLength(1);
    const bytes = JSON.stringify(items[0]).length;
    expect(Math.ceil(bytes / 1024)).toBeLessThanOrEqual(4);
    expect(await itemsOf(b)).toHaveLength(1);
  });

  it('issue 15, EDU-18: every attempt is listed once, newest first, at every page size, across packs and inside them', async () => {
    const subscriptionId = randomUUID();
    const recorded = [
      ...batch(subscriptionId, 0, 10),
      ...batch(subscriptionId, 10, 10),
      ...batch(subscriptionId, 20, 5),
    ];
    await deliveries.recordAttempts(recorded.slice(0, 10), expiresAt());
    await deliveries.recordAttempts(recorded.slice(10, 20), expiresAt());
    await deliveries.recordAttempts(recorded.slice(20), expiresAt());
    expect(await itemsOf(subscriptionId)).toHaveLength(3);
    const newestFirst = [...recorded].reverse().map((record) => record.deliveryId);
    for (const limit of [1, 3, 7, 10, 11, 25, 100]) {
      const { pages } = await everyPage(subscriptionId, limit);
      expect(
        pages.flat().map((record) => record.deliveryId),
        `limit ${limit}`,
      ).toEqual(newestFirst);
      for (const page of pages.slice(0, -1)) expect(page, `limit ${limit}`).toHaveLength(limit);
    }
    const first = (await deliveries.listAttempts(subscriptionId, { limit: 1 })).items[0]!;
    expect(first).toEqual(recorded[24]);
  });

  it('issue 15: an attempt item written before packing (one attempt, `record`) is listed among the packs', async () => {
    const subscriptionId = randomUUID();
    const [old] = batch(subscriptionId, 30, 1);
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          pk: { S: `sub#${subscriptionId}` },
          sk: { S: `attempt#${old!.at}#${old!.deliveryId}#1` },
          record: { S: JSON.stringify(old) },
          expiresAt: { N: String(expiresAt()) },
        },
      }),
    );
    const packed = batch(subscriptionId, 0, 4);
    await deliveries.recordAttempts(packed, expiresAt());
    const { pages } = await everyPage(subscriptionId, 2);
    expect(pages.flat()).toEqual([old, ...[...packed].reverse()]);
  });

  it('issue 15: attempts past MAX_PACK_BYTES go to a second pack, none is lost', async () => {
    const subscriptionId = randomUUID();
    const large = batch(subscriptionId, 0, 40).map((record) => ({
      ...record,
      error: { code: 'server-error' as const, detail: 'd'.repeat(3000) },
    }));
    await deliveries.recordAttempts(large, expiresAt());
    const items = await itemsOf(subscriptionId);
    expect(items.length).toBeGreaterThan(1);
    for (const item of items) expect(item['records']!.S!.length).toBeLessThanOrEqual(MAX_PACK_BYTES + 1);
    expect((await everyPage(subscriptionId, 15)).pages.flat()).toHaveLength(40);
  });

  it('review #10, issue 15: a cursor inside a pack carries a whole skip from 1; a forged skip, or a skip on another list, is refused', async () => {
    const subscriptionId = randomUUID();
    await deliveries.recordAttempts(batch(subscriptionId, 0, 5), expiresAt());
    const genuine = (await deliveries.listAttempts(subscriptionId, { limit: 2 })).cursor!;
    const { pk, sk, skip } = JSON.parse(Buffer.from(genuine, 'base64url').toString('utf8')) as {
      pk: string;
      sk: string;
      skip: number;
    };
    expect(skip).toBe(2);
    for (const forged of [0, -1, 1.5, '2', 70_000, null].map((value) => cursorOf({ pk, sk, skip: value }))) {
      await expect(deliveries.listAttempts(subscriptionId, { limit: 2, cursor: forged })).rejects.toThrow(
        InvalidPageCursorError,
      );
    }
    await expect(
      deliveries.listDeadLetters(subscriptionId, { limit: 1, cursor: cursorOf({ pk, sk: 'dead#1#x', skip: 1 }) }),
    ).rejects.toThrow(InvalidPageCursorError);
    expect((await deliveries.listAttempts(subscriptionId, { limit: 2, cursor: genuine })).items).toHaveLength(2);
  });
});
