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
 * - per route key a *head* (sort key `#head`) holding every candidate of the key inline, one
 *   attribute `c:<subscriptionId>` each, so the router reads the keys of a whole batch of events
 *   with BatchGetItem (100 keys a request) instead of one Query per key. A head that would pass
 *   DynamoDB's 400 KB item limit is marked `overflow`: for that key the router queries the
 *   partition's per-subscription items, which are always written too.
 * - `#meta`/`#layout`: present when every key with entries has a head (the index was empty when
 *   heads came). Then a key without a head is empty, and the router need
 *   not query it; without it, a key without a head is queried, as before heads existed.
 *
 * - `#key-required`: one item per routable ordered subscription whose `withoutKey` is `refuse`
 *   (issue 33, ORD-1), shaped as a per-subscription item, so the ingest reads them all in one
 *   Query (`keyRequiringSubscriptions`, cached per container: core/ingest/ordering-key-requirements.ts).
 *   The subscription store keeps it in step with the entries.
 *
 * The router reads `#meta` once per batch and the heads of the batch's keys; all reads are strongly
 * consistent, so what was written before an event was accepted is seen for it. A writer changes
 * the per-subscription items, then the heads, then the generation.
 */
import {
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { batchWriteAll } from './dynamodb-batch-write.js';
import type { RouteCandidate, RouteIndexReader, RouteIndexState } from '../core/routing/matcher.js';
import type { RouteEntry } from '../core/routing/route-keys.js';
import {
  headOverflowed,
  readHeads,
  withoutKeyName,
  writeOutcome,
  CANDIDATE_PREFIX,
  HEAD,
  headKey,
  inlineCandidates,
  itemOf,
  ROUTE_KEY,
  SORT_KEY,
  storedOf,
  storedPart,
  type Item,
} from './route-index-items.js';

const META = '#meta';
const GENERATION = '#generation';
const SHAPE_PREFIX = 'shape:';
const LAYOUT = '#layout';
const KEY_REQUIRED = '#key-required';
/** How often a head write is tried when other writers keep changing it. */
const ATTEMPTS = 5;
const HEAD_WRITES_AT_ONCE = 16;
/** An imported head above this (DynamoDB's item limit less a margin) is written as overflowed. */
const IMPORTED_HEAD_BYTES = 350 * 1024;

export class DynamoDbRouteIndex implements RouteIndexReader {
  /** Shapes this container already registered; registering is idempotent, this only saves writes. */
  private readonly registeredShapes = new Set<string>();
  /** From the last `readState`: whether a key without a head is known to be empty. */
  private everyKeyHasAHead = false;
  /** Seen by this container as a writer: `#layout` is present (it is never removed). */
  private layoutMarked = false;

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async readState(): Promise<RouteIndexState> {
    let generation = 0;
    let layout = false;
    const shapes: string[] = [];
    for await (const item of this.query(META)) {
      const name = item[SORT_KEY]?.S ?? '';
      if (name === GENERATION) generation = Number(item['generation']?.N ?? 0);
      else if (name === LAYOUT) layout = true;
      else if (name.startsWith(SHAPE_PREFIX)) shapes.push(name.slice(SHAPE_PREFIX.length));
    }
    this.everyKeyHasAHead = layout;
    return { generation, shapes };
  }

  /** The per-subscription items of one key (one Query). */
  async candidates(routeKey: string): Promise<RouteCandidate[]> {
    const candidates: RouteCandidate[] = [];
    for await (const item of this.query(routeKey)) {
      if (item[SORT_KEY]?.S !== HEAD) candidates.push({ subscriptionId: item[SORT_KEY]?.S ?? '', ...storedOf(item) });
    }
    return candidates;
  }

  /** The heads of all these keys, 100 a request; a key whose head overflowed (or is missing, see `#layout`) is queried. */
  async candidatesOfKeys(routeKeys: readonly string[]): Promise<ReadonlyMap<string, RouteCandidate[]>> {
    const heads = await readHeads(this.client, this.tableName, routeKeys);
    const found = new Map<string, RouteCandidate[]>();
    await Promise.all(
      routeKeys.map(async (routeKey) => {
        const head = heads.get(routeKey);
        if (head && head['overflow']?.BOOL !== true) found.set(routeKey, inlineCandidates(head));
        else if (!head && this.everyKeyHasAHead) found.set(routeKey, []);
        else found.set(routeKey, await this.candidates(routeKey));
      }),
    );
    return found;
  }

  /** The routable ordered subscriptions that refuse events without their key (one Query, usually of an empty partition). */
  async keyRequiringSubscriptions(): Promise<RouteCandidate[]> {
    const candidates: RouteCandidate[] = [];
    for await (const item of this.query(KEY_REQUIRED))
      candidates.push({ subscriptionId: item[SORT_KEY]?.S ?? '', ...storedOf(item) });
    return candidates;
  }

  /** Puts the subscription on the ingest's list of those that refuse events without their key (or rewrites it there). */
  async listKeyRequirement(subscription: RouteCandidate): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...keyRequirementKey(subscription.subscriptionId), ...itemOf(subscription) },
      }),
    );
  }

  /** Takes the subscription off that list (nothing when it is not on it). */
  async unlistKeyRequirement(subscriptionId: string): Promise<void> {
    await this.client.send(
      new DeleteItemCommand({ TableName: this.tableName, Key: keyRequirementKey(subscriptionId) }),
    );
  }

  /** Writes (or rewrites) the subscription's entries; registers their shapes first. */
  putEntries(subscription: RouteCandidate, entries: readonly RouteEntry[]): Promise<void> {
    return this.putEntriesOfMany([{ subscription, entries }]);
  }

  /**
   * `putEntries` for many subscriptions at once: the per-subscription items 25 a request, then
   * each key's head.
   */
  async putEntriesOfMany(
    list: readonly { subscription: RouteCandidate; entries: readonly RouteEntry[] }[],
  ): Promise<void> {
    await this.markLayoutIfEmpty();
    for (const shape of new Set(list.flatMap(({ entries }) => entries.map((entry) => entry.shape))))
      await this.registerShape(shape);
    const byKey = new Map<string, RouteCandidate[]>();
    const requests = list.flatMap(({ subscription, entries }) => {
      const attributes: Item = { [SORT_KEY]: { S: subscription.subscriptionId }, ...itemOf(subscription) };
      for (const entry of entries) byKey.set(entry.routeKey, [...(byKey.get(entry.routeKey) ?? []), subscription]);
      return entries.map((entry): WriteRequest => ({
        PutRequest: { Item: { [ROUTE_KEY]: { S: entry.routeKey }, ...attributes } },
      }));
    });
    await this.batchWrite(requests);
    const heads = [...byKey];
    for (let start = 0; start < heads.length; start += HEAD_WRITES_AT_ONCE) {
      await Promise.all(
        heads
          .slice(start, start + HEAD_WRITES_AT_ONCE)
          .map(([routeKey, candidates]) => this.addToHead(routeKey, candidates)),
      );
    }
  }

  /**
   * A bulk import, for keys no other writer changes meanwhile (a migration, a benchmark's load):
   * each key's head is read, merged with this call's candidates and written whole, 25 a request,
   * where `putEntriesOfMany` updates each head on its own. On an index without `#layout` it is
   * `putEntriesOfMany`.
   */
  async importEntries(
    list: readonly { subscription: RouteCandidate; entries: readonly RouteEntry[] }[],
  ): Promise<void> {
    await this.markLayoutIfEmpty();
    if (!this.layoutMarked) return this.putEntriesOfMany(list);
    for (const shape of new Set(list.flatMap(({ entries }) => entries.map((entry) => entry.shape))))
      await this.registerShape(shape);
    const byKey = new Map<string, Item>();
    const entries = list.flatMap(({ subscription, entries }) => {
      for (const { routeKey } of entries) {
        const head = byKey.get(routeKey) ?? {};
        byKey.set(routeKey, {
          ...head,
          [`${CANDIDATE_PREFIX}${subscription.subscriptionId}`]: { S: JSON.stringify(storedPart(subscription)) },
        });
      }
      const attributes: Item = { [SORT_KEY]: { S: subscription.subscriptionId }, ...itemOf(subscription) };
      return entries.map((entry): WriteRequest => ({
        PutRequest: { Item: { [ROUTE_KEY]: { S: entry.routeKey }, ...attributes } },
      }));
    });
    await this.batchWrite(entries);
    const stored = await readHeads(this.client, this.tableName, [...byKey.keys()]);
    const heads = [...byKey].flatMap(([routeKey, added]): WriteRequest[] => {
      const head = { ...stored.get(routeKey), ...headKey(routeKey), ...added };
      if (head['overflow']?.BOOL === true) return [];
      const large = JSON.stringify(head).length > IMPORTED_HEAD_BYTES;
      return [{ PutRequest: { Item: large ? { ...headKey(routeKey), overflow: { BOOL: true } } : head } }];
    });
    await this.batchWrite(heads);
  }

  async removeEntries(subscriptionId: string, routeKeys: readonly string[]): Promise<void> {
    await this.batchWrite(
      routeKeys.map((routeKey) => ({
        DeleteRequest: { Key: { [ROUTE_KEY]: { S: routeKey }, [SORT_KEY]: { S: subscriptionId } } },
      })),
    );
    for (const routeKey of routeKeys) {
      await writeOutcome(
        this.client,
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: headKey(routeKey),
          UpdateExpression: 'REMOVE #c',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#c': `${CANDIDATE_PREFIX}${subscriptionId}`, '#pk': ROUTE_KEY },
        }),
      );
    }
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

  /**
   * Puts the candidates into the key's head: into the existing one, or a new one holding every
   * per-subscription item of the key (so entries written before heads existed are not lost), or
   * marks it `overflow` when it would not fit an item. Never loses a concurrent writer's candidate:
   * the head is created only where none exists, and otherwise changed one attribute at a time.
   */
  private async addToHead(routeKey: string, candidates: readonly RouteCandidate[]): Promise<void> {
    // Every key with entries has a head: a missing one is created by the update itself, with what
    // this writer adds; a concurrent writer's own update adds its candidate to the same item.
    const unconditional = this.layoutMarked;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const names: Record<string, string> = { '#pk': ROUTE_KEY };
      const values: Item = {};
      candidates.forEach((candidate, i) => {
        names[`#c${i}`] = `${CANDIDATE_PREFIX}${candidate.subscriptionId}`;
        values[`:c${i}`] = { S: JSON.stringify(storedPart(candidate)) };
      });
      const update = new UpdateItemCommand({
        TableName: this.tableName,
        Key: headKey(routeKey),
        UpdateExpression: `SET ${candidates.map((_, i) => `#c${i} = :c${i}`).join(', ')}`,
        ...(unconditional ? {} : { ConditionExpression: 'attribute_exists(#pk) AND attribute_not_exists(overflow)' }),
        ExpressionAttributeNames: unconditional ? withoutKeyName(names) : names,
        ExpressionAttributeValues: values,
      });
      // Unconditional, on an overflowed head the added attributes go unread; once it is full, it stays overflowed.
      const outcome = await writeOutcome(this.client, update);
      if (outcome === 'written') return;
      if (outcome === 'too large') return this.markOverflow(routeKey);
      // No head yet, or an overflowed one: create it from the per-subscription items (ours are among them).
      const inline: Item = {};
      for (const candidate of await this.candidates(routeKey))
        inline[`${CANDIDATE_PREFIX}${candidate.subscriptionId}`] = { S: JSON.stringify(storedPart(candidate)) };
      const create = new PutItemCommand({
        TableName: this.tableName,
        Item: { ...headKey(routeKey), ...inline },
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': ROUTE_KEY },
      });
      const created = await writeOutcome(this.client, create);
      if (created === 'written') return;
      if (created === 'too large') return this.markOverflow(routeKey);
      if (await headOverflowed(this.client, this.tableName, routeKey)) return;
    }
    throw new Error(`route index: the head of ${routeKey} could not be written`);
  }

  /** From now on the key is read from its per-subscription items. Never undone: a stale mark costs a Query. */
  private async markOverflow(routeKey: string): Promise<void> {
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: headKey(routeKey),
        UpdateExpression: 'SET overflow = :true',
        ExpressionAttributeValues: { ':true': { BOOL: true } },
      }),
    );
  }

  /**
   * An empty index (no shape registered, so no entry ever written) gets heads from its first
   * entry on: mark it so, and the router may skip keys without a head. Checked once per container.
   */
  private async markLayoutIfEmpty(): Promise<void> {
    if (this.layoutMarked || this.registeredShapes.size > 0) return;
    let empty = true;
    for await (const item of this.query(META)) {
      if (item[SORT_KEY]?.S === LAYOUT) this.layoutMarked = true;
      else if (item[SORT_KEY]?.S?.startsWith(SHAPE_PREFIX)) empty = false;
    }
    if (this.layoutMarked || !empty) return;
    await this.client.send(
      new PutItemCommand({ TableName: this.tableName, Item: { [ROUTE_KEY]: { S: META }, [SORT_KEY]: { S: LAYOUT } } }),
    );
    this.layoutMarked = true;
  }

  private async registerShape(shape: string): Promise<void> {
    if (this.registeredShapes.has(shape)) return;
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { [ROUTE_KEY]: { S: META }, [SORT_KEY]: { S: `${SHAPE_PREFIX}${shape}` } },
      }),
    );
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

function keyRequirementKey(subscriptionId: string): Item {
  return { [ROUTE_KEY]: { S: KEY_REQUIRED }, [SORT_KEY]: { S: subscriptionId } };
}
