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
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { tables } from '../../lib/resources.js';
import { DYNAMODB_LIMITS } from '../core/ids/bounded-key.js';
import type { RouteCandidate } from '../core/routing/matcher.js';
import { routeEntriesOf, type RouteEntry } from '../core/routing/route-keys.js';
import type { Filter } from '../core/subscriptions/filters.js';
import { InvalidCursorError, SubscriptionConflictError, type SubscriptionDraft, type SubscriptionPage, type SubscriptionStore } from '../core/subscriptions/store.js';
import { isRoutable, type Subscription, type SubscriptionStatus, type SuspensionCause } from '../core/subscriptions/subscription.js';
import type { RouteIndexRepository } from './route-index-repository.js';

type Item = Record<string, AttributeValue>;

const ID = tables.subscriptions.partitionKey.name;
const BY_OWNER = tables.subscriptions.globalIndexes[0];
const OWNER_KEY = BY_OWNER.partitionKey.name;
const CREATED_AT = BY_OWNER.sortKey.name;
/** Where the owner's client id is kept when `owner`, the index key, holds its hash. */
const OWNER_ID = 'ownerId';
const HASHED_OWNER = '#sha256=';

/**
 * Subscription ids Koerier makes are UUIDs (`subscriptionIdOf`); an id is also the route index's
 * sort key (1,024 bytes at most), so a longer one cannot name a subscription.
 */
export const MAX_SUBSCRIPTION_ID_BYTES = DYNAMODB_LIMITS.sortKeyBytes;
/** What a cursor may measure: base64url of the largest key (a 2,048-byte owner, a 1,024-byte id, a time) fits. */
const MAX_CURSOR_LENGTH = 6 * 1024;
/** `createdAt` as Koerier writes it (`Date.toISOString`). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/**
 * The `byOwner` index key for a client id. A client id comes from a token and may be long; an
 * index key holds at most 2,048 bytes (DynamoDB refuses the write beyond; dynalite does not check
 * index keys). So an id that does not fit — or that starts like a hashed one, which keeps the two
 * forms apart — is stored as its SHA-256, with the id itself in `ownerId`.
 */
export function ownerKeyOf(owner: string): string {
  if (Buffer.byteLength(owner) <= DYNAMODB_LIMITS.partitionKeyBytes && !owner.startsWith(HASHED_OWNER)) return owner;
  return `${HASHED_OWNER}${createHash('sha256').update(owner).digest('base64url')}`;
}

