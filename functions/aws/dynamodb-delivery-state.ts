/**
 * Delivery state in the `deliveries` table: one partition per subscription (`sub#<id>`), with
 *
 *   sk `target`                           the target's shared health: rate slot, breaker, 429 throttle
 *   sk `progress#<deliveryId>`            failed attempts of a delivery still being retried
 *   sk `attempt#<at>#<deliveryId>#<n>`    attempt history, packed per batch (./dynamodb-attempt-history.ts), listed newest first
 *   sk `dead#<createdAt>#<deliveryId>`    dead letters, oldest delivery first; the key makes a repeat idempotent
 *
 * Everything but the target item carries `expiresAt` (DynamoDB TTL); reads treat expired items as
 * absent, as dynalite never deletes them. The target item has no TTL: its rate slot must never
 * silently reset while a conditional write still expects it.
 *
 * One class for the three delivery ports (target health, delivery ledger, dead letters): they share
 * the table, its partition per subscription and its cursors; each user is handed only its port.
 */
import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { systemClock, type Clock } from '../core/ports/clock.js';
import { attemptPackWrites, listAttemptPage } from './dynamodb-attempt-history.js';
import { storedRendering } from '../core/delivery/frozen-rendering.js';
import { batchWriteAll } from './dynamodb-batch-write.js';
import type {
  AttemptRecord,
  DeadLetter,
  DeadLetterStore,
  DeliveryLedger,
  DeliveryProgress,
  Page,
  TargetHealthStore,
} from '../core/delivery/delivery-records.js';
import { HEALTHY, type TargetState } from '../core/delivery/target-health.js';
import {
  DEAD,
  deadLetterSortKey,
  decodeCursor,
  encodeCursor,
  key,
  num,
  PARTITION_PREFIX,
  partition,
  PK,
  PROGRESS,
  SK,
  TARGET,
  targetOf,
  type Item,
} from './delivery-table-items.js';

const BATCH_GET_LIMIT = 100;

