/**
 * Requests per client per minute (WH-7, EDU-20: per producer, not per IP address), counted in a
 * fixed one-minute window: one conditional UpdateItem per request in the `idempotency` table,
 * whose TTL removes old windows. This is the accurate limit, shared by every container; a refusal
 * is also told to `onRefused`, so the container's own throttle (functions/core/throttling) can
 * refuse the client until the window ends without another write.
 */
import { ConditionalCheckFailedException, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tables } from '../../lib/resources.js';
import type { RateDecision, RateWindow } from '../core/ingest/ports.js';
import { boundedKey, DYNAMODB_LIMITS } from '../core/ids/bounded-key.js';

export type { RateDecision } from '../core/ingest/ports.js';

const WINDOW_MS = 60_000;

export interface RateWindowOptions {
  /** Told when a client is refused, with the end of the window (epoch ms) that refused it. */
  readonly onRefused?: (clientId: string, windowEndMs: number) => void;
  /** Decides which minute a request counts in (epoch ms; default `Date.now`); tests pass their own. */
  readonly clock?: () => number;
}

export class DynamoDbRateWindow implements RateWindow {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly options: RateWindowOptions = {},
  ) {}

  async take(clientId: string, limitPerMinute: number): Promise<RateDecision> {
    const now = (this.options.clock ?? Date.now)();
    const windowStart = now - (now % WINDOW_MS);
    const windowEnd = windowStart + WINDOW_MS;
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          // A client id comes from a token and may be long: bounded like every key built from input.
          Key: { [tables.idempotency.partitionKey.name]: { S: boundedKey('rate', [clientId, String(windowStart)], DYNAMODB_LIMITS.partitionKeyBytes) } },
          UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :expires)',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'requests', '#ttl': tables.idempotency.ttlAttribute },
          ExpressionAttributeValues: {
            ':one': { N: '1' },
            ':limit': { N: String(limitPerMinute) },
            ':expires': { N: String(Math.ceil(windowEnd / 1000) + 60) },
          },
        }),
      );
      return { allowed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      this.options.onRefused?.(clientId, windowEnd);
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)) };
    }
  }
}
