/**
 * The route index's heads against dynalite (functions/aws/dynamodb-route-index.ts, issue 15
 * item 2): a batch's route keys are read together, and what they answer is what the
 * per-subscription items hold — after adds, removals, an overflowed head, and on an index written
 * before heads existed. EDU-8: a subscription active before an event was accepted is found for it;
 * one removed is not.
 */
import { randomUUID } from 'node:crypto';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbRouteIndex } from '../../functions/aws/dynamodb-route-index.js';
import { SubscriptionMatcher, type RouteCandidate } from '../../functions/core/routing/matcher.js';
import { routeEntriesOf, type SubscriptionMatch } from '../../functions/core/routing/route-keys.js';
import { tables } from '../../functions/config/resources.js';
import { eventually } from '../support/waiting.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { countRequests, type RequestCounter } from '../support/request-counter.js';

let emulators: Emulators;
/** What the adapters send with, counted; `tableClient` makes the tables, so its requests are not counted. */
let client: DynamoDBClient;
let tableClient: DynamoDBClient;
let requests: RequestCounter;

beforeAll(async () => {
  emulators = await startEmulators();
  const settings = emulators.clientSettings('dynamodb');
  client = new DynamoDBClient(settings);
  tableClient = new DynamoDBClient(settings);
  requests = countRequests(client);
});

afterAll(async () => {
  client.destroy();
  tableClient.destroy();
  await emulators.stop();
});

/** A fresh, empty routes table per test: the `#layout` mark depends on what the index held. */
async function freshIndex(): Promise<{ index: DynamoDbRouteIndex; table: string }> {
  const table = `routes-${randomUUID()}`;
  const { partitionKey, sortKey } = tables.routes;
  await tableClient.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: partitionKey.name, KeyType: 'HASH' },
        { AttributeName: sortKey.name, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: [
        { AttributeName: partitionKey.name, AttributeType: 'S' },
        { AttributeName: sortKey.name, AttributeType: 'S' },
      ],
    }),
  );
  await eventually(
    'the table to be active',
    async () =>
      (await tableClient.send(new DescribeTableCommand({ TableName: table }))).Table?.TableStatus === 'ACTIVE',
    {
      intervalMs: 10,
    },
  );
  return { index: new DynamoDbRouteIndex(client, table), table };
}

const candidate = (match: SubscriptionMatch, over: Partial<RouteCandidate> = {}): RouteCandidate => ({
  subscriptionId: randomUUID(),
  owner: 'school-a',
  match,
  contentMode: 'structured',
  batchSupported: false,
  delivery: 'push',
  ...over,
});

async function subscribe(index: DynamoDbRouteIndex, subscription: RouteCandidate): Promise<RouteCandidate> {
  await index.putEntries(subscription, routeEntriesOf(subscription.match));
  await index.bumpGeneration();
  return subscription;
}

const TYPE = 'nl.edu.leerling.ingeschreven.v1';
const event = (subject: string) => ({
  specversion: '1.0',
  id: randomUUID(),
  source: 'urn:nld:oin:1:systeem:lvs',
  type: TYPE,
  subject,
});
const ids = (list: readonly { subscriptionId: string }[]) => list.map((c) => c.subscriptionId).sort();

async function matchBatch(index: DynamoDbRouteIndex, events: readonly Record<string, string>[]): Promise<string[][]> {
  const matcher = new SubscriptionMatcher(index);
  await matcher.refresh();
  await matcher.prefetch(events);
  return Promise.all(events.map(async (e) => ids(await matcher.match(e))));
}

