/**
 * The SubscriptionStore contract, with the route index it keeps in step (the router reads it
 * through `RouteIndexReader`). Run against every store implementation (in memory in test/unit,
 * DynamoDB on dynalite in test/integration), so the two cannot behave differently. Every test
 * uses its own owner and types, so stores shared between tests do not disturb each other.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SubscriptionMatcher, type RouteIndexReader } from '../../../functions/core/routing/matcher.js';
import type { KeyRequiringSubscriptionSource } from '../../../functions/core/ingest/ordering-key-requirements.js';
import {
  InvalidCursorError,
  SubscriptionConflictError,
  type SubscriptionDraft,
  type SubscriptionStore,
} from '../../../functions/core/subscriptions/store.js';

export interface StoreUnderTest {
  readonly store: SubscriptionStore;
  /** The route index the store keeps in step, as the router reads it. */
  readonly routes: RouteIndexReader;
  /** The ingest's list of ordered subscriptions that refuse keyless events (issue 33), kept in step too. */
  readonly keyRequirements: KeyRequiringSubscriptionSource;
}

const event = {
  specversion: '1.0',
  id: 'e-1',
  source: 'urn:nld:oin:1:systeem:lvs',
  type: 'nl.edu.leerling.ingeschreven.v1',
  subject: 'leerling/42',
};

let counter = 0;

