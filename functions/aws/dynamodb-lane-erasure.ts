/**
 * `ErasableLanes` (core/erasure/ports.ts) over the lanes in the `deliveries` table
 * (./dynamodb-ordered-lanes.ts): the erasure finds the events waiting in ordered lanes — staged
 * items `p#…` and numbered ones `e#…` under a `lane#…` partition — by reading the whole table,
 * since lanes have no index of their own. An erasure is rare and already reads the whole archive;
 * the worker reads the lanes only when some subscription is ordered.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { ErasableLanes, WaitingLaneEvent } from '../core/erasure/ports.js';
import { PK, SK } from './delivery-table-items.js';

const PAGE = 100;

export class DynamoDbLaneErasure implements ErasableLanes {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async waiting(cursor?: string): Promise<{ items: WaitingLaneEvent[]; cursor?: string }> {
    const result = await this.client.send(
      new ScanCommand({
        TableName: this.tableName,
        FilterExpression: 'begins_with(#pk, :lane) AND (begins_with(#sk, :staged) OR begins_with(#sk, :numbered))',
        ProjectionExpression: '#pk, #sk, #body',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#body': 'body' },
        ExpressionAttributeValues: { ':lane': { S: 'lane#' }, ':staged': { S: 'p#' }, ':numbered': { S: 'e#' } },
        // A filtered page may hold none: the cursor goes on until the table's end.
        Limit: PAGE,
        ...(cursor === undefined ? {} : { ExclusiveStartKey: JSON.parse(cursor) as Record<string, AttributeValue> }),
      }),
    );
    const items = (result.Items ?? []).map((item) => ({
      ref: JSON.stringify({ [PK]: item[PK], [SK]: item[SK] }),
      state: item[SK]!.S!.startsWith('p#') ? ('staged' as const) : ('numbered' as const),
      body: item['body']?.S ?? '',
    }));
    return {
      items,
      ...(result.LastEvaluatedKey === undefined ? {} : { cursor: JSON.stringify(result.LastEvaluatedKey) }),
    };
  }

  async rewrite(event: WaitingLaneEvent, body: string): Promise<void> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: keyOf(event),
          UpdateExpression: 'SET #body = :body',
          // Delivered and removed meanwhile: nothing to write back (it must not come back).
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#body': 'body', '#pk': PK },
          ExpressionAttributeValues: { ':body': { S: body } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async remove(event: WaitingLaneEvent): Promise<void> {
    await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: keyOf(event) }));
  }
}

function keyOf(event: WaitingLaneEvent): Record<string, AttributeValue> {
  return JSON.parse(event.ref) as Record<string, AttributeValue>;
}
