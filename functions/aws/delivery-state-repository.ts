/**
 * Delivery state in the `deliveries` table: one partition per subscription (`sub#<id>`), with
 *
 *   sk `target`                           the target's shared health: rate slot, breaker, 429 throttle
 *   sk `progress#<deliveryId>`            failed attempts of a delivery still being retried
 *   sk `attempt#<at>#<deliveryId>#<n>`    attempt history, newest last (listed newest first)
 *   sk `dead#<createdAt>#<deliveryId>`    dead letters, oldest delivery first; the key makes a repeat idempotent
 *
 * Everything but the target item carries `expiresAt` (DynamoDB TTL); reads treat expired items as
 * absent, as dynalite never deletes them. The target item has no TTL: its rate slot must never
 * silently reset while a conditional write still expects it.
 */
import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { tables } from '../../lib/resources.js';
import { batchWriteAll } from './dynamodb-batch-write.js';
import {
  InvalidPageCursorError,
  type AttemptRecord,
  type DeadLetter,
  type DeliveryProgress,
  type DeliveryStateStore,
  type Page,
} from '../core/delivery/delivery-records.js';
import { HEALTHY, type TargetState } from '../core/delivery/target-health.js';

type Item = Record<string, AttributeValue>;

const PK = tables.deliveries.partitionKey.name;
const SK = tables.deliveries.sortKey.name;
const TARGET = 'target';
const PROGRESS = 'progress#';
const ATTEMPT = 'attempt#';
const DEAD = 'dead#';
const BATCH_GET_LIMIT = 100;
const PARTITION_PREFIX = 'sub#';

export class DeliveryStateRepository implements DeliveryStateStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly clock: () => number = Date.now,
  ) {}

  async getTarget(subscriptionId: string): Promise<TargetState> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: key(subscriptionId, TARGET), ConsistentRead: true }));
    return result.Item ? targetOf(result.Item) : HEALTHY;
  }

  async getTargets(subscriptionIds: readonly string[]): Promise<ReadonlyMap<string, TargetState>> {
    const targets = new Map<string, TargetState>();
    for (let offset = 0; offset < subscriptionIds.length; offset += BATCH_GET_LIMIT) {
      let keys: Item[] = subscriptionIds.slice(offset, offset + BATCH_GET_LIMIT).map((id) => key(id, TARGET));
      for (let round = 0; keys.length > 0; round++) {
        if (round === 5) throw new Error(`${keys.length} target states stayed unread`);
        if (round > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** round));
        const result = await this.client.send(new BatchGetItemCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }));
        for (const item of result.Responses?.[this.tableName] ?? []) targets.set((item[PK]?.S ?? '').slice(PARTITION_PREFIX.length), targetOf(item));
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
        ExpressionAttributeValues: { ':next': num(next), ...(expected === undefined ? {} : { ':expected': num(expected) }) },
      }),
    );
  }

  async takeProbe(subscriptionId: string, now: number, until: number): Promise<boolean> {
    return this.conditionally(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: key(subscriptionId, TARGET),
        UpdateExpression: 'SET probeUntil = :until',
        ConditionExpression: 'attribute_not_exists(probeUntil) OR probeUntil < :now',
        ExpressionAttributeValues: { ':until': num(until), ':now': num(now) },
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

  async recordThrottle(subscriptionId: string, pauseUntil: number, throttle: { ratePerMinute: number; since: number }): Promise<void> {
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
        UpdateExpression: 'REMOVE consecutiveFailures, lastFailureAt, failingSince, probeUntil, failedProbes, throttleRate, throttleSince',
      }),
    );
  }

  async getProgress(subscriptionId: string, deliveryId: string): Promise<DeliveryProgress | undefined> {
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: key(subscriptionId, `${PROGRESS}${deliveryId}`) }));
    const item = result.Item;
    if (!item || this.expired(item)) return undefined;
    return {
      deliveryId,
      failedAttempts: Number(item['failedAttempts']?.N ?? 0),
      lastAttempts: JSON.parse(item['lastAttempts']?.S ?? '[]') as AttemptRecord[],
      ...(item['nextAttemptAt']?.N ? { nextAttemptAt: Number(item['nextAttemptAt'].N) } : {}),
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
          expiresAt: num(expiresAt),
        },
      }),
    );
  }

  async recordAttempts(records: readonly AttemptRecord[], expiresAt: number): Promise<void> {
    await this.batchWrite(
      records.map((record) => ({
        PutRequest: {
          Item: {
            ...key(record.subscriptionId, `${ATTEMPT}${record.at}#${record.deliveryId}#${record.attempt}`),
            record: { S: JSON.stringify(record) },
            expiresAt: num(expiresAt),
          },
        },
      })),
    );
  }

  async listAttempts(subscriptionId: string, page: { limit: number; cursor?: string }): Promise<Page<AttemptRecord>> {
    const result = await this.query(subscriptionId, ATTEMPT, page, false);
    return { items: result.items.map((item) => JSON.parse(item['record']?.S ?? '{}') as AttemptRecord), ...(result.cursor ? { cursor: result.cursor } : {}) };
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

  async listDeadLetters(subscriptionId: string, page: { limit: number; cursor?: string }): Promise<Page<DeadLetter>> {
    const result = await this.query(subscriptionId, DEAD, page, true);
    return {
      items: result.items.map((item) => ({
        ...(JSON.parse(item['deadLetter']?.S ?? '{}') as Omit<DeadLetter, 'events'>),
        events: (item['events']?.L ?? []).map((event) => event.S ?? ''),
      })),
      ...(result.cursor ? { cursor: result.cursor } : {}),
    };
  }

  async deleteDeadLetters(deadLetters: readonly Pick<DeadLetter, 'subscriptionId' | 'deliveryId' | 'createdAt'>[]): Promise<void> {
    await this.batchWrite(deadLetters.map((deadLetter) => ({ DeleteRequest: { Key: key(deadLetter.subscriptionId, deadLetterSortKey(deadLetter)) } })));
  }

  private async query(subscriptionId: string, prefix: string, page: { limit: number; cursor?: string }, oldestFirst: boolean): Promise<{ items: Item[]; cursor?: string }> {
    const start = page.cursor === undefined ? undefined : decodeCursor(page.cursor, subscriptionId, prefix);
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: { ':pk': { S: partition(subscriptionId) }, ':prefix': { S: prefix } },
        ScanIndexForward: oldestFirst,
        Limit: page.limit,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const items = (result.Items ?? []).filter((item) => !this.expired(item));
    return { items, ...(result.LastEvaluatedKey ? { cursor: encodeCursor(result.LastEvaluatedKey) } : {}) };
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

function partition(subscriptionId: string): string {
  return `${PARTITION_PREFIX}${subscriptionId}`;
}

function key(subscriptionId: string, sortKey: string): Item {
  return { [PK]: { S: partition(subscriptionId) }, [SK]: { S: sortKey } };
}

/** Zero-padded creation time first, so the listing runs oldest delivery first. */
function deadLetterSortKey(deadLetter: Pick<DeadLetter, 'deliveryId' | 'createdAt'>): string {
  return `${DEAD}${String(deadLetter.createdAt).padStart(15, '0')}#${deadLetter.deliveryId}`;
}

function num(value: number): AttributeValue {
  return { N: String(value) };
}

function targetOf(item: Item): TargetState {
  const number = (name: string) => (item[name]?.N === undefined ? undefined : Number(item[name]!.N));
  const throttleRate = number('throttleRate');
  const throttleSince = number('throttleSince');
  const optional = {
    nextSendAt: number('nextSendAt'),
    lastFailureAt: number('lastFailureAt'),
    failingSince: number('failingSince'),
    probeUntil: number('probeUntil'),
    failedProbes: number('failedProbes'),
    throttle: throttleRate === undefined || throttleSince === undefined ? undefined : { ratePerMinute: throttleRate, since: throttleSince },
  };
  return {
    consecutiveFailures: number('consecutiveFailures') ?? 0,
    ...(Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)) as Partial<TargetState>),
  };
}

