/**
 * Issue 8, items 1 and 10, against dynalite: every DynamoDB key Koerier builds from what callers
 * send (event attributes, client ids from tokens, URL path ids, list cursors) stays within
 * DynamoDB's limits, so no input can make a write or a query fail with a ValidationException.
 *
 * dynalite enforces the table key limits (checked first, so the other tests measure against
 * them), but not those of a global secondary index's key: there the tests assert the length.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbDeliveryState } from '../../functions/aws/dynamodb-delivery-state.js';
import { DynamoDbRateWindow } from '../../functions/aws/dynamodb-rate-window.js';
import { DynamoDbRouteIndex } from '../../functions/aws/dynamodb-route-index.js';
import { DynamoDbRoutedEventLedger } from '../../functions/aws/dynamodb-routed-event-ledger.js';
import { ownerKeyOf } from '../../functions/aws/subscription-table-items.js';
import { DynamoDbSubscriptionStore } from '../../functions/aws/dynamodb-subscription-store.js';
import { InvalidPageCursorError } from '../../functions/core/delivery/delivery-records.js';
import { QUEUE_MESSAGE_MARGIN_BYTES, SQS_MESSAGE_LIMIT_BYTES } from '../../functions/config.js';
import { DYNAMODB_LIMITS } from '../../functions/core/ids/bounded-key.js';
import { SubscriptionMatcher } from '../../functions/core/routing/matcher.js';
import { routedEventKey } from '../../functions/core/routing/routed-events.js';
import type { Filter } from '../../functions/core/subscriptions/filters.js';
import { InvalidCursorError } from '../../functions/core/subscriptions/store.js';
import { MAX_CONDITIONS_BYTES, parseSubscriptionInput } from '../../functions/core/subscriptions/subscription-input.js';
import { localName } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { subscriptionDraft } from '../support/subscription-draft.js';

let emulators: Emulators;
let client: DynamoDBClient;
let routes: DynamoDbRouteIndex;
let subscriptions: DynamoDbSubscriptionStore;
let ledger: DynamoDbRoutedEventLedger;
let deliveries: DynamoDbDeliveryState;

const bytes = (text: string) => Buffer.byteLength(text);
const claimOptions = () => ({ now: Date.now(), lockMs: 10_000, ttlSeconds: 3600 });
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false }); // fixed clocks in the past: no sweeping by real time
  client = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  routes = new DynamoDbRouteIndex(client, localName.table('routes'));
  subscriptions = new DynamoDbSubscriptionStore(client, localName.table('subscriptions'), routes);
  ledger = new DynamoDbRoutedEventLedger(client, localName.table('idempotency'));
  deliveries = new DynamoDbDeliveryState(client, localName.table('deliveries'));
});
afterAll(async () => {
  client?.destroy();
  await emulators?.stop();
});

describe('DynamoDB key bounds (dynalite)', () => {
  it('review #1: dynalite refuses a 2,049-byte partition key, a 1,025-byte sort key and a 400 KB item, as DynamoDB does', async () => {
    const put = (table: 'idempotency' | 'routes', item: Record<string, { S: string }>) =>
      client.send(new PutItemCommand({ TableName: localName.table(table), Item: item }));
    await expect(put('idempotency', { pk: { S: 'p'.repeat(2048) } })).resolves.toBeDefined();
    await expect(put('idempotency', { pk: { S: 'p'.repeat(2049) } })).rejects.toThrow(/2048 bytes/);
    await expect(
      put('routes', { routeKey: { S: 'k' }, subscriptionId: { S: 's'.repeat(1024) } }),
    ).resolves.toBeDefined();
    await expect(put('routes', { routeKey: { S: 'k' }, subscriptionId: { S: 's'.repeat(1025) } })).rejects.toThrow(
      /1024 bytes/,
    );
    await expect(put('idempotency', { pk: { S: 'big' }, b: { S: 'b'.repeat(400 * 1024) } })).rejects.toThrow(
      /Item size/,
    );
  });

  it('review #1, CE-17: the routing ledger claims, completes and recognises an event whose source + id are 4 KB', async () => {
    const event = {
      source: `urn:nld:oin:00000001234567890000:systeem:${'s'.repeat(3000)}`,
      id: `${'i'.repeat(1000)}-${randomUUID()}`,
    };
    expect(bytes(event.source + event.id)).toBeGreaterThan(4000);
    const claim = await ledger.claim(event, claimOptions());
    expect(claim.outcome).toBe('claimed');
    await ledger.complete(event, claim.outcome === 'claimed' ? claim.claimId : '');
    expect(await ledger.claim(event, claimOptions())).toEqual({ outcome: 'duplicate' });
    // Another event that differs only at its very end is not a duplicate.
    expect((await ledger.claim({ ...event, id: `${event.id}x` }, claimOptions())).outcome).toBe('claimed');
    // Multi-byte text: 2,000 characters, 6,000 bytes once URI-encoded.
    expect((await ledger.claim({ source: `urn:${'ë'.repeat(2000)}`, id: '1' }, claimOptions())).outcome).toBe(
      'claimed',
    );
  });

  it('review #1: a routing marker key of exactly 2,048 bytes is stored readable, one byte more is stored hashed', async () => {
    const source = 'urn:nld:oin:1:systeem:grens';
    const id = `${randomUUID()}-`.padEnd(
      DYNAMODB_LIMITS.partitionKeyBytes - bytes(`routed#${encodeURIComponent(source)}#`),
      'x',
    );
    expect(bytes(routedEventKey({ source, id }))).toBe(2048);
    expect((await ledger.claim({ source, id }, claimOptions())).outcome).toBe('claimed');
    const stored = await client.send(
      new GetItemCommand({
        TableName: localName.table('idempotency'),
        Key: { pk: { S: `routed#${encodeURIComponent(source)}#${id}` } },
      }),
    );
    expect(stored.Item?.['state']?.S).toBe('routing');
    expect((await ledger.claim({ source, id: `${id}x` }, claimOptions())).outcome).toBe('claimed');
  });

  it('review #1, WH-7: the rate window counts a 3 KB client id within the key limit, apart from a client id one character apart', async () => {
    // One instant for all three requests, so they count in one window.
    const now = Date.now();
    const window = new DynamoDbRateWindow(client, localName.table('idempotency'), { clock: () => now });
    const clientId = `client-${randomUUID()}-${'c'.repeat(3000)}`;
    expect(await window.take(clientId, 1)).toEqual({ allowed: true });
    expect(await window.take(clientId, 1)).toMatchObject({ allowed: false });
    expect(await window.take(`${clientId.slice(0, -1)}d`, 1)).toEqual({ allowed: true });
  });

  it('review #1, EDU-8: subscriptions to a 3 KB type and a long multi-byte source are found for the events that carry them, and only those', async () => {
    const type = `€${randomUUID()}`.padEnd(1024, '€'); // 1,024 characters, about 3 KB
    const source = `urn:${'ö'.repeat(1000)}:${randomUUID()}`;
    const anchor = `nl.${'ü'.repeat(1000)}.${randomUUID().slice(0, 8)}.`;
    const byType = await subscriptions.create(subscriptionDraft({ types: [type] }));
    const bySource = await subscriptions.create(subscriptionDraft({ source }));
    const byPrefix = await subscriptions.create(subscriptionDraft({ filters: [{ prefix: { type: anchor } }] }));
    for (const s of [byType, bySource, byPrefix])
      for (const key of s.routeKeys) expect(bytes(key)).toBeLessThanOrEqual(DYNAMODB_LIMITS.partitionKeyBytes);
    const matcher = new SubscriptionMatcher(routes);
    await matcher.refresh();
    const ids = async (attributes: Record<string, string>) =>
      (await matcher.match({ specversion: '1.0', id: '1', ...attributes })).map((c) => c.subscriptionId).sort();
    expect(await ids({ type, source: 'urn:x' })).toEqual([byType.id]);
    expect(await ids({ type: `${type}x`, source: 'urn:x' })).toEqual([]);
    expect(await ids({ type: 'nl.other', source })).toEqual([bySource.id]);
    expect(await ids({ type: `${anchor}${'a'.repeat(2000)}`, source: 'urn:x' })).toEqual([byPrefix.id]);
    expect(await ids({ type, source })).toEqual([byType.id, bySource.id].sort());
  });

  it('review #1, EDU-7: a 3 KB client id owns, reads back and lists its subscriptions; the byOwner index key stays within 2,048 bytes', async () => {
    const owner = `urn:nld:oin:${randomUUID()}:${'o'.repeat(3000)}`;
    const neighbour = `${owner.slice(0, -1)}p`;
    const first = await subscriptions.create(subscriptionDraft({ owner, createdAt: '2026-01-01T00:00:01.000Z' }));
    const second = await subscriptions.create(subscriptionDraft({ owner, createdAt: '2026-01-01T00:00:02.000Z' }));
    await subscriptions.create(subscriptionDraft({ owner: neighbour }));
    expect((await subscriptions.get(first.id))?.owner).toBe(owner);
    // dynalite does not check index keys; DynamoDB refuses an item whose index key is too long.
    const raw = await client.send(
      new GetItemCommand({ TableName: localName.table('subscriptions'), Key: { id: { S: first.id } } }),
    );
    expect(bytes(raw.Item?.['owner']?.S ?? '')).toBeLessThanOrEqual(DYNAMODB_LIMITS.partitionKeyBytes);
    expect(raw.Item?.['owner']?.S).toBe(ownerKeyOf(owner));
    const page = await subscriptions.listByOwner(owner, { limit: 1 });
    expect(page.items.map((s) => s.id)).toEqual([first.id]);
    const next = await subscriptions.listByOwner(owner, { limit: 1, cursor: page.cursor! });
    expect(next.items.map((s) => s.id)).toEqual([second.id]);
    expect(next.items[0]?.owner).toBe(owner);
    await expect(subscriptions.listByOwner(neighbour, { limit: 1, cursor: page.cursor! })).rejects.toThrow(
      InvalidCursorError,
    );
    // A client id that just fits stays readable, and its (long) cursor is still accepted.
    const readable = `urn:${randomUUID()}:${'r'.repeat(2000)}`;
    expect(ownerKeyOf(readable)).toBe(readable);
    for (const second of [1, 2])
      await subscriptions.create(subscriptionDraft({ owner: readable, createdAt: `2026-01-01T00:00:0${second}.000Z` }));
    const readablePage = await subscriptions.listByOwner(readable, { limit: 1 });
    expect((await subscriptions.listByOwner(readable, { limit: 1, cursor: readablePage.cursor! })).items).toHaveLength(
      1,
    );
    // A short client id that looks like a hashed one is hashed too, so the two can never meet.
    expect(ownerKeyOf(raw.Item!['owner']!.S!)).not.toBe(raw.Item!['owner']!.S);
    expect(ownerKeyOf('dev-subscriber')).toBe('dev-subscriber');
  });

  it("review #1: the largest subscription the input rules allow fits DynamoDB's 400 KB item, in the table and in the route index; one byte more is refused as input", async () => {
    // A credential as if already stored: the budget is about the conditions (WH-3 requires one on a create).
    const rules = {
      allowLoopbackSinks: false,
      allowedPorts: [443],
      sinkCredentials: 'oauth2-only',
      storedCredential: 'oauth2-client-credentials',
      maxRetryWindowSeconds: 7 * 24 * 3600,
    } as const;
    // Filters of exact values (the widest conditions), padded to exactly the budget.
    const filtersAt = (target: number): Filter[] => {
      const padding: Record<string, string> = {};
      const filters: Filter[] = [
        ...Array.from({ length: 60 }, (_, i) => ({ exact: { [`a${i}`]: 'é'.repeat(400) } })),
        { exact: padding },
      ];
      const size = () => Buffer.byteLength(JSON.stringify([undefined, undefined, filters]));
      let n = 0;
      while (target - size() > 1000) padding[`p${n++}`] = 'x'.repeat(900);
      padding[`p${n}`] = '';
      padding[`p${n}`] = 'x'.repeat(target - size());
      expect(size()).toBe(target);
      return filters;
    };
    const atBudget = parseSubscriptionInput(
      { sink: 'https://ontvanger.example/hook', filters: filtersAt(MAX_CONDITIONS_BYTES) },
      rules,
    );
    expect(atBudget.issues).toEqual([]);
    const over = parseSubscriptionInput(
      { sink: 'https://ontvanger.example/hook', filters: filtersAt(MAX_CONDITIONS_BYTES + 1) },
      rules,
    );
    expect(over.issues.map((issue) => `${issue.attribute}:${issue.rule}`)).toEqual(['filters:too-large']);

    // At the budget, with every other member at its limit too: the longest sink, three 4,096-character
    // secrets (encrypted and base64-encoded), an 8 KB client id.
    const draft = subscriptionDraft({
      owner: `urn:${'o'.repeat(8 * 1024)}`,
      sink: `https://ontvanger.example/${'s'.repeat(2000)}`,
      filters: atBudget.input!.filters!,
      credential: {
        kind: 'oauth2-client-credentials',
        ciphertext: 'c'.repeat(Math.ceil((3 * 4096 * 3 + 256) / 3) * 4),
      },
      statusReason: 'r'.repeat(2000),
    });
    const stored = await subscriptions.create(draft);
    expect(stored.routeKeys.length).toBeGreaterThan(0);
    const raw = await client.send(
      new GetItemCommand({ TableName: localName.table('subscriptions'), Key: { id: { S: stored.id } } }),
    );
    const size = Buffer.byteLength(JSON.stringify(raw.Item));
    expect(size).toBeLessThan(DYNAMODB_LIMITS.itemBytes * 0.75);
    expect((await subscriptions.get(stored.id))?.filters).toEqual(draft.filters);
  });

  it('review #1: a subscription id that cannot be a key (from a URL path) names no subscription instead of failing', async () => {
    expect(await subscriptions.get('s'.repeat(3000))).toBeUndefined();
    expect(await subscriptions.get('s'.repeat(1025))).toBeUndefined();
    expect(await subscriptions.get('')).toBeUndefined();
    // At the limit it is an ordinary lookup.
    expect(await subscriptions.get('s'.repeat(1024))).toBeUndefined();
    const stored = await subscriptions.create(subscriptionDraft({ id: `${randomUUID()}`.padEnd(1024, 'x') }));
    expect((await subscriptions.get(stored.id))?.id).toBe(stored.id);
  });

  it('review #1: delivery state for a subscription id at the 1,024-byte limit, with a dead letter of the largest delivery message, is stored and listed', async () => {
    const subscriptionId = randomUUID().padEnd(1024, 'x');
    const deliveryId = randomUUID();
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    const at = new Date().toISOString();
    const attempts = Array.from({ length: 10 }, (_, i) => ({
      subscriptionId,
      deliveryId,
      attempt: i + 1,
      at,
      outcome: 'retrying' as const,
      status: 503,
      latencyMs: 10_000,
      error: { code: 'server-error' as const, detail: 'd'.repeat(500) },
      nextAttemptAt: at,
    }));
    expect(await deliveries.reserveSendSlots(subscriptionId, undefined, Date.now())).toBe(true);
    await deliveries.putProgress(subscriptionId, { deliveryId, failedAttempts: 10, lastAttempts: attempts }, expiresAt);
    await deliveries.recordAttempts(attempts, expiresAt);
    // The largest delivery message: one event of the ingest's per-event limit (SQS limit minus margin).
    const event = JSON.stringify({
      specversion: '1.0',
      id: '1',
      source: 'urn:x',
      type: 't',
      data: 'e'.repeat(SQS_MESSAGE_LIMIT_BYTES - QUEUE_MESSAGE_MARGIN_BYTES - 100),
    });
    await deliveries.putDeadLetter(
      {
        subscriptionId,
        deliveryId,
        events: [event],
        createdAt: Date.now(),
        deadLetteredAt: at,
        reason: 'exhausted',
        detail: 'retries are over',
        attempts: 11,
        lastAttempts: attempts,
      },
      expiresAt,
    );
    expect((await deliveries.getProgress(subscriptionId, deliveryId))?.failedAttempts).toBe(10);
    expect((await deliveries.listAttempts(subscriptionId, { limit: 20 })).items).toHaveLength(10);
    expect((await deliveries.listDeadLetters(subscriptionId, { limit: 5 })).items.map((d) => d.events[0])).toEqual([
      event,
    ]);
  });

  it('review #10: a forged subscriptions cursor of any kind is refused as not handed out, never passed to DynamoDB', async () => {
    const owner = `forger-${randomUUID()}`;
    for (let i = 1; i <= 3; i++)
      await subscriptions.create(subscriptionDraft({ owner, createdAt: `2026-01-01T00:00:0${i}.000Z` }));
    const genuine = (await subscriptions.listByOwner(owner, { limit: 1 })).cursor!;
    const key = JSON.parse(Buffer.from(genuine, 'base64url').toString('utf8')) as Record<string, { S: string }>;
    expect(Object.keys(key).sort()).toEqual(['createdAt', 'id', 'owner']);
    const forged = [
      'garbage',
      '%%%',
      cursorOf('a string'),
      cursorOf([1, 2]),
      cursorOf({ pk: 'x', sk: 'y' }),
      cursorOf({ ...key, owner: { S: 'someone-else' } }),
      cursorOf({ ...key, id: { S: 'i'.repeat(3000) } }),
      cursorOf({ ...key, createdAt: { S: 'c'.repeat(1025) } }),
      cursorOf({ ...key, createdAt: { N: '1' } }),
      cursorOf({ ...key, id: { S: 'x', N: '1' } }),
      cursorOf({ ...key, extra: { S: '1' } }),
      cursorOf({ id: key['id'], owner: key['owner'] }),
      cursorOf({ ...key, id: { S: '' } }),
      'A'.repeat(7000),
      // The genuine key, padded past any genuine cursor's length.
      Buffer.from(JSON.stringify(key).replace('{', `{${' '.repeat(6000)}`)).toString('base64url'),
    ];
    for (const cursor of forged)
      await expect(subscriptions.listByOwner(owner, { limit: 1, cursor }), cursor.slice(0, 40)).rejects.toThrow(
        InvalidCursorError,
      );
    expect((await subscriptions.listByOwner(owner, { limit: 1, cursor: genuine })).items).toHaveLength(1);
  });

  it('review #10: a forged deliveries or dead-letters cursor of any kind is refused as not handed out, never passed to DynamoDB', async () => {
    const subscriptionId = randomUUID();
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
    await deliveries.recordAttempts(
      [1, 2, 3].map((i) => ({
        subscriptionId,
        deliveryId: randomUUID(),
        attempt: 1,
        at: at(i),
        outcome: 'delivered' as const,
        status: 204,
        latencyMs: 5,
      })),
      Math.floor(Date.now() / 1000) + 3600,
    );
    const genuine = (await deliveries.listAttempts(subscriptionId, { limit: 1 })).cursor!;
    const { pk, sk } = JSON.parse(Buffer.from(genuine, 'base64url').toString('utf8')) as { pk: string; sk: string };
    const forged = [
      'garbage',
      cursorOf('text'),
      cursorOf({ pk }),
      cursorOf({ pk: `sub#${randomUUID()}`, sk }),
      cursorOf({ pk, sk: `attempt#${'x'.repeat(1100)}` }),
      cursorOf({ pk, sk: `attempt#${'x'.repeat(300)}` }),
      cursorOf({ pk, sk: 'dead#000000000000001#x' }),
      cursorOf({ pk, sk: 'attempt#' }),
      cursorOf({ pk, sk: 'attempt#ünïcode' }),
      cursorOf({ pk, sk: 42 }),
      cursorOf({ pk, sk, extra: 1 }),
      'A'.repeat(3000),
      Buffer.from(JSON.stringify({ pk, sk }).replace('{', `{${' '.repeat(2000)}`)).toString('base64url'),
    ];
    for (const cursor of forged)
      await expect(deliveries.listAttempts(subscriptionId, { limit: 1, cursor }), cursor.slice(0, 40)).rejects.toThrow(
        InvalidPageCursorError,
      );
    await expect(deliveries.listDeadLetters(subscriptionId, { limit: 1, cursor: genuine })).rejects.toThrow(
      InvalidPageCursorError,
    );
    expect((await deliveries.listAttempts(subscriptionId, { limit: 1, cursor: genuine })).items).toHaveLength(1);
  });
});
