/**
 * The routed-event ledger read back (issue 30 item 1): one event's marker, with its commit's routes,
 * for the event trace; and which events of a publish request were accepted before, for the ingest's
 * `duplicate` — one BatchGetItem per hundred events, markers only.
 */
import { BatchGetItemCommand, type DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { routedEventKey, type EventIdentity } from '../core/routing/routed-events.js';
import type { RoutedEventReader, RoutedEventRecord } from '../core/trace/routed-event-records.js';
import {
  acceptanceFromJson,
  acceptanceOf,
  MARKER_KEY,
  MARKER_TTL,
  routingOf,
  type Item,
} from './routed-event-items.js';

/** DynamoDB's most keys per BatchGetItem. */
const BATCH_GET_KEYS = 100;

export class DynamoDbRoutedEventRecords implements RoutedEventReader {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async read(event: EventIdentity, now: number): Promise<RoutedEventRecord | undefined> {
    const marker = await this.get(routedEventKey(event));
    if (marker === undefined || expired(marker, now)) return undefined;
    const claimId = marker['claimId']?.S;
    const commitName = marker['commit']?.S;
    let routed = marker['state']?.S === 'routed';
    let routes = marker['routes'];
    if (!routed && commitName !== undefined && claimId !== undefined) {
      // Marked routed by its batch's commit: the commit lists the claim and keeps where it went.
      const commit = await this.get(commitName);
      routed = commit?.['claims']?.SS?.includes(claimId) === true;
      if (routed) routes = commit?.['routes']?.M?.[claimId];
    }
    const acceptance = acceptanceOf(marker);
    const routing = routed ? routingOf(routes) : undefined;
    const duplicateCount = Number(marker['duplicateCount']?.N ?? 0);
    const latest = acceptanceFromJson(marker['latestDuplicate']);
    return {
      state: routed ? 'routed' : 'routing',
      ...(acceptance ? { acceptance } : {}),
      ...(routing ? { routing } : {}),
      ...(duplicateCount > 0 ? { duplicates: { count: duplicateCount, ...(latest ? { latest } : {}) } } : {}),
    };
  }

  async acceptedAmong(events: readonly EventIdentity[], now: number): Promise<ReadonlySet<string>> {
    const wanted = [...new Set(events.map(routedEventKey))];
    const seen = new Set<string>();
    for (let offset = 0; offset < wanted.length; offset += BATCH_GET_KEYS) {
      const keys = wanted.slice(offset, offset + BATCH_GET_KEYS).map((key) => ({ [MARKER_KEY]: { S: key } }));
      // Eventually consistent, markers' keys and expiry only: half the read units, and a marker a
      // moment old may be missed, which the best-effort answer allows. Unprocessed keys are not retried.
      const result = await this.client.send(
        new BatchGetItemCommand({
          RequestItems: {
            [this.tableName]: {
              Keys: keys,
              ProjectionExpression: '#pk, #ttl',
              ExpressionAttributeNames: { '#pk': MARKER_KEY, '#ttl': MARKER_TTL },
            },
          },
        }),
      );
      for (const item of result.Responses?.[this.tableName] ?? []) {
        const key = item[MARKER_KEY]?.S;
        if (key !== undefined && !expired(item, now)) seen.add(key);
      }
    }
    return seen;
  }

  private async get(key: string): Promise<Item | undefined> {
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: { [MARKER_KEY]: { S: key } }, ConsistentRead: true }),
    );
    return result.Item;
  }
}

/** dynalite never deletes expired items, and DynamoDB's TTL deletes them late: past the window is absent. */
function expired(item: Item, now: number): boolean {
  const ttl = item[MARKER_TTL]?.N;
  return ttl !== undefined && Number(ttl) < Math.floor(now / 1000);
}
