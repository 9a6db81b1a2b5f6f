/**
 * What both halves of the ordered lanes share (./dynamodb-lane-settling.ts, ./dynamodb-ordered-lanes.ts):
 * the lane's items in the `deliveries` table, read consistently, and its state updated on condition.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { LaneAddress, StagedEvent } from '../core/ordering/ordered-lanes.js';
import { formatSequence } from '../core/ordering/ordering-settings.js';
import { num, PK, SK, type Item } from './delivery-table-items.js';
import { lanePartition, sweepShard } from './dynamodb-lane-sweep-index.js';

export const STATE = 'lane';

export class DynamoDbLaneTable {
  constructor(
    protected readonly client: DynamoDBClient,
    protected readonly tableName: string,
    protected readonly now: () => number = Date.now,
  ) {}

  protected key(lane: LaneAddress, sortKey: string): Item {
    return { [PK]: { S: lanePartition(lane) }, [SK]: { S: sortKey } };
  }

  protected readonly markNames = { '#shard': 'sweepShard', '#since': 'sweepSince' };

  /** The sweeper's mark on the lane's state: its head released now. */
  protected mark(lane: LaneAddress): Item {
    return { ':shard': { S: sweepShard(lanePartition(lane), 'marked') }, ':since': num(this.now()) };
  }

  protected async get(lane: LaneAddress, sortKey: string): Promise<Item | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: this.key(lane, sortKey), ConsistentRead: true }),
    );
    return result.Item;
  }

  protected state(lane: LaneAddress): Promise<Item | undefined> {
    return this.get(lane, STATE);
  }

  /** The state after a conditional update; undefined when its condition did not hold. */
  protected async update(
    lane: LaneAddress,
    input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName' | 'Key'>,
  ): Promise<Item | undefined> {
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(lane, STATE),
          ReturnValues: 'ALL_NEW',
          ...input,
        }),
      );
      return result.Attributes;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw error;
    }
  }
}

export function eventKey(sequence: number): string {
  return `e#${formatSequence(sequence)}`;
}

/** Positions are safe integers (acceptance-position.ts): padded to 16 digits they sort as text. */
export function formatPosition(position: number): string {
  return String(Math.max(0, Math.min(Math.floor(position), Number.MAX_SAFE_INTEGER))).padStart(16, '0');
}

export function stagedKey({ deliveryId, position }: Pick<StagedEvent, 'deliveryId' | 'position'>): string {
  return `p#${formatPosition(position)}#${deliveryId}`;
}

export function nextOf(state: Item | undefined): number {
  return Number(state?.['next']?.N ?? 1);
}

export function optionalNumber(attribute: { N?: string } | undefined): number | undefined {
  return attribute?.N === undefined ? undefined : Number(attribute.N);
}