/** The partition travels in the cursor: a cursor never pages through another subscription. */
function encodeCursor(lastKey: Item): string {
  return Buffer.from(JSON.stringify({ pk: lastKey[PK]?.S, sk: lastKey[SK]?.S })).toString('base64url');
}

/** Our sort keys are printable ASCII of at most about 120 characters; cursors far below this. */
const MAX_CURSOR_SORT_KEY_BYTES = 256;
/** base64url of the largest `{pk, sk}`: a partition of a 1,024-byte subscription id and such a sort key. */
const MAX_CURSOR_LENGTH = 2048;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * A cursor is exactly `{pk, sk}`: `pk` this subscription's partition, `sk` a printable key of the
 * listed kind (its prefix) and of bounded length. Anything else — garbage, other JSON, another
 * subscription's partition, an oversized or extra member — is refused here, before DynamoDB would
 * answer a ValidationException (a 500) (issue 8, item 10).
 */
function decodeCursor(cursor: string, subscriptionId: string, prefix: string): Item {
  if (cursor.length <= MAX_CURSOR_LENGTH) {
    try {
      const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).sort().join() === 'pk,sk') {
        const { pk, sk } = value as { pk: unknown; sk: unknown };
        if (
          pk === partition(subscriptionId) &&
          typeof sk === 'string' &&
          sk.startsWith(prefix) &&
          sk.length > prefix.length &&
          sk.length <= MAX_CURSOR_SORT_KEY_BYTES &&
          PRINTABLE_ASCII.test(sk)
        ) {
          return key(subscriptionId, sk);
        }
      }
    } catch {
      // falls through to the error below
    }
  }
  throw new InvalidPageCursorError('the cursor is not one this list handed out');
}