/** Distinct, increasing creation times: lists are ordered by them. */
export function contractDraft(overrides: Partial<SubscriptionDraft> = {}): SubscriptionDraft {
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

/** A type no other test subscribes to. */
const freshType = (label: string) => `nl.edu.${label}.${randomUUID().slice(0, 8)}.v1`;

export function describeSubscriptionStoreContract(name: string, open: () => StoreUnderTest): void {
  describe(`subscription store contract: ${name}`, () => {
    const matchedIds = async (
      { routes }: StoreUnderTest,
      attributes: Record<string, string> = event,
    ): Promise<string[]> => {
      const matcher = new SubscriptionMatcher(routes);
      await matcher.refresh();
      return (await matcher.match(attributes)).map((candidate) => candidate.subscriptionId);
    };

    it('EDU-14: a stored subscription reads back exactly, with its route keys and version 1', async () => {
      const { store } = open();
      const written = contractDraft({
        source: 'urn:nld:oin:1:systeem:lvs',
        filters: [{ any: [{ exact: { subject: 'leerling/42' } }, { prefix: { subject: 'klas/' } }] }],
        credential: { kind: 'bearer', ciphertext: 'aesgcm1.x.y.z' },
        allowedRatePerMinute: 120,
        retryWindowSeconds: 3600,
        statusReason: 'the target consented',
      });
      const stored = await store.create(written);
      expect(stored.version).toBe(1);
      expect(stored.routeKeys.length).toBeGreaterThan(0);
      expect(await store.get(written.id)).toEqual(stored);
      await expect(store.create(written)).rejects.toThrow(SubscriptionConflictError);
    });

    it('review #1: an id that cannot name a subscription (empty, or longer than a key holds) reads as unknown, not as an error', async () => {
      const { store } = open();
      expect(await store.get('')).toBeUndefined();
      expect(await store.get('x'.repeat(1025))).toBeUndefined();
      expect(await store.get(randomUUID())).toBeUndefined();
    });

    it('EDU-8: an active subscription is found for a matching event, and not for another type or person', async () => {
      const under = open();
      const type = freshType('person');
      const person = await under.store.create(
        contractDraft({ types: [type], filters: [{ exact: { subject: 'leerling/42' } }] }),
      );
      expect(await matchedIds(under, { ...event, type })).toContain(person.id);
      expect(await matchedIds(under, { ...event, type, subject: 'leerling/43' })).not.toContain(person.id);
      expect(await matchedIds(under, { ...event, type: 'nl.edu.leerling.uitgeschreven.v1' })).not.toContain(person.id);
    });

    it('WH-4: a pending subscription is not routed; once active it is, and a retired one no longer is', async () => {
      const under = open();
      const { store } = under;
      const pending = await store.create(contractDraft({ status: 'pending', types: ['nl.edu.pending.v1'] }));
      expect(pending.routeKeys).toEqual([]);
      const probe = { ...event, type: 'nl.edu.pending.v1' };
      expect(await matchedIds(under, probe)).not.toContain(pending.id);

      const active = await store.updateStatus(pending.id, 'active', 'the target consented');
      expect(active).toMatchObject({ status: 'active', statusReason: 'the target consented', version: 2 });
      expect(await matchedIds(under, probe)).toContain(pending.id);

      const retired = await store.updateStatus(pending.id, 'retired', 'the target answered 410 Gone', 2);
      expect(retired).toMatchObject({ status: 'retired', routeKeys: [], version: 3 });
      expect(await matchedIds(under, probe)).not.toContain(pending.id);
      expect(await store.updateStatus('no-such-subscription', 'retired', 'gone')).toBeUndefined();
    });

    it('a status update for a version that is no longer current is refused', async () => {
      const { store } = open();
      const stored = await store.create(contractDraft());
      await expect(store.updateStatus(stored.id, 'suspended', 'failing', stored.version + 1)).rejects.toThrow(
        SubscriptionConflictError,
      );
    });

    it('a status update replaces the reason; the cause of a suspension stays only while suspended, and a suspended subscription is still routed', async () => {
      const under = open();
      const type = freshType('suspended');
      const stored = await under.store.create(contractDraft({ types: [type], statusReason: 'the target consented' }));
      const suspended = await under.store.updateStatus(
        stored.id,
        'suspended',
        'no credential',
        stored.version,
        'credential-required',
      );
      expect(suspended).toMatchObject({
        status: 'suspended',
        statusReason: 'no credential',
        suspendedFor: 'credential-required',
        version: 2,
      });
      expect(await matchedIds(under, { ...event, type })).toContain(stored.id);

      const resumed = await under.store.updateStatus(stored.id, 'active', undefined, 2, 'target-failing');
      expect(resumed).toMatchObject({ status: 'active', version: 3 });
      expect(resumed).not.toHaveProperty('suspendedFor');
      expect(resumed).not.toHaveProperty('statusReason');
      expect(await under.store.get(stored.id)).toEqual(resumed);
    });

    it("EDU-8: changing the filters moves the subscription in the index; a losing concurrent writer leaves the winner's entries", async () => {
      const under = open();
      const { store } = under;
      const [a, b, c] = [freshType('a'), freshType('b'), freshType('c')];
      const first = await store.create(contractDraft({ types: [a] }));
      const { routeKeys: _k, version: _v, ...base } = first;
      const moved = await store.save({ ...base, types: [b] }, first);
      expect(moved.version).toBe(2);
      expect(await matchedIds(under, { ...event, type: a })).not.toContain(first.id);
      expect(await matchedIds(under, { ...event, type: b })).toContain(first.id);

      // `first` is stale now: this write loses, and must not leave type c routed.
      await expect(store.save({ ...base, types: [c] }, first)).rejects.toThrow(SubscriptionConflictError);
      expect(await matchedIds(under, { ...event, type: c })).not.toContain(first.id);
      expect(await matchedIds(under, { ...event, type: b })).toContain(first.id);
      expect(await store.get(first.id)).toEqual(moved);
    });

    it('EDU-13: deleting removes the subscription and its route entries', async () => {
      const under = open();
      const type = freshType('deleted');
      const stored = await under.store.create(contractDraft({ types: [type] }));
      await under.store.delete(stored);
      expect(await under.store.get(stored.id)).toBeUndefined();
      expect(await matchedIds(under, { ...event, type })).toEqual([]);
    });

    it('EDU-13: a delete or a save of a subscription that changed or went meanwhile is refused, and leaves what is stored', async () => {
      const { store } = open();
      const stored = await store.create(contractDraft());
      const { routeKeys: _k, version: _v, ...base } = stored;
      const changed = await store.save({ ...base, sink: 'https://ontvanger.example/other' }, stored);
      await expect(store.delete(stored)).rejects.toThrow(SubscriptionConflictError);
      expect(await store.get(stored.id)).toEqual(changed);

      await store.delete(changed);
      await expect(store.save(base, changed)).rejects.toThrow(SubscriptionConflictError);
      await expect(store.delete(changed)).rejects.toThrow(SubscriptionConflictError);
      expect(await store.get(stored.id)).toBeUndefined();
    });

    it("EDU-7: listing pages through one owner's subscriptions only, and a cursor cannot cross owners", async () => {
      const { store } = open();
      const owner = `lister-${Math.random().toString(36).slice(2)}`;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await store.create(contractDraft({ owner }))).id);
      await store.create(contractDraft({ owner: 'someone-else' }));
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listByOwner(owner, { limit: 2, cursor });
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((s) => s.id));
        cursor = page.cursor;
      } while (cursor);
      expect(seen).toEqual(ids);

      const firstPage = await store.listByOwner(owner, { limit: 2 });
      await expect(store.listByOwner('someone-else', { limit: 2, cursor: firstPage.cursor! })).rejects.toThrow(
        InvalidCursorError,
      );
      await expect(store.listByOwner(owner, { limit: 2, cursor: 'garbage' })).rejects.toThrow(InvalidCursorError);
    });

    it("issue 12 item 8: listing all pages through every owner's subscriptions once each; a foreign or garbage cursor is refused", async () => {
      const { store } = open();
      const mine = await Promise.all(
        ['all-a', 'all-b', 'all-c'].map((owner) => store.create(contractDraft({ owner: `${owner}-${randomUUID()}` }))),
      );
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listAll({ limit: 2, cursor });
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((s) => s.id));
        cursor = page.cursor;
      } while (cursor);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toEqual(expect.arrayContaining(mine.map((s) => s.id)));
      const ownerCursor = (await store.listByOwner(mine[0]!.owner, { limit: 1 })).cursor;
      for (const bad of ['garbage', ...(ownerCursor ? [ownerCursor] : [])]) {
        await expect(store.listAll({ limit: 2, cursor: bad })).rejects.toThrow(InvalidCursorError);
      }
    });

    it('EDU-7: an owner without subscriptions gets an empty list without a cursor', async () => {
      const { store } = open();
      expect(await store.listByOwner(`nobody-${randomUUID()}`, { limit: 10 })).toEqual({ items: [] });
    });

    it("ORD-1, issue 33: the ingest's list of subscriptions that refuse keyless events follows create, a change to and from refuse, suspension, retirement and delete", async () => {
      const { store, keyRequirements } = open();
      const refuse = { key: 'partitionkey', withoutKey: 'refuse', onFailure: 'block' } as const;
      const listed = async (id: string) =>
        (await keyRequirements.keyRequiringSubscriptions()).filter((c) => c.subscriptionId === id);
      const created = await store.create(contractDraft({ types: [freshType('refuse')], ordering: refuse }));
      expect(await listed(created.id)).toEqual([
        expect.objectContaining({ subscriptionId: created.id, owner: created.owner, ordering: refuse }),
      ]);
      const { version: _v, routeKeys: _r, ...draft } = created;
      const unordered = await store.save({ ...draft, ordering: { ...refuse, withoutKey: 'unordered' } }, created);
      expect(await listed(created.id)).toEqual([]);
      const again = await store.save({ ...draft, ordering: refuse, types: [freshType('changed')] }, unordered);
      // Rewritten with the subscription's new conditions: the ingest matches on what the router would.
      expect((await listed(created.id))[0]?.match.types).toEqual(again.types);
      const suspended = (await store.updateStatus(created.id, 'suspended', 'failing'))!;
      expect(await listed(created.id)).toHaveLength(1);
      await store.updateStatus(created.id, 'retired', 'gone', suspended.version);
      expect(await listed(created.id)).toEqual([]);
      const other = await store.create(contractDraft({ types: [freshType('refuse')], ordering: refuse }));
      await store.delete(other);
      expect(await listed(other.id)).toEqual([]);
      const pending = await store.create(contractDraft({ status: 'pending', ordering: refuse }));
      expect(await listed(pending.id)).toEqual([]);
    });

    it('EDU-8: a router container sees a subscription activated after its previous batch (generation check)', async () => {
      const { store, routes } = open();
      const matcher = new SubscriptionMatcher(routes);
      const probe = { ...event, type: freshType('fresh') };
      await matcher.refresh();
      expect(await matcher.match(probe)).toEqual([]);
      const stored = await store.create(contractDraft({ types: [probe.type] }));
      await matcher.refresh();
      expect((await matcher.match(probe)).map((c) => c.subscriptionId)).toEqual([stored.id]);
    });
  });
}
