/**
 * Tables that keep one JSON `record` per item under a `pk` + `sk` key (the contract register, the
 * ZGW adapter): the key, one item read and one partition read whole, shared so that both stores
 * read their items the same way (consistently, every page).
 */
import { GetItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

export function recordKey(pk: string, sk: string): Record<string, AttributeValue> {
  return { pk: { S: pk }, sk: { S: sk } };
}

/** The record of one item, or undefined when the item is absent. */
export async function getRecord<T>(
  client: DynamoDBClient,
  tableName: string,
  pk: string,
  sk: string,
): Promise<T | undefined> {
  const { Item: item } = await client.send(
    new GetItemCommand({ TableName: tableName, Key: recordKey(pk, sk), ConsistentRead: true }),
  );
  const record = item?.['record']?.S;
  return record === undefined ? undefined : (JSON.parse(record) as T);
}

/** Every record under `pk`, in sort-key order, all pages. */
export async function queryRecords<T>(client: DynamoDBClient, tableName: string, pk: string): Promise<T[]> {
  const records: T[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: pk } },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? [])
      if (item['record']?.S !== undefined) records.push(JSON.parse(item['record'].S) as T);
    start = page.LastEvaluatedKey;
  } while (start);
  return records;
}