export class SubscriptionRepository implements SubscriptionStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly routes: RouteIndexRepository,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async get(id: string): Promise<Subscription | undefined> {
    // An id from a URL path that could not be a key names no subscription (and must not become a 500).
    if (id.length === 0 || Buffer.byteLength(id) > MAX_SUBSCRIPTION_ID_BYTES) return undefined;
    const result = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: { [ID]: { S: id } }, ConsistentRead: true }));
    return result.Item && subscriptionOf(result.Item);
  }

  async create(draft: SubscriptionDraft): Promise<Subscription> {
    const entries = entriesFor(draft);
    await this.routes.putEntries(indexed(draft), entries);
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
      if (error instanceof ConditionalCheckFailedException) throw new SubscriptionConflictError(`subscription ${draft.id} exists`);
      throw error;
    }
    if (entries.length > 0) await this.routes.bumpGeneration();
    return subscription;
  }

  async save(draft: SubscriptionDraft, previous: Subscription): Promise<Subscription> {
    const entries = entriesFor(draft);
    const keys = entries.map((e) => e.routeKey);
    const removed = previous.routeKeys.filter((key) => !keys.includes(key));
    await this.routes.putEntries(indexed(draft), entries);
    await this.routes.removeEntries(previous.id, removed);
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

  async listByOwner(owner: string, page: { limit: number; cursor?: string }): Promise<SubscriptionPage> {
    const startKey = page.cursor === undefined ? undefined : decodeCursor(page.cursor, owner);
    const result = await this.client.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: BY_OWNER.name,
        KeyConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': OWNER_KEY },
        ExpressionAttributeValues: { ':owner': { S: ownerKeyOf(owner) } },
        Limit: page.limit,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    const items = (result.Items ?? []).map(subscriptionOf);
    // DynamoDB may hand back a last key with nothing after it; an empty last page is harmless.
    return { items, ...(result.LastEvaluatedKey ? { cursor: encodeCursor(result.LastEvaluatedKey) } : {}) };
  }

  async updateStatus(id: string, status: SubscriptionStatus, reason: string | undefined, expectedVersion?: number, suspendedFor?: SuspensionCause): Promise<Subscription | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    if (expectedVersion !== undefined && current.version !== expectedVersion) {
      throw new SubscriptionConflictError(`subscription ${id} is at version ${current.version}, not ${expectedVersion}`);
    }
    const { routeKeys: _routeKeys, version: _version, statusReason: _reason, suspendedFor: _cause, ...rest } = current;
    return this.save(
      {
        ...rest,
        status,
        ...(reason === undefined ? {} : { statusReason: reason }),
        ...(status === 'suspended' && suspendedFor !== undefined ? { suspendedFor } : {}),
        updatedAt: this.clock().toISOString(),
      },
      current,
    );
  }

  /** After a lost race: the index as the winning record says, minus what the loser added. */
  private async realignIndex(id: string, attemptedKeys: readonly string[]): Promise<void> {
    const winner = await this.get(id);
    const keep = winner?.routeKeys ?? [];
    if (winner && keep.length > 0) await this.routes.putEntries(indexed(winner), entriesFor(winner));
    await this.routes.removeEntries(id, attemptedKeys.filter((key) => !keep.includes(key)));
    await this.routes.bumpGeneration();
  }
}

function entriesFor(subscription: SubscriptionDraft): RouteEntry[] {
  return isRoutable(subscription.status) ? routeEntriesOf(subscription) : [];
}

function indexed(subscription: SubscriptionDraft): RouteCandidate {
  return {
    subscriptionId: subscription.id,
    owner: subscription.owner,
    match: {
      ...(subscription.source === undefined ? {} : { source: subscription.source }),
      ...(subscription.types === undefined ? {} : { types: subscription.types }),
      ...(subscription.filters === undefined ? {} : { filters: subscription.filters }),
    },
    contentMode: subscription.contentMode,
    batchSupported: subscription.batchSupported,
  };
}

function itemOf(s: Subscription): Item {
  const item: Item = {
    [ID]: { S: s.id },
    [OWNER_KEY]: { S: ownerKeyOf(s.owner) },
    sink: { S: s.sink },
    delivery: { S: s.delivery },
    contentMode: { S: s.contentMode },
    batchSupported: { BOOL: s.batchSupported },
    validation: { S: s.validation },
    status: { S: s.status },
    routeKeys: { L: s.routeKeys.map((key) => ({ S: key })) },
    createdAt: { S: s.createdAt },
    updatedAt: { S: s.updatedAt },
    version: { N: String(s.version) },
  };
  if (item[OWNER_KEY]!.S !== s.owner) item[OWNER_ID] = { S: s.owner };
  if (s.source !== undefined) item['source'] = { S: s.source };
  if (s.types !== undefined) item['types'] = { L: s.types.map((type) => ({ S: type })) };
  if (s.filters !== undefined) item['filters'] = { S: JSON.stringify(s.filters) };
  if (s.credential !== undefined) item['credential'] = { M: { kind: { S: s.credential.kind }, ciphertext: { S: s.credential.ciphertext } } };
  if (s.statusReason !== undefined) item['statusReason'] = { S: s.statusReason };
  if (s.suspendedFor !== undefined) item['suspendedFor'] = { S: s.suspendedFor };
  if (s.allowedRatePerMinute !== undefined) item['allowedRatePerMinute'] = { N: String(s.allowedRatePerMinute) };
  if (s.retryWindowSeconds !== undefined) item['retryWindowSeconds'] = { N: String(s.retryWindowSeconds) };
  if (s.validationTokenHash !== undefined) item['validationTokenHash'] = { S: s.validationTokenHash };
  if (s.validationExpiresAt !== undefined) item['validationExpiresAt'] = { S: s.validationExpiresAt };
  return item;
}

