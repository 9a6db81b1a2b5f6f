/**
 * The per-client quota ledgers (functions/core/quotas) in the `idempotency` table, the table every
 * function that checks a quota already writes:
 *
 * - `holds#<key>`: what a client holds of one kind (its pull subscriptions, its running replays),
 *   the entries as JSON beside a `version`; written by a PutItem conditional on the version read,
 *   so two writers at once cannot both pass the limit. Kept for good: a few hundred bytes per
 *   client and kind.
 * - `usage#<key>#<window start>`: the amount used in one window (upload bytes per hour), added to
 *   by an UpdateItem conditional on the total staying within the limit; the table's TTL removes
 *   it a minute after its window.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { tables } from '../config/resources.js';
import { boundedKey, DYNAMODB_LIMITS } from '../core/ids/bounded-key.js';
import type { HoldLedger, Holds } from '../core/quotas/holds.js';
import type { UsageDecision, UsageWindow } from '../core/quotas/usage-window.js';

const KEY = tables.idempotency.partitionKey.name;
const TTL = tables.idempotency.ttlAttribute;

export class DynamoDbHoldLedger implements HoldLedger {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async load(key: string): Promise<Holds | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: itemKey('holds', [key]), ConsistentRead: true }),
    );
    const item = result.Item;
    if (!item) return undefined;
    return {
      entries: JSON.parse(item['entries']?.S ?? '{}') as Record<string, number>,
      version: Number(item['version']?.N ?? 0),
    };
  }

  async save(key: string, entries: Readonly<Record<string, number>>, expectedVersion: number): Promise<boolean> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            ...itemKey('holds', [key]),
            entries: { S: JSON.stringify(entries) },
            version: { N: String(expectedVersion + 1) },
          },
          ConditionExpression: expectedVersion === 0 ? 'attribute_not_exists(#key)' : 'version = :expected',
          ExpressionAttributeNames: expectedVersion === 0 ? { '#key': KEY } : undefined,
          ExpressionAttributeValues:
            expectedVersion === 0 ? undefined : { ':expected': { N: String(expectedVersion) } },
        }),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw error;
    }
  }
}

export class DynamoDbUsageWindow implements UsageWindow {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async add(key: string, amount: number, limit: number, windowStart: number, windowMs: number): Promise<UsageDecision> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey('usage', [key, String(windowStart)]),
          UpdateExpression: 'ADD #used :amount SET #ttl = if_not_exists(#ttl, :expires)',
          ConditionExpression: 'attribute_not_exists(#used) OR #used <= :room',
          ExpressionAttributeNames: { '#used': 'used', '#ttl': TTL },
          ExpressionAttributeValues: {
            ':amount': { N: String(amount) },
            ':room': { N: String(limit - amount) },
            ':expires': { N: String(Math.ceil((windowStart + windowMs) / 1000) + 60) },
          },
        }),
      );
      return { added: true };
    } catch (error) {
      if (!conditionFailed(error)) throw error;
    }
    const result = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: itemKey('usage', [key, String(windowStart)]),
        ConsistentRead: true,
      }),
    );
    return { added: false, used: Number(result.Item?.['used']?.N ?? 0) };
  }

  async subtract(key: string, amount: number, windowStart: number): Promise<void> {
    await this.client
      .send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: itemKey('usage', [key, String(windowStart)]),
          UpdateExpression: 'ADD #used :amount',
          ConditionExpression: 'attribute_exists(#used)',
          ExpressionAttributeNames: { '#used': 'used' },
          ExpressionAttributeValues: { ':amount': { N: String(-amount) } },
        }),
      )
      .catch((error: unknown) => {
        if (!conditionFailed(error)) throw error;
      });
  }
}

function itemKey(namespace: string, parts: readonly string[]) {
  // A client id comes from a token and may be long: bounded like every key built from input.
  return { [KEY]: { S: boundedKey(namespace, parts, DYNAMODB_LIMITS.partitionKeyBytes) } };
}

function conditionFailed(error: unknown): boolean {
  return (
    error instanceof ConditionalCheckFailedException ||
    (error as { name?: string }).name === 'ConditionalCheckFailedException'
  );
}
