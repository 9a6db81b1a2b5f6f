import { describe, expect, it } from 'vitest';
import { SubscriptionMatcher } from '../../../functions/core/routing/matcher.js';
import { InMemorySubscriptionStore } from '../../support/memory/memory-subscription-store.js';
import { InvalidCursorError, type SubscriptionPage } from '../../../functions/core/subscriptions/store.js';
import { contractDraft, describeSubscriptionStoreContract } from './store-contract.js';

describeSubscriptionStoreContract('in memory', () => {
  const store = new InMemorySubscriptionStore();
  return { store, routes: store, keyRequirements: store };
});

/**
 * What the contract suite does not reach in the in-memory store: it opens a fresh store and a fresh
 * matcher per check, so it never sees the route-index generation protect a matcher's cache, and its
 * lists are created in creation order with distinct times.
 */
describe('in-memory subscription store', () => {
  const TYPE = 'nl.edu.leerling.ingeschreven.v1';
  const probe = {
    specversion: '1.0',
    id: 'e-1',
    source: 'urn:nld:oin:1:systeem:lvs',
    type: TYPE,
    subject: 'leerling/42',
  };

  it('EDU-8: one router container, batch after batch, sees every change made to the index in between: creates, activations, retirements, deletions', async () => {
    const store = new InMemorySubscriptionStore();
    // Registers the `eq:type` shape, so the first batch already reads (and caches) the probe's key.
    await store.create(contractDraft({ types: ['nl.edu.other.v1'] }));
    await store.create(contractDraft({ id: 'y', types: [TYPE], status: 'pending' }));
    await store.create(contractDraft({ id: 'z', types: [TYPE], status: 'pending' }));
    const matcher = new SubscriptionMatcher(store);
    const batch = async () => {
      await matcher.refresh();
      return (await matcher.match(probe)).map((c) => c.subscriptionId).sort();
    };
    expect(await batch()).toEqual([]);
    await store.create(contractDraft({ id: 'x', types: [TYPE] }));
    expect(await batch()).toEqual(['x']);
    await store.updateStatus('z', 'active', undefined);
    expect(await batch()).toEqual(['x', 'z']);
    // Two changes between batches: the generation must not come back to a value the matcher has seen.
    await store.create(contractDraft({ id: 'w', types: [TYPE] }));
    await store.updateStatus('y', 'active', undefined);
    expect(await batch()).toEqual(['w', 'x', 'y', 'z']);
    await store.updateStatus('x', 'retired', 'the target is gone');
    expect(await batch()).toEqual(['w', 'y', 'z']);
    await store.delete((await store.get('w'))!);
    expect(await batch()).toEqual(['y', 'z']);
    await store.delete((await store.get('y'))!);
    await store.create(contractDraft({ id: 'v', types: [TYPE] }));
    expect(await batch()).toEqual(['v', 'z']);
  });

  it('EDU-14: what get returns is a copy: changing it changes nothing stored', async () => {
    const store = new InMemorySubscriptionStore();
    const stored = await store.create(contractDraft({ id: 'copy' }));
    const read = (await store.get('copy'))!;
    (read as { sink: string }).sink = 'https://elders.example/hook';
    expect(await store.get('copy')).toEqual(stored);
  });

  const pageAll = async (list: (cursor: string | undefined) => Promise<SubscriptionPage>) => {
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      // A cursor that leads back to where it was would page forever: fail instead.
      if (pages.length > 10) throw new Error('the cursor never reaches the end of the list');
      const page = await list(cursor);
      pages.push(page.items.map((s) => s.id));
      cursor = page.cursor;
    } while (cursor);
    return pages;
  };

  it("EDU-7: an owner's list is in creation order (ties by id), whatever order the subscriptions were stored in, and pages skip or repeat none", async () => {
    const store = new InMemorySubscriptionStore();
    const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
    // Stored out of order; c, a and b were created in the same second.
    for (const [id, second] of [
      ['late', 9],
      ['c', 5],
      ['early', 1],
      ['a', 5],
      ['b', 5],
    ] as const) {
      await store.create(contractDraft({ id, owner: 'school-a', createdAt: at(second), updatedAt: at(second) }));
    }
    const expected = ['early', 'a', 'b', 'c', 'late'];
    for (const limit of [1, 2, 3]) {
      const pages = await pageAll((cursor) => store.listByOwner('school-a', { limit, cursor }));
      expect(pages.flat()).toEqual(expected);
    }
    // The last page, short of the limit, says it is the last.
    expect(await pageAll((cursor) => store.listByOwner('school-a', { limit: 3, cursor }))).toEqual([
      ['early', 'a', 'b'],
      ['c', 'late'],
    ]);
  });

  it('issue 12 item 8: listing all pages through every subscription once, whatever order they were stored in; a short last page has no cursor', async () => {
    const store = new InMemorySubscriptionStore();
    const ids = ['d', 'b', 'e', 'a', 'c'];
    for (const id of ids) await store.create(contractDraft({ id, owner: `owner-${id}` }));
    for (const limit of [1, 2, 3]) {
      const pages = await pageAll((cursor) => store.listAll({ limit, cursor }));
      expect([...pages.flat()].sort()).toEqual([...ids].sort());
      // Five is no multiple of 2 or 3: the last page is short. (After a full one, a cursor to an
      // empty page is allowed: DynamoDB's scan hands one out.)
      if (limit > 1) expect(pages.at(-1)!.length).toBeGreaterThan(0);
    }
  });

  it('issue 12 item 8, EDU-7: a cursor this store never handed out is refused, also one that only looks like it', async () => {
    const store = new InMemorySubscriptionStore();
    await store.create(contractDraft({ id: 'only', owner: 'school-a' }));
    const encode = (text: string) => Buffer.from(text).toString('base64url');
    // The mark of a list-all cursor with no position after it.
    await expect(store.listAll({ limit: 1, cursor: encode('all:') })).rejects.toThrow(InvalidCursorError);
    // An owner's cursor whose position is not two strings.
    for (const position of [
      { owner: 'school-a', createdAt: 5, id: 'only' },
      { owner: 'school-a', createdAt: '2026-01-01T00:00:00.000Z', id: 5 },
    ]) {
      await expect(
        store.listByOwner('school-a', { limit: 1, cursor: encode(JSON.stringify(position)) }),
      ).rejects.toThrow(InvalidCursorError);
    }
  });
});
