/**
 * The route index in DynamoDB (`routes` table). The routed-event markers live in the idempotency
 * table: see `dynamodb-routed-event-ledger.ts`.
 *
 * Route index items:
 * - one per (route key, subscription): `routeKey`, `subscriptionId`, and what the router needs to
 *   decide and shape the delivery (`owner`, `match` as JSON, `contentMode`, `batchSupported`);
 * - the `#meta` partition: the `#generation` counter, increased after every change, and one
 *   `shape:<shape>` item per route key shape ever used. In this partition the sort key attribute
 *   holds those names rather than a subscription id. Shapes are never removed: a stale one costs
 *   an empty lookup, a missing one would lose events.
 *
 * The router reads `#meta` once per batch and one partition per route key of an event; all reads
 * are strongly consistent, so what was written before an event was accepted is seen for it.
 */
import { PutItemCommand, QueryCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { tables } from '../../lib/resources.js';
import { batchWriteAll } from './dynamodb-batch-write.js';
import type { RouteCandidate, RouteIndexReader, RouteIndexState } from '../core/routing/matcher.js';
import type { RouteEntry, SubscriptionMatch } from '../core/routing/route-keys.js';
import type { ContentMode } from '../core/cloudevents/index.js';

type Item = Record<string, AttributeValue>;

const ROUTE_KEY = tables.routes.partitionKey.name;
const SORT_KEY = tables.routes.sortKey.name;
const META = '#meta';
const GENERATION = '#generation';
const SHAPE_PREFIX = 'shape:';

export class DynamoDbRouteIndex implements RouteIndexReader {
  /** Shapes this container already registered; registering is idempotent, this only saves writes. */
  private readonly registeredShapes = new Set<string>();

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async readState(): Promise<RouteIndexState> {
    let generation = 0;
    const shapes: string[] = [];
    for await (const item of this.query(META)) {
      const name = item[SORT_KEY]?.S ?? '';
      if (name === GENERATION) generation = Number(item['generation']?.N ?? 0);
      else if (name.startsWith(SHAPE_PREFIX)) shapes.push(name.slice(SHAPE_PREFIX.length));
    }
    return { generation, shapes };
  }

  async candidates(routeKey: string): Promise<RouteCandidate[]> {
    const candidates: RouteCandidate[] = [];
    for await (const item of this.query(routeKey)) {
      candidates.push({
        subscriptionId: item[SORT_KEY]?.S ?? '',
        owner: item['owner']?.S ?? '',
        match: JSON.parse(item['match']?.S ?? '{}') as SubscriptionMatch,
        contentMode: (item['contentMode']?.S ?? 'structured') as ContentMode,
        batchSupported: item['batchSupported']?.BOOL === true,
        // Absent on entries written before pull delivery existed: those are push.
        delivery: item['delivery']?.S === 'pull' ? 'pull' : 'push',
      });
    }
    return candidates;
  }

  /** Writes (or rewrites) the subscription's entries; registers their shapes first. */
  putEntries(subscription: RouteCandidate, entries: readonly RouteEntry[]): Promise<void> {
    return this.putEntriesOfMany([{ subscription, entries }]);
  }

  /** `putEntries` for many subscriptions at once, 25 items per request (bulk loads). */
  async putEntriesOfMany(list: readonly { subscription: RouteCandidate; entries: readonly RouteEntry[] }[]): Promise<void> {
    for (const shape of new Set(list.flatMap(({ entries }) => entries.map((entry) => entry.shape)))) await this.registerShape(shape);
    const requests = list.flatMap(({ subscription, entries }) => {
      const attributes: Item = {
        [SORT_KEY]: { S: subscription.subscriptionId },
        owner: { S: subscription.owner },
        match: { S: JSON.stringify(subscription.match) },
        contentMode: { S: subscription.contentMode },
        batchSupported: { BOOL: subscription.batchSupported },
        delivery: { S: subscription.delivery },
      };
      return entries.map((entry): WriteRequest => ({ PutRequest: { Item: { [ROUTE_KEY]: { S: entry.routeKey }, ...attributes } } }));
    });
    await this.batchWrite(requests);
  }

  async removeEntries(subscriptionId: string, routeKeys: readonly string[]): Promise<void> {
    await this.batchWrite(routeKeys.map((routeKey) => ({ DeleteRequest: { Key: { [ROUTE_KEY]: { S: routeKey }, [SORT_KEY]: { S: subscriptionId } } } })));
  }

  /** Tells every router that cached candidates may be stale. Call after the entries changed. */
  async bumpGeneration(): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: { [ROUTE_KEY]: { S: META }, [SORT_KEY]: { S: GENERATION } },
        UpdateExpression: 'ADD generation :one',
        ExpressionAttributeValues: { ':one': { N: '1' } },
      }),
    );
  }

  private async registerShape(shape: string): Promise<void> {
    if (this.registeredShapes.has(shape)) return;
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: { [ROUTE_KEY]: { S: META }, [SORT_KEY]: { S: `${SHAPE_PREFIX}${shape}` } } }));
    this.registeredShapes.add(shape);
  }

  private async *query(routeKey: string): AsyncGenerator<Item> {
    let startKey: Item | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': ROUTE_KEY },
          ExpressionAttributeValues: { ':pk': { S: routeKey } },
          ConsistentRead: true,
          ExclusiveStartKey: startKey,
        }),
      );
      yield* page.Items ?? [];
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }

  private batchWrite(requests: readonly WriteRequest[]): Promise<void> {
    return batchWriteAll(this.client, this.tableName, requests, 'route index');
  }
}
