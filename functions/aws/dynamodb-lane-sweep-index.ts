/**
 * The lane sweeper's index (core/delivery-message/lane-sweep.ts, issue 33) on the `deliveries`
 * table's sparse global index `laneSweep` (functions/config/resource-specs.ts): partition
 * `sweepShard`, sort `sweepSince` (epoch ms), carrying the lane's `key`.
 *
 * Only two kinds of item are in it, both written anyway, so an ordered event costs no request more
 * (docs/ORDERING.md, "Sweeper", for what the index's own writes cost):
 *
 *   a staged event (`p#…`)   `staged#<shard>`, its acceptance time; out of the index when it is
 *                            appended (its item is deleted) or when the sweeper takes it out
 *   a lane's state (`lane`)  `marked#<shard>`, when its head was last released (the numbering and
 *                            the advance set it) or when the sweeper wants to look again
 *
 * The shard (the lane's partition key hashed into SHARDS) spreads the index's writes: one index
 * partition key takes about 1,000 writes per second.
 */
import { QueryCommand, UpdateItemCommand, GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import type { LaneSweepIndex, SweepEntry, SweptLaneState } from '../core/delivery-message/lane-sweep.js';
import type { LaneAddress } from '../core/ordering/ordered-lanes.js';
import { formatSequence } from '../core/ordering/ordering-settings.js';
import { num, PK, SK, type Item } from './delivery-table-items.js';

export const LANE_SWEEP_INDEX = 'laneSweep';
/** Index partitions written side by side; the sweeper reads each (two queries per shard and run). */
export const SWEEP_SHARDS = 16;
const STATE = 'lane';
/** Staged items taken out of the index per lane and run. */
const UNMARK_PAGE = 100;

/** The partition of a lane's items: any key fits, and lanes spread over partitions. */
export function lanePartition({ subscriptionId, key }: LaneAddress): string {
  return `lane#${subscriptionId}#${createHash('sha256').update(key).digest('base64url')}`;
}

/**
 * The index attributes of a lane's item: `staged` on a staged event, `marked` on the lane's state.
 * Spread into the item's put, or its update's values (`:sweepShard`, `:sweepSince`).
 */
export function sweepShard(partition: string, kind: 'staged' | 'marked'): string {
  const shard = createHash('sha256').update(partition).digest().readUInt16BE(0) % SWEEP_SHARDS;
  return `${kind}#${String(shard).padStart(2, '0')}`;
}

export class DynamoDbLaneSweepIndex implements LaneSweepIndex {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  staged(before: number, limit: number): Promise<SweepEntry[]> {
    return this.query('staged', before, limit);
  }

  marked(before: number, limit: number): Promise<SweepEntry[]> {
    return this.query('marked', before, limit);
  }

  async state(lane: LaneAddress): Promise<SweptLaneState | undefined> {
    const item = await this.get(lane, STATE);
    if (item === undefined) return undefined;
    const holder = item['holder']?.S !== undefined;
    const settler = item['settler']?.S !== undefined;
    return {
      next: Number(item['next']?.N ?? 1),
      last: Number(item['last']?.N ?? 0),
      parked: item['parked']?.BOOL === true,
      holdUntil: holder ? Number(item['holdUntil']?.N ?? 0) : undefined,
      settleUntil: settler ? Number(item['settleUntil']?.N ?? 0) : undefined,
    };
  }

  async stored(lane: LaneAddress, sequence: number): Promise<string | undefined> {
    return (await this.get(lane, `e#${formatSequence(sequence)}`))?.['body']?.S;
  }

  async unmarkStaged(lane: LaneAddress, before: number): Promise<void> {
    const partition = lanePartition(lane);
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :p)',
        FilterExpression: '#since <= :before',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#since': 'sweepSince' },
        ExpressionAttributeValues: { ':pk': { S: partition }, ':p': { S: 'p#' }, ':before': num(before) },
        ProjectionExpression: '#sk',
        Limit: UNMARK_PAGE,
      }),
    );
    for (const item of result.Items ?? []) {
      await this.ignoreConditionFailed(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [PK]: { S: partition }, [SK]: item[SK]! },
          UpdateExpression: 'REMOVE #shard, #since',
          // Not when it was appended (deleted) meanwhile: an update would make it again.
          ConditionExpression: 'attribute_exists(#sk)',
          ExpressionAttributeNames: { '#shard': 'sweepShard', '#since': 'sweepSince', '#sk': SK },
        }),
      );
    }
  }

  async remark(lane: LaneAddress, seen: number | undefined, at: number | undefined): Promise<void> {
    const partition = lanePartition(lane);
    const names: Record<string, string> = { '#shard': 'sweepShard', '#since': 'sweepSince' };
    const values: Item = seen === undefined ? {} : { ':seen': num(seen) };
    const condition = seen === undefined ? undefined : '#since = :seen';
    await this.ignoreConditionFailed(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: { [PK]: { S: partition }, [SK]: { S: STATE } },
        ...(at === undefined
          ? { UpdateExpression: 'REMOVE #shard, #since' }
          : {
              // The key too: the state of a lane whose first settle message was lost does not exist yet.
              UpdateExpression: 'SET #shard = :shard, #since = :at, #key = :key',
              ExpressionAttributeValues: {
                ...values,
                ':shard': { S: sweepShard(partition, 'marked') },
                ':at': num(at),
                ':key': { S: lane.key },
              },
            }),
        ...(at === undefined && seen !== undefined ? { ExpressionAttributeValues: values } : {}),
        ...(condition ? { ConditionExpression: condition } : {}),
        ExpressionAttributeNames: at === undefined ? names : { ...names, '#key': 'key' },
      }),
    );
  }

  /** Every shard of `kind` up to `before`, oldest first in each, at most `limit` entries in all. */
  private async query(kind: 'staged' | 'marked', before: number, limit: number): Promise<SweepEntry[]> {
    const perShard = Math.max(1, Math.ceil(limit / SWEEP_SHARDS));
    const shards = Array.from({ length: SWEEP_SHARDS }, (_, n) => `${kind}#${String(n).padStart(2, '0')}`);
    const pages = await Promise.all(
      shards.map((shard) =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: LANE_SWEEP_INDEX,
            KeyConditionExpression: '#shard = :shard AND #since <= :before',
            ExpressionAttributeNames: { '#shard': 'sweepShard', '#since': 'sweepSince' },
            ExpressionAttributeValues: { ':shard': { S: shard }, ':before': num(before) },
            Limit: perShard,
          }),
        ),
      ),
    );
    return pages
      .flatMap((page) => page.Items ?? [])
      .flatMap((item) => {
        const lane = laneOf(item);
        return lane === undefined ? [] : [{ lane, since: Number(item['sweepSince']!.N) }];
      });
  }

  private async get(lane: LaneAddress, sortKey: string): Promise<Item | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { [PK]: { S: lanePartition(lane) }, [SK]: { S: sortKey } },
        ConsistentRead: true,
      }),
    );
    return result.Item;
  }

  private async ignoreConditionFailed(command: UpdateItemCommand): Promise<void> {
    try {
      await this.client.send(command);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/** `lane#<subscription id>#<hash>`: the hash is base64url, without `#`, so the subscription is what lies between. */
function laneOf(item: Item): LaneAddress | undefined {
  const partition = item[PK]?.S;
  const key = item['key']?.S;
  if (partition === undefined || key === undefined || !partition.startsWith('lane#')) return undefined;
  return { subscriptionId: partition.slice('lane#'.length, partition.lastIndexOf('#')), key };
}
