/**
 * `PollLeases` in the `deliveries` table: one item per slot, `pk` `polls#<scope>` (bounded, see
 * ARCHITECTURE.md "DynamoDB keys"), `sk` `slot#<n>`, holding `leaseId`, `leaseUntil` (epoch ms)
 * and `expiresAt` (the table's TTL). A slot is taken with one conditional put that succeeds when
 * it is free or its lease ran out; the slots are tried from a random one on, so concurrent polls
 * rarely collide. A poll under the limit costs one put and one delete.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  PutItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { PollLeases } from '../core/pull/pull-queues.js';
import { boundedKey, DYNAMODB_LIMITS } from '../core/ids/bounded-key.js';
import { num, PK, SK } from './delivery-table-items.js';

export class DynamoDbPollLeases implements PollLeases {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async take(scope: string, limit: number, leaseId: string, now: number, until: number): Promise<number | undefined> {
    const first = Math.floor(Math.random() * limit);
    for (let tried = 0; tried < limit; tried++) {
      const slot = (first + tried) % limit;
      try {
        await this.client.send(
          new PutItemCommand({
            TableName: this.tableName,
            Item: {
              ...this.key(scope, slot),
              leaseId: { S: leaseId },
              leaseUntil: num(until),
              expiresAt: num(Math.ceil(until / 1000) + 60),
            },
            ConditionExpression: 'attribute_not_exists(#pk) OR leaseUntil < :now',
            ExpressionAttributeNames: { '#pk': PK },
            ExpressionAttributeValues: { ':now': num(now) },
          }),
        );
        return slot;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
    }
    return undefined;
  }

  async give(scope: string, slot: number, leaseId: string): Promise<void> {
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: this.key(scope, slot),
          ConditionExpression: 'leaseId = :lease',
          ExpressionAttributeValues: { ':lease': { S: leaseId } },
        }),
      );
    } catch (error) {
      // Taken over after its lease ran out: that slot is someone else's now.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  private key(scope: string, slot: number) {
    return {
      [PK]: { S: boundedKey('polls', [scope], DYNAMODB_LIMITS.partitionKeyBytes) },
      [SK]: { S: `slot#${slot}` },
    };
  }
}
