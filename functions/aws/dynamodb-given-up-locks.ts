/**
 * `GivenUpLocks` in the `deliveries` table, in the subscription's partition beside its reject
 * marks: `sk` = `given-up#<SHA-256 of the receipt handle, base64url>` (a receipt handle may be
 * 1,024 characters, a sort key no more than that), and `expiresAt` (the table's TTL). Every read
 * treats an item past `expiresAt` as absent (dynalite never deletes). Reads are consistent: a
 * release a moment ago must count for the acknowledge that follows it.
 */
import { createHash } from 'node:crypto';
import { BatchGetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { GivenUpLocks } from '../core/pull/pull-queues.js';
import { key, num, SK } from './delivery-table-items.js';

const GIVEN_UP = 'given-up#';
/** BatchGetItem takes at most 100 keys; a settle holds at most 100 tokens. */
const MAX_KEYS = 100;

const sortKeyOf = (receiptHandle: string) =>
  `${GIVEN_UP}${createHash('sha256').update(receiptHandle).digest('base64url')}`;

export class DynamoDbGivenUpLocks implements GivenUpLocks {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: () => number = Date.now,
  ) {}

  async giveUp(subscriptionId: string, receiptHandles: readonly string[], expiresAt: number): Promise<void> {
    await Promise.all(
      [...new Set(receiptHandles)].map((handle) =>
        this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: { ...key(subscriptionId, sortKeyOf(handle)), expiresAt: num(expiresAt) },
          }),
        ),
      ),
    );
  }

  async givenUp(subscriptionId: string, receiptHandles: readonly string[]): Promise<ReadonlySet<string>> {
    const handleOf = new Map([...new Set(receiptHandles)].map((handle) => [sortKeyOf(handle), handle]));
    const found = new Set<string>();
    const nowSeconds = this.now() / 1000;
    const sortKeys = [...handleOf.keys()];
    for (let offset = 0; offset < sortKeys.length; offset += MAX_KEYS) {
      let keys = sortKeys.slice(offset, offset + MAX_KEYS).map((sortKey) => key(subscriptionId, sortKey));
      while (keys.length > 0) {
        const result = await this.client.send(
          new BatchGetItemCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) {
          if (Number(item['expiresAt']?.N ?? 0) < nowSeconds) continue;
          const handle = handleOf.get(item[SK]?.S ?? '');
          if (handle !== undefined) found.add(handle);
        }
        keys = result.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return found;
  }
}
