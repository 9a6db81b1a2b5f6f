/**
 * `ErasureStore` in the `deliveries` table (issue 31 item 4): the audit records of erasures, one
 * item each in one partition (`pk` `#erasures`, `sk` `erasure#<id>`), the record as JSON. No
 * `expiresAt`: an audit record holds no personal data (the selector only as a keyed hash) and is
 * kept for as long as the table is, so the organisation can show what it erased and when.
 */
import {
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { NO_ERASED, type ErasureRecord, type ErasureStore } from '../core/erasure/ports.js';
import { PK, SK } from './delivery-table-items.js';

const PARTITION = '#erasures';
const RECORD = 'erasure#';

export class DynamoDbErasureStore implements ErasureStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async put(record: ErasureRecord): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          ...keyOf(record.id),
          record: { S: JSON.stringify(record) },
          createdAt: { N: String(record.createdAt) },
        },
      }),
    );
  }

  async get(id: string): Promise<ErasureRecord | undefined> {
    const { Item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: keyOf(id), ConsistentRead: true }),
    );
    return Item === undefined ? undefined : recordOf(Item);
  }

  async list(limit: number): Promise<ErasureRecord[]> {
    const records: ErasureRecord[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': PK },
          ExpressionAttributeValues: { ':pk': { S: PARTITION } },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      records.push(...(page.Items ?? []).map(recordOf));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return records.sort((a, b) => b.createdAt - a.createdAt).slice(0, limit);
  }
}

function keyOf(id: string): Record<string, AttributeValue> {
  return { [PK]: { S: PARTITION }, [SK]: { S: `${RECORD}${id}` } };
}

function recordOf(item: Record<string, AttributeValue>): ErasureRecord {
  const record = JSON.parse(item['record']?.S ?? '{}') as ErasureRecord;
  // A record written before a count existed shows it as 0.
  return { ...record, erased: { ...NO_ERASED, ...record.erased } };
}
