/**
 * Subscriptions in DynamoDB (`subscriptions` table, `byOwner` index for listing), with the route
 * index kept in step: a routable subscription has exactly the entries `routeEntriesOf` gives it.
 *
 * No transactions (dynalite has none), so the order of writes is chosen for what a crash leaves:
 * the index is changed first, the record second. A crash in between leaves either entries of a
 * subscription that is not (yet) routable — the delivery function sends only to `active`
 * subscriptions, so those deliveries are dropped — or a routable record missing entries, which
 * only happens while the API call that caused it fails and is retried. A lost race (version
 * conflict) puts the index back in line with the record that won.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { systemClock, type Clock } from '../core/ports/clock.js';
import { routeCandidateOf } from '../core/routing/matcher.js';
import { routeEntriesOf, type RouteEntry } from '../core/routing/route-keys.js';
import {
  SubscriptionConflictError,
  updateStatusVia,
  type SubscriptionDraft,
  type SubscriptionPage,
  type SubscriptionStore,
} from '../core/subscriptions/store.js';
import {
  isRoutable,
  type Subscription,
  type SubscriptionStatus,
  type SuspensionCause,
} from '../core/subscriptions/subscription.js';
import type { DynamoDbRouteIndex } from './dynamodb-route-index.js';
import {
  BY_OWNER,
  decodeCursor,
  decodeScanCursor,
  encodeCursor,
  ID,
  itemOf,
  MAX_SUBSCRIPTION_ID_BYTES,
  OWNER_KEY,
  ownerKeyOf,
  subscriptionOf,
} from './subscription-table-items.js';

export class DynamoDbSubscriptionStore implements SubscriptionStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly routes: DynamoDbRouteIndex,
    private readonly clock: Clock = systemClock,
  ) {}

  async get(id: string): Promise<Subscription | undefined> {
    // An id from a URL path that could not be a key names no subscription (and must not become a 500).
    if (id.length === 0 || Buffer.byteLength(id) > MAX_SUBSCRIPTION_ID_BYTES) return undefined;
    const result = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: { [ID]: { S: id } }, ConsistentRead: true }),
    );
    return result.Item && subscriptionOf(result.Item);
  }

  async create(draft: SubscriptionDraft): Promise<Subscription> {
    const entries = entriesFor(draft);
    await this.routes.putEntries(routeCandidateOf(draft), entries);
    await this.keepKeyRequirement(draft, entries, false);
    const subscription: Subscription = { ...draft, routeKeys: entries.map((e) => e.routeKey), version: 1 };
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: itemOf(subscription),
          ConditionExpression: 'attribute_not_exists(#id)',
          ExpressionAttributeNames: { '#id': ID },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException)
        throw new SubscriptionConflictError(`subscription ${draft.id} exists`);
      throw error;
    }
    if (entries.length > 0) await this.routes.bumpGeneration();
    return subscription;
  }

  async save(draft: SubscriptionDraft, previous: Subscription): Promise<Subscription> {
    const entries = entriesFor(draft);
    const keys = entries.map((e) => e.routeKey);
    const removed = previous.routeKeys.filter((key) => !keys.includes(key));
    await this.routes.putEntries(routeCandidateOf(draft), entries);
    await this.routes.removeEntries(previous.id, removed);
    await this.keepKeyRequirement({ ...draft, id: previous.id }, entries, refusesWithoutKey(previous));
    const subscription: Subscription = { ...draft, id: previous.id, routeKeys: keys, version: previous.version + 1 };
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: itemOf(subscription),
          ConditionExpression: '#version = :expected',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':expected': { N: String(previous.version) } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      await this.realignIndex(previous.id, keys);
      throw new SubscriptionConflictError(`subscription ${previous.id} changed meanwhile`);
    }
    if (entries.length > 0 || removed.length > 0) await this.routes.bumpGeneration();
    return subscription;
  }

  async delete(previous: Subscription): Promise<void> {
    await this.routes.removeEntries(previous.id, previous.routeKeys);
    if (refusesWithoutKey(previous)) await this.routes.unlistKeyRequirement(previous.id);
    try {
      await this.client.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: { [ID]: { S: previous.id } },
          ConditionExpression: '#version = :expected',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':expected': { N: String(previous.version) } },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      await this.realignIndex(previous.id, []);
      throw new SubscriptionConflictError(`subscription ${previous.id} changed meanwhile`);
    }
    if (previous.routeKeys.length > 0) await this.routes.bumpGeneration();
  }

  async listByOwner(owner: string, page: { limit: number; cursor?: string | undefined }): Promise<SubscriptionPage> {
    const startKey = page.cursor === undefined ? undefined : decodeCursor(page.cursor, owner);
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: BY_OWNER.name,
        KeyConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': OWNER_KEY },
        ExpressionAttributeValues: { ':owner': { S: ownerKeyOf(owner) } },
        Limit: page.limit,
        ExclusiveStartKey: startKey,
      }),
    );
    const items = (result.Items ?? []).map(subscriptionOf);
    // DynamoDB may hand back a last key with nothing after it; an empty last page is harmless.
    return { items, cursor: result.LastEvaluatedKey && encodeCursor(result.LastEvaluatedKey) };
  }

  async listAll(page: { limit: number; cursor?: string | undefined }): Promise<SubscriptionPage> {
    const startKey = page.cursor === undefined ? undefined : decodeScanCursor(page.cursor);
    const result = await this.client.send(
      new ScanCommand({ TableName: this.tableName, Limit: page.limit, ExclusiveStartKey: startKey }),
    );
    return {
      items: (result.Items ?? []).map(subscriptionOf),
      cursor: result.LastEvaluatedKey && encodeCursor(result.LastEvaluatedKey),
    };
  }

  async updateStatus(
    id: string,
    status: SubscriptionStatus,
    reason: string | undefined,
    expectedVersion?: number,
    suspendedFor?: SuspensionCause,
  ): Promise<Subscription | undefined> {
    return updateStatusVia(this, this.clock(), id, { status, reason, expectedVersion, suspendedFor });
  }

  /**
   * The ingest's list of ordered subscriptions that refuse events without their key (issue 33,
   * ORD-1; functions/aws/dynamodb-route-index.ts, `#key-required`), changed with the entries and
   * before the record, as they are: listed while routable with `withoutKey: refuse`, taken off when
   * it was listed and no longer is. Other subscriptions cost no write.
   */
  private async keepKeyRequirement(
    draft: SubscriptionDraft,
    entries: readonly RouteEntry[],
    wasListed: boolean,
  ): Promise<void> {
    const listed = entries.length > 0 && draft.ordering?.withoutKey === 'refuse';
    if (listed) await this.routes.listKeyRequirement(routeCandidateOf(draft));
    else if (wasListed) await this.routes.unlistKeyRequirement(draft.id);
  }

  /** After a lost race: the index as the winning record says, minus what the loser added. */
  private async realignIndex(id: string, attemptedKeys: readonly string[]): Promise<void> {
    const winner = await this.get(id);
    const keep = winner?.routeKeys ?? [];
    if (winner && keep.length > 0) await this.routes.putEntries(routeCandidateOf(winner), entriesFor(winner));
    // The loser may have listed or unlisted it: the winner's record decides.
    if (winner && keep.length > 0 && refusesWithoutKey(winner))
      await this.routes.listKeyRequirement(routeCandidateOf(winner));
    else await this.routes.unlistKeyRequirement(id);
    await this.routes.removeEntries(
      id,
      attemptedKeys.filter((key) => !keep.includes(key)),
    );
    await this.routes.bumpGeneration();
  }
}

/** Whether the stored record is on the ingest's list: routable (it has entries) and refusing keyless events. */
function refusesWithoutKey(subscription: Subscription): boolean {
  return subscription.routeKeys.length > 0 && subscription.ordering?.withoutKey === 'refuse';
}

function entriesFor(subscription: SubscriptionDraft): RouteEntry[] {
  return isRoutable(subscription.status) ? routeEntriesOf(subscription) : [];
}
