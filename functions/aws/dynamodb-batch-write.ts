/**
 * BatchWriteItem for any number of requests: chunks of 25 (DynamoDB's limit), with what DynamoDB
 * leaves unprocessed (throttling) retried with backoff; still unprocessed after five tries, it
 * throws, so a caller never believes a write landed that did not.
 */
import { BatchWriteItemCommand, type DynamoDBClient, type WriteRequest } from '@aws-sdk/client-dynamodb';

const BATCH_WRITE_LIMIT = 25;
const ATTEMPTS = 5;

export async function batchWriteAll(
  client: DynamoDBClient,
  tableName: string,
  requests: readonly WriteRequest[],
  what: string,
): Promise<void> {
  for (let start = 0; start < requests.length; start += BATCH_WRITE_LIMIT) {
    let pending: WriteRequest[] = requests.slice(start, start + BATCH_WRITE_LIMIT);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === ATTEMPTS)
        throw new Error(`${what}: ${pending.length} writes still unprocessed after ${attempt} attempts`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      const result = await client.send(new BatchWriteItemCommand({ RequestItems: { [tableName]: pending } }));
      pending = result.UnprocessedItems?.[tableName] ?? [];
    }
  }
}