describe('route index heads', () => {
  it("EDU-8: a batch of ten events, each of its own person, reads all their route keys in one BatchGetItem and finds each person's subscription", async () => {
    const { index } = await freshIndex();
    const people = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        subscribe(index, candidate({ types: [TYPE], filters: [{ exact: { subject: `leerling/${i}` } }] })),
      ),
    );
    const byType = await subscribe(index, candidate({ types: [TYPE] }));
    const matcher = new SubscriptionMatcher(index);
    await matcher.refresh();
    requests.reset();
    const events = people.map((_, i) => event(`leerling/${i}`));
    await matcher.prefetch(events);
    const found = await Promise.all(events.map(async (e) => ids(await matcher.match(e))));
    expect(requests.byOperation).toEqual({ BatchGetItemCommand: 1 });
    found.forEach((subscriptions, i) =>
      expect(subscriptions).toEqual([people[i]!.subscriptionId, byType.subscriptionId].sort()),
    );
  });

  it('EDU-8: the heads answer what the per-key Query answers, for a key with many subscriptions and for an empty one', async () => {
    const { index } = await freshIndex();
    for (let i = 0; i < 30; i++)
      await subscribe(
        index,
        candidate({ types: [TYPE] }, { owner: `school-${i}`, delivery: i % 2 === 0 ? 'pull' : 'push' }),
      );
    await index.readState();
    const keys = [`eq:type|${encodeURIComponent(TYPE)}`, 'eq:type|nl.edu.nobody.v1'];
    const heads = await index.candidatesOfKeys(keys);
    for (const key of keys) {
      const sorted = (list: readonly RouteCandidate[]) =>
        [...list].sort((a, b) => a.subscriptionId.localeCompare(b.subscriptionId));
      expect(sorted(heads.get(key)!)).toEqual(sorted(await index.candidates(key)));
    }
    expect(heads.get(keys[0]!)).toHaveLength(30);
    expect(heads.get(keys[1]!)).toEqual([]);
  });

  it('EDU-8: a subscription whose entries are removed is no longer found, and one rewritten is found as rewritten', async () => {
    const { index } = await freshIndex();
    const gone = await subscribe(index, candidate({ types: [TYPE] }));
    const stays = await subscribe(index, candidate({ types: [TYPE] }));
    expect(await matchBatch(index, [event('leerling/1')])).toEqual([
      [gone.subscriptionId, stays.subscriptionId].sort(),
    ]);
    await index.removeEntries(
      gone.subscriptionId,
      routeEntriesOf(gone.match).map((entry) => entry.routeKey),
    );
    await subscribe(index, { ...stays, owner: 'school-b', delivery: 'pull' });
    await index.bumpGeneration();
    const matcher = new SubscriptionMatcher(index);
    await matcher.refresh();
    await matcher.prefetch([event('leerling/1')]);
    expect(await matcher.match(event('leerling/1'))).toEqual([{ ...stays, owner: 'school-b', delivery: 'pull' }]);
  });

  it('EDU-8: on an index written before heads (entries, no heads, no #layout) every subscription is still found', async () => {
    const { index, table } = await freshIndex();
    const old = candidate({ types: [TYPE] });
    const [entry] = routeEntriesOf(old.match);
    // What the index held before heads: the shape, the generation, the per-subscription item.
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: { routeKey: { S: '#meta' }, subscriptionId: { S: `shape:${entry!.shape}` } },
      }),
    );
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          routeKey: { S: entry!.routeKey },
          subscriptionId: { S: old.subscriptionId },
          owner: { S: old.owner },
          match: { S: JSON.stringify(old.match) },
          contentMode: { S: 'structured' },
          batchSupported: { BOOL: false },
        },
      }),
    );
    await index.bumpGeneration();
    expect(await matchBatch(index, [event('leerling/1')])).toEqual([[old.subscriptionId]]);
    // A new subscription under the same key creates its head from both entries.
    const added = await subscribe(index, candidate({ types: [TYPE] }));
    expect(await matchBatch(index, [event('leerling/1')])).toEqual([[old.subscriptionId, added.subscriptionId].sort()]);
    requests.reset();
    await matchBatch(index, [event('leerling/1')]);
    expect(requests.byOperation['QueryCommand']).toBe(1); // the state only: the key's head now answers
  });

  it('EDU-8: a key whose head overflowed is read from its per-subscription items', async () => {
    const { index, table } = await freshIndex();
    const first = await subscribe(index, candidate({ types: [TYPE] }));
    const key = routeEntriesOf(first.match)[0]!.routeKey;
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { routeKey: { S: key }, subscriptionId: { S: '#head' } },
        UpdateExpression: 'SET overflow = :true',
        ExpressionAttributeValues: { ':true': { BOOL: true } },
      }),
    );
    const second = await subscribe(index, candidate({ types: [TYPE] }));
    expect(await matchBatch(index, [event('leerling/1')])).toEqual([
      [first.subscriptionId, second.subscriptionId].sort(),
    ]);
  });

  it('EDU-8: subscriptions whose head would pass 400 KB mark it overflowed, and every one is still found', async () => {
    const { index, table } = await freshIndex();
    // Each candidate about 150 KB (a long exact value): three do not fit one item.
    const big = (i: number) =>
      candidate({ types: [TYPE], filters: [{ not: { exact: { subject: `${i}${'x'.repeat(150_000)}` } } }] });
    const subscribed = [];
    for (let i = 0; i < 3; i++) subscribed.push(await subscribe(index, big(i)));
    expect(await matchBatch(index, [event('leerling/1')])).toEqual([ids(subscribed)]);
    const head = await client.send(
      new GetItemCommand({
        TableName: table,
        Key: { routeKey: { S: routeEntriesOf(subscribed[0]!.match)[0]!.routeKey }, subscriptionId: { S: '#head' } },
      }),
    );
    expect(head.Item?.['overflow']).toEqual({ BOOL: true });
  });
});
