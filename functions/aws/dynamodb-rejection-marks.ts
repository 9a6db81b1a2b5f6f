/**
 * `RejectionMarks` in the `deliveries` table, in the subscription's partition beside its dead
 * letters: `sk` = `rejected#<SQS message id>`, the reject's reason, and `expiresAt` (the table's
 * TTL; the queue's retention, after which the message itself is gone). Every read treats an item
 * past `expiresAt` as absent (dynalite never deletes).
 */
import { BatchGetItemCommand, DeleteItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { RejectionMarks } from '../core/pull/pull-queues.js';
import { key, num, SK } from './delivery-table-items.js';

const REJECTED = 'rejected#';
/** BatchGetItem takes at most 100 keys. */
const MAX_KEYS = 100;

export class DynamoDbRejectionMarks implements RejectionMarks {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {}

  async mark(subscriptionId: string, messageId: string, reason: string, expiresAt: number): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...key(subscriptionId, `${REJECTED}${messageId}`), reason: { S: reason }, expiresAt: num(expiresAt) },
      }),
    );
  }

  async find(subscriptionId: string, messageIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
    const found = new Map<string, string>();
    const nowSeconds = this.now() / 1000;
    for (let offset = 0; offset < messageIds.length; offset += MAX_KEYS) {
      let keys = [...new Set(messageIds.slice(offset, offset + MAX_KEYS))].map((id) =>
        key(subscriptionId, `${REJECTED}${id}`),
      );
      while (keys.length > 0) {
        const result = await this.client.send(
          new BatchGetItemCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) {
          if (Number(item['expiresAt']?.N ?? 0) < nowSeconds) continue;
          found.set((item[SK]?.S ?? '').slice(REJECTED.length), item['reason']?.S ?? '');
        }
        keys = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return found;
  }

  async clear(subscriptionId: string, messageIds: readonly string[]): Promise<void> {
    await Promise.all(
      messageIds.map((id) =>
        this.client.send(
          new DeleteItemCommand({ TableName: this.tableName, Key: key(subscriptionId, `${REJECTED}${id}`) }),
        ),
      ),
    );
  }
}