export class DynamoDbDeliveryState implements TargetHealthStore, DeliveryLedger, DeadLetterStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly clock: Clock = systemClock,
  ) {}

  async getTarget(subscriptionId: string): Promise<TargetState> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: key(subscriptionId, TARGET), ConsistentRead: true }),
    );
    return result.Item ? targetOf(result.Item) : HEALTHY;
  }

  async getTargets(subscriptionIds: readonly string[]): Promise<ReadonlyMap<string, TargetState>> {
    const targets = new Map<string, TargetState>();
    for (let offset = 0; offset < subscriptionIds.length; offset += BATCH_GET_LIMIT) {
      let keys: Item[] = subscriptionIds.slice(offset, offset + BATCH_GET_LIMIT).map((id) => key(id, TARGET));
      for (let round = 0; keys.length > 0; round++) {
        if (round === 5) throw new Error(`${keys.length} target states stayed unread`);
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** round));
        const result = await this.client.send(
          new BatchGetItemCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of result.Responses?.[this.tableName] ?? [])
          targets.set((item[PK]?.S ?? '').slice(PARTITION_PREFIX.length), targetOf(item));
        keys = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return targets;
  }

  async reserveSendSlots(subscriptionId: string, expected: number | undefined, next: number): Promise<boolean> {
    return this.conditionally(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, TARGET),
        UpdateExpression: 'SET nextSendAt = :next',
        ConditionExpression: expected === undefined ? 'attribute_not_exists(nextSendAt)' : 'nextSendAt = :expected',
        ExpressionAttributeValues: {
          ':next': num(next),
          ...(expected === undefined ? {} : { ':expected': num(expected) }),
        },
      }),
    );
  }

  async takeProbe(subscriptionId: string, now: number, until: number, lastFailureAt: number): Promise<boolean> {
    return this.conditionally(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, TARGET),
        UpdateExpression: 'SET probeUntil = :until',
        ConditionExpression:
          '(attribute_not_exists(probeUntil) OR probeUntil < :now) AND lastFailureAt = :lastFailureAt',
        ExpressionAttributeValues: { ':until': num(until), ':now': num(now), ':lastFailureAt': num(lastFailureAt) },
      }),
    );
  }

  async releaseProbe(subscriptionId: string, until: number): Promise<void> {
    await this.conditionally(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, TARGET),
        UpdateExpression: 'REMOVE probeUntil',
        ConditionExpression: 'probeUntil = :until',
        ExpressionAttributeValues: { ':until': num(until) },
      }),
    );
  }

  async recordTargetSuccess(subscriptionId: string): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, TARGET),
        UpdateExpression: 'REMOVE consecutiveFailures, lastFailureAt, failingSince, probeUntil, failedProbes',
      }),
    );
  }

  async recordTargetFailures(subscriptionId: string, count: number, now: number, probe: boolean): Promise<TargetState> {
    const result = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, TARGET),
        UpdateExpression: `ADD consecutiveFailures :count${probe ? ', failedProbes :one' : ''} SET lastFailureAt = :now, failingSince = if_not_exists(failingSince, :now) REMOVE probeUntil`,
        ExpressionAttributeValues: { ':count': num(count), ':now': num(now), ...(probe ? { ':one': num(1) } : {}) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return targetOf(result.Attributes ?? {});
  }

  async recordThrottle(
    subscriptionId: string,
    pauseUntil: number,
    throttle: { ratePerMinute: number; since: number },
  ): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, TARGET),
        UpdateExpression: 'SET throttleRate = :rate, throttleSince = :since',
        ExpressionAttributeValues: { ':rate': num(throttle.ratePerMinute), ':since': num(throttle.since) },
      }),
    );
    // Only ever later: rate slots already reserved beyond the pause must stay reserved.
    await this.conditionally(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, TARGET),
        UpdateExpression: 'SET nextSendAt = :pause',
        ConditionExpression: 'attribute_not_exists(nextSendAt) OR nextSendAt < :pause',
        ExpressionAttributeValues: { ':pause': num(pauseUntil) },
      }),
    );
  }

  async resetTarget(subscriptionId: string): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, TARGET),
        UpdateExpression:
          'REMOVE consecutiveFailures, lastFailureAt, failingSince, probeUntil, failedProbes, throttleRate, throttleSince',
      }),
    );
  }

  async getProgress(subscriptionId: string, deliveryId: string): Promise<DeliveryProgress | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: key(subscriptionId, `${PROGRESS}${deliveryId}`) }),
    );
    const item = result.Item;
    if (!item || this.expired(item)) return undefined;
    return {
      deliveryId,
      failedAttempts: Number(item['failedAttempts']?.N ?? 0),
      lastAttempts: JSON.parse(item['lastAttempts']?.S ?? '[]') as AttemptRecord[],
      ...(item['nextAttemptAt']?.N ? { nextAttemptAt: Number(item['nextAttemptAt'].N) } : {}),
      ...renderingOf(item),
    };
  }

  async putProgress(subscriptionId: string, progress: DeliveryProgress, expiresAt: number): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          ...key(subscriptionId, `${PROGRESS}${progress.deliveryId}`),
          failedAttempts: num(progress.failedAttempts),
          lastAttempts: { S: JSON.stringify(progress.lastAttempts) },
          ...(progress.nextAttemptAt === undefined ? {} : { nextAttemptAt: num(progress.nextAttemptAt) }),
          // How the first attempt rendered the delivery (EDU-IDEM-11): every retry renders it so.
          ...(progress.rendering === undefined ? {} : { renderingFormat: { S: progress.rendering.format } }),
          ...(progress.rendering?.maxInlineBytes === undefined
            ? {}
            : { renderingMaxInlineBytes: num(progress.rendering.maxInlineBytes) }),
          expiresAt: num(expiresAt),
        },
      }),
    );
  }

  async recordAttempts(records: readonly AttemptRecord[], expiresAt: number): Promise<void> {
    await this.batchWrite(attemptPackWrites(records, expiresAt));
  }

  async listAttempts(
    subscriptionId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<Page<AttemptRecord>> {
    return listAttemptPage(this.client, this.tableName, subscriptionId, page, (item) => this.expired(item));
  }

  async putDeadLetter(deadLetter: DeadLetter, expiresAt: number): Promise<void> {
    const { events, ...rest } = deadLetter;
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          ...key(deadLetter.subscriptionId, deadLetterSortKey(deadLetter)),
          events: { L: events.map((event) => ({ S: event })) },
          deadLetter: { S: JSON.stringify(rest) },
          expiresAt: num(expiresAt),
        },
      }),
    );
  }

  async listDeadLetters(
    subscriptionId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<Page<DeadLetter>> {
    const result = await this.query(subscriptionId, DEAD, page, true);
    return {
      items: result.items.map((item) => ({
        ...(JSON.parse(item['deadLetter']?.S ?? '{}') as Omit<DeadLetter, 'events'>),
        events: (item['events']?.L ?? []).map((event) => event.S ?? ''),
      })),
      cursor: result.cursor,
    };
  }

  async deleteDeadLetters(
    deadLetters: readonly Pick<DeadLetter, 'subscriptionId' | 'deliveryId' | 'createdAt'>[],
  ): Promise<void> {
    await this.batchWrite(
      deadLetters.map((deadLetter) => ({
        DeleteRequest: { Key: key(deadLetter.subscriptionId, deadLetterSortKey(deadLetter)) },
      })),
    );
  }

  private async query(
    subscriptionId: string,
    prefix: string,
    page: { limit: number; cursor?: string | undefined },
    oldestFirst: boolean,
  ): Promise<{ items: Item[]; cursor?: string | undefined }> {
    const start = page.cursor === undefined ? undefined : decodeCursor(page.cursor, subscriptionId, prefix);
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': { S: partition(subscriptionId) }, ':prefix': { S: prefix } },
        ScanIndexForward: oldestFirst,
        Limit: page.limit,
        ExclusiveStartKey: start,
      }),
    );
    const items = (result.Items ?? []).filter((item) => !this.expired(item));
    return { items, cursor: result.LastEvaluatedKey && encodeCursor(result.LastEvaluatedKey) };
  }

  private batchWrite(requests: readonly WriteRequest[]): Promise<void> {
    return batchWriteAll(this.client, this.tableName, requests, 'delivery state');
  }

  private async conditionally(command: UpdateItemCommand): Promise<boolean> {
    try {
      await this.client.send(command);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  private expired(item: Item): boolean {
    const expiresAt = item['expiresAt']?.N;
    return expiresAt !== undefined && Number(expiresAt) * 1000 < this.clock();
  }
}

/** The progress item's rendering (EDU-IDEM-11), when it keeps one. */
function renderingOf(item: Item): Pick<DeliveryProgress, 'rendering'> {
  const maxInline = item['renderingMaxInlineBytes']?.N;
  const rendering = storedRendering(
    item['renderingFormat']?.S,
    maxInline === undefined ? undefined : Number(maxInline),
  );
  return rendering === undefined ? {} : { rendering };
}
