/**
 * The attempt history in the `deliveries` table, packed: one item per subscription per recorded
 * batch, holding that batch's attempts newest first, where there used to be one item per attempt.
 * DynamoDB bills a write unit per started kilobyte of an item: the ten attempts of a batch (about
 * 350 bytes each with their event references) cost 4 write units packed and 10 apart, and the
 * attempt record was the largest DynamoDB line of a push delivery (issue 15, docs/COST.md).
 *
 *   sk `attempt#<at>#<deliveryId>#<n>` of the pack's newest attempt; `records`: the pack's
 *   attempts as JSON, newest first, without the subscription id (the partition says it)
 *
 * A pack of one keeps the key an attempt had on its own, and an item written before packing
 * (`record`: one attempt) is read as a pack of one. Packs are ordered by their newest attempt, and
 * attempts within a pack newest first: two batches of one subscription recorded at the same time
 * list one after the other, not interleaved.
 *
 * A page may end inside a pack: its cursor then names the pack and how many of its attempts were
 * listed (`skip`), and the next page starts at that pack again (a key range up to it, inclusive).
 *
 * Packs are spread over ATTEMPT_SHARDS partitions of the subscription (issue 35: one busy
 * subscriber would pass one partition's write units), so a page reads every shard up to the
 * cursor's pack and merges them newest first; sort keys are unique across the shards, so the
 * cursor (on the subscription's own partition) still names one place in the history.
 */
import { type DynamoDBClient, QueryCommand, type WriteRequest } from '@aws-sdk/client-dynamodb';
import type { AttemptRecord, Page } from '../core/delivery/delivery-records.js';
import {
  ATTEMPT,
  ATTEMPT_SHARDS,
  attemptPartition,
  attemptShardOf,
  decodePageCursor,
  encodeCursor,
  num,
  partition,
  PK,
  SK,
  type Item,
} from './delivery-table-items.js';

/** Far below DynamoDB's 400 KB item: a pack never nears it, and a page of packs stays small. */
export const MAX_PACK_BYTES = 64 * 1024;

type PackedRecord = Omit<AttemptRecord, 'subscriptionId'>;

/** The key an attempt had on its own; packs take their newest attempt's. */
function attemptSortKey(record: Pick<AttemptRecord, 'at' | 'deliveryId' | 'attempt'>): string {
  return `${ATTEMPT}${record.at}#${record.deliveryId}#${record.attempt}`;
}

/** One write per subscription and pack (more than one only past MAX_PACK_BYTES). */
export function attemptPackWrites(records: readonly AttemptRecord[], expiresAt: number): WriteRequest[] {
  const bySubscription = new Map<string, AttemptRecord[]>();
  for (const record of records) {
    const own = bySubscription.get(record.subscriptionId);
    if (own) own.push(record);
    else bySubscription.set(record.subscriptionId, [record]);
  }
  const writes: WriteRequest[] = [];
  for (const [subscriptionId, own] of bySubscription) {
    const newestFirst = own
      .map((record) => ({ record, sortKey: attemptSortKey(record) }))
      .sort((a, b) => (a.sortKey < b.sortKey ? 1 : -1));
    let pack: { sortKey: string; json: string[]; bytes: number } | undefined;
    const flush = () => {
      if (pack)
        writes.push({
          PutRequest: {
            Item: {
              [PK]: { S: attemptPartition(subscriptionId, attemptShardOf(pack.sortKey)) },
              [SK]: { S: pack.sortKey },
              records: { S: `[${pack.json.join(',')}]` },
              expiresAt: num(expiresAt),
            },
          },
        });
      pack = undefined;
    };
    for (const { record, sortKey } of newestFirst) {
      const { subscriptionId: _partition, ...packed } = record;
      const json = JSON.stringify(packed);
      // UTF-8 bytes, as DynamoDB counts them: a receiver's answer excerpt may be far from ASCII.
      const bytes = Buffer.byteLength(json);
      if (pack && pack.bytes + bytes > MAX_PACK_BYTES) flush();
      pack ??= { sortKey, json: [], bytes: 0 };
      pack.json.push(json);
      pack.bytes += bytes + 1;
    }
    flush();
  }
  return writes;
}

/** A page of a subscription's attempts, newest first; `limit` counts attempts, not packs. */
export async function listAttemptPage(
  client: DynamoDBClient,
  tableName: string,
  subscriptionId: string,
  page: { limit: number; cursor?: string | undefined },
  expired: (item: Item) => boolean,
): Promise<Page<AttemptRecord>> {
  const from = page.cursor === undefined ? undefined : decodePageCursor(page.cursor, subscriptionId, ATTEMPT);
  const resumesInPack = from?.skip !== undefined;
  // Each shard up to the cursor's pack, inclusive (it is dropped below unless the page resumes in it);
  // one pack more than the page can take, so no shard runs out before the page is full.
  const shards = await Promise.all(
    Array.from({ length: ATTEMPT_SHARDS }, (_, shard) =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: from
            ? '#pk = :pk AND #sk BETWEEN :prefix AND :last'
            : '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: {
            ':pk': { S: attemptPartition(subscriptionId, shard) },
            ':prefix': { S: ATTEMPT },
            ...(from ? { ':last': { S: from.sortKey } } : {}),
          },
          ScanIndexForward: false,
          Limit: page.limit + 2,
        }),
      ),
    ),
  );
  const truncated = shards.some((result) => result.LastEvaluatedKey !== undefined);
  const packs = shards
    .flatMap((result) => result.Items ?? [])
    .filter((item) => resumesInPack || item[SK]?.S !== from?.sortKey)
    .sort((a, b) => ((a[SK]?.S ?? '') < (b[SK]?.S ?? '') ? 1 : -1));
  // The cursor names the pack on the subscription's own partition, whichever shard holds it.
  const cursorAt = (item: Item, skip?: number) =>
    encodeCursor({ [PK]: { S: partition(subscriptionId) }, [SK]: item[SK]! }, skip);
  const items: AttemptRecord[] = [];
  for (const [index, item] of packs.entries()) {
    if (expired(item)) continue;
    const sortKey = item[SK]?.S ?? '';
    const all = recordsOf(item, subscriptionId);
    const skip = resumesInPack && sortKey === from.sortKey ? from.skip! : 0;
    const room = page.limit - items.length;
    const taken = all.slice(skip, skip + room);
    items.push(...taken);
    if (skip + taken.length < all.length) return { items, cursor: cursorAt(item, skip + taken.length) };
    if (items.length === page.limit) {
      const more = index < packs.length - 1 || truncated;
      return { items, cursor: more ? cursorAt(item) : undefined };
    }
  }
  // Every shard read to its end (an expired pack may have been skipped): nothing is left.
  return { items, cursor: truncated && packs.length > 0 ? cursorAt(packs.at(-1)!) : undefined };
}

/** The attempts a pack holds (or the one an item written before packing holds), with their subscription id. */
export function recordsOf(item: Item, subscriptionId: string): AttemptRecord[] {
  const single = item['record']?.S;
  if (single !== undefined) return [JSON.parse(single) as AttemptRecord];
  return (JSON.parse(item['records']?.S ?? '[]') as PackedRecord[]).map((record) => ({ subscriptionId, ...record }));
}