function subscriptionOf(item: Item): Subscription {
  const text = (name: string) => item[name]?.S;
  const number = (name: string) => (item[name]?.N === undefined ? undefined : Number(item[name]!.N));
  const credential = item['credential']?.M;
  const optional = {
    source: text('source'),
    types: item['types']?.L?.map((value) => value.S ?? ''),
    filters: text('filters') === undefined ? undefined : (JSON.parse(text('filters')!) as Filter[]),
    credential: credential && { kind: credential['kind']?.S as NonNullable<Subscription['credential']>['kind'], ciphertext: credential['ciphertext']?.S ?? '' },
    statusReason: text('statusReason'),
    suspendedFor: text('suspendedFor') as SuspensionCause | undefined,
    allowedRatePerMinute: number('allowedRatePerMinute'),
    retryWindowSeconds: number('retryWindowSeconds'),
    validationTokenHash: text('validationTokenHash'),
    validationExpiresAt: text('validationExpiresAt'),
  };
  return {
    id: text(ID) ?? '',
    owner: text(OWNER_ID) ?? text(OWNER_KEY) ?? '',
    sink: text('sink') ?? '',
    delivery: 'push',
    contentMode: (text('contentMode') ?? 'structured') as Subscription['contentMode'],
    batchSupported: item['batchSupported']?.BOOL === true,
    validation: (text('validation') ?? 'handshake') as Subscription['validation'],
    status: (text('status') ?? 'pending') as SubscriptionStatus,
    routeKeys: item['routeKeys']?.L?.map((value) => value.S ?? '') ?? [],
    createdAt: text('createdAt') ?? '',
    updatedAt: text('updatedAt') ?? '',
    version: number('version') ?? 0,
    ...(Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)) as Partial<Subscription>),
  };
}

/** The owner travels inside the cursor so a cursor can never page through another client's list. */
function encodeCursor(key: Item): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/**
 * A cursor is the `byOwner` query's last key, handed back as it was: exactly the index and table
 * keys (`owner`, `createdAt`, `id`), each a string, of this owner's partition and within the key
 * limits. Anything else — garbage, other JSON, another owner, an oversized or extra attribute —
 * is refused here, before DynamoDB would answer a ValidationException (a 500) (issue 8, item 10).
 */
function decodeCursor(cursor: string, owner: string): Item {
  if (cursor.length <= MAX_CURSOR_LENGTH) {
    try {
      const key: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      if (isCursorOf(key, ownerKeyOf(owner))) return key;
    } catch {
      // falls through to the error below
    }
  }
  throw new InvalidCursorError('the cursor is not one this list handed out');
}

function isCursorOf(key: unknown, ownerKey: string): key is Item {
  if (typeof key !== 'object' || key === null || Array.isArray(key)) return false;
  const names = Object.keys(key).sort();
  if (names.join(',') !== [CREATED_AT, ID, OWNER_KEY].sort().join(',')) return false;
  const text = (name: string): string | undefined => {
    const value: unknown = (key as Record<string, unknown>)[name];
    if (typeof value !== 'object' || value === null || Object.keys(value).join() !== 'S') return undefined;
    const s: unknown = (value as { S: unknown }).S;
    return typeof s === 'string' ? s : undefined;
  };
  const id = text(ID);
  const createdAt = text(CREATED_AT);
  return (
    text(OWNER_KEY) === ownerKey &&
    id !== undefined &&
    id.length > 0 &&
    Buffer.byteLength(id) <= MAX_SUBSCRIPTION_ID_BYTES &&
    createdAt !== undefined &&
    ISO_INSTANT.test(createdAt)
  );
}
