/**
 * `ReplayStore` in the `deliveries` table, in the subscription's partition (docs/REPLAY.md):
 *
 * - `sk` = `replay#<replay id>`: the record as JSON in `record`, with `state` and `version`
 *   beside it for the conditions, and `expiresAt` (the table's TTL) 30 days after its last write;
 * - `sk` = `replay-slot`: the one running replay of the subscription (`replayId`, `leaseUntil`
 *   epoch ms). Taking it is a conditional write that only succeeds when it is free or its lease
 *   ran out, so two starts at once cannot both run (at most one running replay per subscription).
 *
 * dynalite has no transactions, so the slot is taken first and the record written after; a start
 * that dies between the two leaves a slot that frees itself when its lease ends.
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import {
  ReplayRunningError,
  staleFailure,
  type ReplayRecord,
  type ReplayState,
  type ReplayStore,
} from '../core/replay/ports.js';
import { key, num, partition, PK, SK } from './delivery-table-items.js';

const SLOT = 'replay-slot';
const RECORD = 'replay#';
export const KEEP_SECONDS = 30 * 24 * 3600;

export class DynamoDbReplayStore implements ReplayStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {}

  async start(record: ReplayRecord, leaseUntil: number): Promise<void> {
    let previous: string | undefined;
    try {
      const taken = await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { ...key(record.subscriptionId, SLOT), replayId: { S: record.replayId }, leaseUntil: num(leaseUntil) },
          ConditionExpression: 'attribute_not_exists(#pk) OR leaseUntil < :now',
          ExpressionAttributeNames: { '#pk': PK },
          ExpressionAttributeValues: { ':now': num(this.now()) },
          ReturnValues: 'ALL_OLD',
        }),
      );
      previous = taken.Attributes?.['replayId']?.S;
    } catch (error) {
      if (
        !(error instanceof ConditionalCheckFailedException) &&
        (error as { name?: string }).name !== 'ConditionalCheckFailedException'
      )
        throw error;
      const slot = await this.client.send(
        new GetItemCommand({ TableName: this.tableName, Key: key(record.subscriptionId, SLOT), ConsistentRead: true }),
      );
      throw new ReplayRunningError(slot.Item?.['replayId']?.S);
    }
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: this.item(record) }));
    // The slot's lease ran out under a replay still marked running: its worker gave up; say so.
    const stale = previous === undefined ? undefined : await this.get(record.subscriptionId, previous);
    if (stale?.state === 'running')
      await this.update({ ...stale, ...staleFailure(stale, this.now()) }, stale.version, this.now());
  }

  async get(subscriptionId: string, replayId: string): Promise<ReplayRecord | undefined> {
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, `${RECORD}${replayId}`),
        ConsistentRead: true,
      }),
    );
    const json = result.Item?.['record']?.S;
    return json === undefined ? undefined : (JSON.parse(json) as ReplayRecord);
  }

  async list(subscriptionId: string): Promise<ReplayRecord[]> {
    const records: ReplayRecord[] = [];
    const nowSeconds = this.now() / 1000;
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':pk': { S: partition(subscriptionId) }, ':prefix': { S: RECORD } },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      // dynalite never deletes: an item past its TTL counts as gone.
      for (const item of page.Items ?? [])
        if (Number(item['expiresAt']?.N ?? 0) >= nowSeconds)
          records.push(JSON.parse(item['record']!.S!) as ReplayRecord);
      start = page.LastEvaluatedKey;
    } while (start);
    return records;
  }

  async update(
    next: ReplayRecord,
    expectedVersion: number,
    leaseUntil: number,
    expectedState: ReplayState = 'running',
  ): Promise<boolean> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: this.item(next),
          ConditionExpression: 'version = :version AND #state = :running',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':version': num(expectedVersion), ':running': { S: expectedState } },
        }),
      );
    } catch (error) {
      if (
        error instanceof ConditionalCheckFailedException ||
        (error as { name?: string }).name === 'ConditionalCheckFailedException'
      )
        return false;
      throw error;
    }
    if (next.state === 'running') {
      // The lease only grows while the replay makes progress; a slot already released stays free.
      await this.client
        .send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: { ...key(next.subscriptionId, SLOT), replayId: { S: next.replayId }, leaseUntil: num(leaseUntil) },
            ConditionExpression: 'replayId = :replayId',
            ExpressionAttributeValues: { ':replayId': { S: next.replayId } },
          }),
        )
        .catch((error: unknown) => {
          if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
        });
    }
    return true;
  }

  async release(subscriptionId: string, replayId: string): Promise<void> {
    await this.client
      .send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: key(subscriptionId, SLOT),
          ConditionExpression: 'replayId = :replayId',
          ExpressionAttributeValues: { ':replayId': { S: replayId } },
        }),
      )
      .catch((error: unknown) => {
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
      });
  }

  private item(record: ReplayRecord) {
    return {
      ...key(record.subscriptionId, `${RECORD}${record.replayId}`),
      record: { S: JSON.stringify(record) },
      state: { S: record.state },
      version: num(record.version),
      expiresAt: num(Math.ceil(record.updatedAt / 1000) + KEEP_SECONDS),
    };
  }
}
