/**
 * The route index's items (`routes` table, see dynamodb-route-index.ts): a per-subscription entry
 * holds the candidate as attributes; a key's head holds each candidate as one JSON attribute
 * `c:<subscriptionId>`, so a candidate is added or removed without reading the head.
 */
import {
  type AttributeValue,
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  type PutItemCommand,
  type UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { tables } from '../config/resources.js';
import type { OrderingSettings } from '../core/ordering/ordering-settings.js';
import type { ContentMode } from '../core/cloudevents/index.js';
import type { RouteCandidate } from '../core/routing/matcher.js';
import type { SubscriptionMatch } from '../core/routing/route-keys.js';

export type Item = Record<string, AttributeValue>;
export type Stored = Omit<RouteCandidate, 'subscriptionId'>;

export const ROUTE_KEY = tables.routes.partitionKey.name;
export const SORT_KEY = tables.routes.sortKey.name;
/** The head's sort key: no subscription id starts with `#` (they are UUIDs). */
export const HEAD = '#head';
export const CANDIDATE_PREFIX = 'c:';
/** BatchGetItem's limit per request, and how often keys it leaves unprocessed are asked again. */
const BATCH_GET_LIMIT = 100;
const ATTEMPTS = 5;

export function headKey(routeKey: string): Item {
  return { [ROUTE_KEY]: { S: routeKey }, [SORT_KEY]: { S: HEAD } };
}

export function storedPart({ subscriptionId: _, ...stored }: RouteCandidate): Stored {
  return stored;
}

export function itemOf(candidate: Stored): Item {
  return {
    owner: { S: candidate.owner },
    match: { S: JSON.stringify(candidate.match) },
    contentMode: { S: candidate.contentMode },
    batchSupported: { BOOL: candidate.batchSupported },
    delivery: { S: candidate.delivery },
    ...(candidate.ordering === undefined ? {} : { ordering: { S: JSON.stringify(candidate.ordering) } }),
  };
}

export function storedOf(item: Item): Stored {
  return {
    owner: item['owner']?.S ?? '',
    match: JSON.parse(item['match']?.S ?? '{}') as SubscriptionMatch,
    contentMode: (item['contentMode']?.S ?? 'structured') as ContentMode,
    batchSupported: item['batchSupported']?.BOOL === true,
    // Absent on entries written before pull delivery existed: those are push.
    delivery: item['delivery']?.S === 'pull' ? 'pull' : 'push',
    ...(item['ordering']?.S === undefined ? {} : { ordering: JSON.parse(item['ordering'].S) as OrderingSettings }),
  };
}

export function inlineCandidates(head: Item): RouteCandidate[] {
  return Object.entries(head)
    .filter(([name]) => name.startsWith(CANDIDATE_PREFIX))
    .map(([name, value]) => ({
      subscriptionId: name.slice(CANDIDATE_PREFIX.length),
      ...(JSON.parse(value.S ?? '{}') as Stored),
    }));
}

/** The names of an update without its condition: DynamoDB refuses a name the expressions do not use. */
export function withoutKeyName({ '#pk': _, ...names }: Record<string, string>): Record<string, string> {
  return names;
}

/** The heads of these keys that exist, 100 a request. */
export async function readHeads(
  client: DynamoDBClient,
  tableName: string,
  routeKeys: readonly string[],
): Promise<Map<string, Item>> {
  const heads = new Map<string, Item>();
  for (let start = 0; start < routeKeys.length; start += BATCH_GET_LIMIT) {
    let pending: Item[] = routeKeys.slice(start, start + BATCH_GET_LIMIT).map(headKey);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt === ATTEMPTS)
        throw new Error(`route index: ${pending.length} heads still unread after ${attempt} attempts`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      const page = await client.send(
        new BatchGetItemCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }),
      );
      for (const item of page.Responses?.[tableName] ?? []) heads.set(item[ROUTE_KEY]?.S ?? '', item);
      pending = page.UnprocessedKeys?.[tableName]?.Keys ?? [];
    }
  }
  return heads;
}

/** A conditional write's outcome; a head too large for an item is `too large` (it overflows). */
export async function writeOutcome(
  client: DynamoDBClient,
  command: UpdateItemCommand | PutItemCommand,
): Promise<'written' | 'condition failed' | 'too large'> {
  try {
    await client.send(command as UpdateItemCommand);
    return 'written';
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return 'condition failed';
    if (error instanceof Error && error.name === 'ValidationException' && /size/i.test(error.message))
      return 'too large';
    throw error;
  }
}

export async function headOverflowed(client: DynamoDBClient, tableName: string, routeKey: string): Promise<boolean> {
  const head = (
    await client.send(new GetItemCommand({ TableName: tableName, Key: headKey(routeKey), ConsistentRead: true }))
  ).Item;
  return head?.['overflow']?.BOOL === true;
}
