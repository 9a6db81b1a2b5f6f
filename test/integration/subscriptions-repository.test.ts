import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteIndexRepository } from '../../functions/aws/route-index-repository.js';
import { SubscriptionRepository } from '../../functions/aws/subscription-repository.js';
import { SubscriptionMatcher } from '../../functions/core/routing/matcher.js';
import { InvalidCursorError, SubscriptionConflictError, type SubscriptionDraft } from '../../functions/core/subscriptions/store.js';
import { localName } from '../../lib/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';

let emulators: Emulators;
let client: DynamoDBClient;
let routes: RouteIndexRepository;
let repository: SubscriptionRepository;
let counter = 0;

const event = {
  specversion: '1.0',
  id: 'e-1',
  source: 'urn:nld:oin:1:systeem:lvs',
  type: 'nl.edu.leerling.ingeschreven.v1',
  subject: 'leerling/42',
};

function draft(overrides: Partial<SubscriptionDraft> = {}): SubscriptionDraft {
  counter++;
  const now = new Date(Date.UTC(2026, 0, 1, 0, 0, counter)).toISOString();
  return {
    id: `sub-${counter}-${Math.random().toString(36).slice(2)}`,
    owner: 'school-a',
    sink: 'https://ontvanger.example/hook',
    types: ['nl.edu.leerling.ingeschreven.v1'],
    delivery: 'push',
    contentMode: 'structured',
    batchSupported: false,
    validation: 'handshake',
    status: 'active',
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

async function matchedIds(attributes: Record<string, string> = event): Promise<string[]> {
  const matcher = new SubscriptionMatcher(routes);
  await matcher.refresh();
  return (await matcher.match(attributes)).map((candidate) => candidate.subscriptionId);
}

beforeAll(async () => {
  emulators = await startEmulators();
  client = new DynamoDBClient({
    region: emulators.region,
    endpoint: emulators.endpoints.dynamodb,
    credentials: { accessKeyId: emulators.awsEnvironment['AWS_ACCESS_KEY_ID']!, secretAccessKey: emulators.awsEnvironment['AWS_SECRET_ACCESS_KEY']! },
  });
  routes = new RouteIndexRepository(client, localName.table('routes'));
  repository = new SubscriptionRepository(client, localName.table('subscriptions'), routes);
});
afterAll(async () => {
  client?.destroy();
  await emulators?.stop();
});

describe('subscription repository with the route index (dynalite)', () => {
  it('EDU-14: a stored subscription reads back exactly, with its route keys and version 1', async () => {
    const written = draft({
      source: 'urn:nld:oin:1:systeem:lvs',
      filters: [{ any: [{ exact: { subject: 'leerling/42' } }, { prefix: { subject: 'klas/' } }] }],
      credential: { kind: 'bearer', ciphertext: 'aesgcm1.x.y.z' },
      allowedRatePerMinute: 120,
      retryWindowSeconds: 3600,
      statusReason: 'the target consented',
    });
    const stored = await repository.create(written);
    expect(stored.version).toBe(1);
    expect(stored.routeKeys.length).toBeGreaterThan(0);
    expect(await repository.get(written.id)).toEqual(stored);
    await expect(repository.create(written)).rejects.toThrow(SubscriptionConflictError);
  });

  it('EDU-8: an active subscription is found for a matching event, and not for another type or person', async () => {
    const person = await repository.create(draft({ filters: [{ exact: { subject: 'leerling/42' } }] }));
    expect(await matchedIds()).toContain(person.id);
    expect(await matchedIds({ ...event, subject: 'leerling/43' })).not.toContain(person.id);
    expect(await matchedIds({ ...event, type: 'nl.edu.leerling.uitgeschreven.v1' })).not.toContain(person.id);
  });

  it('WH-4: a pending subscription is not routed; once active it is, and a retired one no longer is', async () => {
    const pending = await repository.create(draft({ status: 'pending', types: ['nl.edu.pending.v1'] }));
    expect(pending.routeKeys).toEqual([]);
    const probe = { ...event, type: 'nl.edu.pending.v1' };
    expect(await matchedIds(probe)).not.toContain(pending.id);

    const active = await repository.updateStatus(pending.id, 'active', 'the target consented');
    expect(active).toMatchObject({ status: 'active', statusReason: 'the target consented', version: 2 });
    expect(await matchedIds(probe)).toContain(pending.id);

    const retired = await repository.updateStatus(pending.id, 'retired', 'the target answered 410 Gone', 2);
    expect(retired).toMatchObject({ status: 'retired', routeKeys: [], version: 3 });
    expect(await matchedIds(probe)).not.toContain(pending.id);
    expect(await repository.updateStatus('no-such-subscription', 'retired', 'gone')).toBeUndefined();
  });

  it('a status update for a version that is no longer current is refused', async () => {
    const stored = await repository.create(draft());
    await expect(repository.updateStatus(stored.id, 'suspended', 'failing', stored.version + 1)).rejects.toThrow(SubscriptionConflictError);
  });

  it('EDU-8: changing the filters moves the subscription in the index; a losing concurrent writer leaves the winner\'s entries', async () => {
    const first = await repository.create(draft({ types: ['nl.edu.a.v1'] }));
    const { routeKeys: _k, version: _v, ...base } = first;
    const moved = await repository.save({ ...base, types: ['nl.edu.b.v1'] }, first);
    expect(await matchedIds({ ...event, type: 'nl.edu.a.v1' })).not.toContain(first.id);
    expect(await matchedIds({ ...event, type: 'nl.edu.b.v1' })).toContain(first.id);

    // `first` is stale now: this write loses, and must not leave type c routed.
    await expect(repository.save({ ...base, types: ['nl.edu.c.v1'] }, first)).rejects.toThrow(SubscriptionConflictError);
    expect(await matchedIds({ ...event, type: 'nl.edu.c.v1' })).not.toContain(first.id);
    expect(await matchedIds({ ...event, type: 'nl.edu.b.v1' })).toContain(first.id);
    expect(await repository.get(first.id)).toEqual(moved);
  });

  it('EDU-13: deleting removes the subscription and its route entries', async () => {
    const stored = await repository.create(draft({ types: ['nl.edu.deleted.v1'] }));
    await repository.delete(stored);
    expect(await repository.get(stored.id)).toBeUndefined();
    expect(await matchedIds({ ...event, type: 'nl.edu.deleted.v1' })).toEqual([]);
  });

  it('EDU-7: listing pages through one owner\'s subscriptions only, and a cursor cannot cross owners', async () => {
    const owner = `lister-${Math.random().toString(36).slice(2)}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await repository.create(draft({ owner }))).id);
    await repository.create(draft({ owner: 'someone-else' }));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await repository.listByOwner(owner, { limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((s) => s.id));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toEqual(ids);

    const firstPage = await repository.listByOwner(owner, { limit: 2 });
    await expect(repository.listByOwner('someone-else', { limit: 2, cursor: firstPage.cursor! })).rejects.toThrow(InvalidCursorError);
    await expect(repository.listByOwner(owner, { limit: 2, cursor: 'garbage' })).rejects.toThrow(InvalidCursorError);
  });

  it('EDU-8: a router container sees a subscription activated after its previous batch (generation check)', async () => {
    const matcher = new SubscriptionMatcher(routes);
    const probe = { ...event, type: `nl.edu.fresh.${counter}.v1` };
    await matcher.refresh();
    expect(await matcher.match(probe)).toEqual([]);
    const stored = await repository.create(draft({ types: [probe.type] }));
    await matcher.refresh();
    expect((await matcher.match(probe)).map((c) => c.subscriptionId)).toEqual([stored.id]);
  });
});
