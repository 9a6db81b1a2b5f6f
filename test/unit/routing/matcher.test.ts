/**
 * SubscriptionMatcher: the route index lookup with its per-container cache (EDU-8). The cache may
 * only save reads while the index is unchanged; a subscription activated before an event was
 * accepted must be found for that event.
 */
import { describe, expect, it } from 'vitest';
import { SubscriptionMatcher } from '../../../functions/core/routing/matcher.js';
import { InMemorySubscriptionStore } from '../../support/memory/memory-subscription-store.js';
import type { EventAttributes } from '../../../functions/core/subscriptions/filters.js';
import { contractDraft } from '../subscriptions/store-contract.js';
import { BatchReadingRouteIndex, candidate, InMemoryRouteIndex, SOURCE } from './routing-fakes.js';

const TYPE = 'nl.edu.leerling.ingeschreven.v1';
const event = (over: Partial<EventAttributes> = {}): EventAttributes => ({
  id: 'e1',
  source: SOURCE,
  type: TYPE,
  subject: 'leerling/1',
  ...over,
});
const ids = (candidates: readonly { subscriptionId: string }[]) => candidates.map((c) => c.subscriptionId).sort();

describe('SubscriptionMatcher', () => {
  it('EDU-8: refuses to match before it has read the index state', async () => {
    await expect(new SubscriptionMatcher(new InMemoryRouteIndex()).match(event())).rejects.toThrow(/refresh/);
  });

  it('EDU-8: finds every subscription whose full conditions the event meets, each once', async () => {
    const index = new InMemoryRouteIndex()
      .add(candidate('by-type'))
      // Two types: listed under two keys, but an event of one type is one match.
      .add(candidate('two-types', { match: { types: [TYPE, 'nl.edu.leerling.uitgeschreven.v1'] } }))
      .add(
        candidate('same-type-other-subject', {
          match: { types: [TYPE], filters: [{ exact: { subject: 'leerling/2' } }] },
        }),
      )
      .add(candidate('other-source', { match: { source: 'urn:nld:oin:1:systeem:x', types: [TYPE] } }))
      .add(candidate('catch-all', { match: {} }))
      // Filed under the type's key, which the event reaches, but its suffix condition fails.
      .add(candidate('wrong-version', { match: { types: [TYPE], filters: [{ suffix: { type: '.v2' } }] } }));
    const matcher = new SubscriptionMatcher(index);
    await matcher.refresh();
    expect(ids(await matcher.match(event()))).toEqual(['by-type', 'catch-all', 'two-types']);
    expect(ids(await matcher.match(event({ subject: 'leerling/2' })))).toEqual([
      'by-type',
      'catch-all',
      'same-type-other-subject',
      'two-types',
    ]);
  });

  it('EDU-8: a candidate listed under two keys the event reaches is returned once', async () => {
    const index = new InMemoryRouteIndex();
    const both = candidate('both', { match: { types: [TYPE] } });
    index.add(both);
    // The same subscription also under the catch-all key, as a second index entry would put it.
    index.add({ ...both, match: { types: [TYPE], filters: [{ suffix: { type: '.v1' } }] } });
    const matcher = new SubscriptionMatcher(index);
    await matcher.refresh();
    expect(ids(await matcher.match(event()))).toEqual(['both']);
  });

  it('EDU-8: while the index generation is unchanged a key is read once; a change makes every key read again', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1'));
    const matcher = new SubscriptionMatcher(index);
    await matcher.refresh();
    await matcher.match(event());
    await matcher.refresh();
    await matcher.match(event());
    expect(index.candidateReads).toEqual([`eq:type|${TYPE}`]);

    index.add(candidate('s-2', { match: { types: [TYPE] } }));
    await matcher.refresh();
    expect(ids(await matcher.match(event()))).toEqual(['s-1', 's-2']);
    expect(index.candidateReads).toHaveLength(2);
  });

  it('EDU-8: a failed read is not remembered: the next lookup reads again', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1'));
    index.failingKeys.add(`eq:type|${TYPE}`);
    const matcher = new SubscriptionMatcher(index);
    await matcher.refresh();
    await expect(matcher.match(event())).rejects.toThrow('route index read failed');
    index.failingKeys.clear();
    expect(ids(await matcher.match(event()))).toEqual(['s-1']);
  });

  it('EDU-8: the cache keeps the most recently used keys up to its size', async () => {
    const types = ['a.b.c.v1', 'a.b.d.v1', 'a.b.e.v1'];
    const index = new InMemoryRouteIndex();
    for (const type of types) index.add(candidate(type, { match: { types: [type] } }));
    const matcher = new SubscriptionMatcher(index, { cachedKeys: 2 });
    await matcher.refresh();
    const lookUp = async (type: string) => matcher.match(event({ type }));
    await lookUp(types[0]!);
    await lookUp(types[1]!);
    await lookUp(types[0]!); // used again: now the most recent
    await lookUp(types[2]!); // evicts types[1], the least recently used
    index.candidateReads.length = 0;
    await lookUp(types[0]!);
    await lookUp(types[2]!);
    expect(index.candidateReads).toEqual([]);
    await lookUp(types[1]!);
    expect(index.candidateReads).toEqual([`eq:type|${types[1]}`]);
  });

  it('EDU-8: by default many keys stay cached', async () => {
    const index = new InMemoryRouteIndex();
    const types = Array.from({ length: 50 }, (_, i) => `a.b.t${i}.v1`);
    for (const type of types) index.add(candidate(type, { match: { types: [type] } }));
    const matcher = new SubscriptionMatcher(index);
    await matcher.refresh();
    for (const type of types) await matcher.match(event({ type }));
    index.candidateReads.length = 0;
    for (const type of types) await matcher.match(event({ type }));
    expect(index.candidateReads).toEqual([]);
  });

  it('EDU-8: a read that fails after the index changed does not evict the newer read of that key', async () => {
    let fail!: (error: Error) => void;
    const reads: string[] = [];
    let generation = 1;
    const index = {
      readState: async () => ({ generation, shapes: ['eq:type'] }),
      candidates: async (key: string) => {
        reads.push(key);
        if (reads.length === 1) return new Promise<never>((_, reject) => (fail = reject));
        return [candidate('s-1')];
      },
    };
    const matcher = new SubscriptionMatcher(index);
    await matcher.refresh();
    const stale = matcher.match(event());
    generation++;
    await matcher.refresh();
    expect(ids(await matcher.match(event()))).toEqual(['s-1']);
    fail(new Error('throttled'));
    await expect(stale).rejects.toThrow('throttled');
    expect(ids(await matcher.match(event()))).toEqual(['s-1']);
    expect(reads).toHaveLength(2);
  });

  it("EDU-8: the index keeps each subscription's source, types and filters with it: an event that reaches its key but fails one of them is not matched", async () => {
    // A route key holds at most three attributes (subject and extensions first), so a key can be
    // reached by events the subscription does not want; only the candidate's own conditions tell.
    const store = new InMemorySubscriptionStore();
    const person = { subject: 'leerling/1', brin: '00aa', vestiging: '01' };
    // Keyed by brin, subject and type: the source is not in the key.
    await store.create(
      contractDraft({
        id: 'source',
        source: SOURCE,
        types: [TYPE],
        filters: [{ exact: { subject: person.subject, brin: person.brin } }],
      }),
    );
    // Keyed by brin, subject and vestiging: the type is not in the key.
    await store.create(contractDraft({ id: 'types', types: [TYPE], filters: [{ exact: person }] }));
    // Keyed by type: the suffix is checked on the candidate only.
    await store.create(contractDraft({ id: 'filters', types: [TYPE], filters: [{ suffix: { subject: '/2' } }] }));
    const matcher = new SubscriptionMatcher(store);
    await matcher.refresh();
    const full = event(person);
    expect(ids(await matcher.match(full))).toEqual(['source', 'types']);
    expect(ids(await matcher.match({ ...full, source: 'urn:nld:oin:1:systeem:x' }))).toEqual(['types']);
    expect(ids(await matcher.match({ ...full, type: 'nl.edu.leerling.uitgeschreven.v1' }))).toEqual([]);
    expect(ids(await matcher.match({ ...full, subject: 'leerling/2' }))).toEqual(['filters']);
  });

  describe('reading the keys of a batch together (prefetch)', () => {
    const OTHER = 'nl.edu.leerling.uitgeschreven.v1';
    const NOBODY = 'nl.edu.leerling.verhuisd.v1';
    const key = (type: string) => `eq:type|${type}`;

    it('EDU-8: the keys of a batch of events are read in one request, found empty or not; matching them then reads nothing more', async () => {
      const index = new BatchReadingRouteIndex()
        .add(candidate('s-1'))
        .add(candidate('s-2', { match: { types: [OTHER] } }));
      const matcher = new SubscriptionMatcher(index);
      await matcher.refresh();
      const batch = [event(), event({ id: 'e2', type: OTHER }), event({ id: 'e3', type: NOBODY }), event({ id: 'e4' })];
      await matcher.prefetch(batch);
      expect(index.batchReads.map((keys) => [...keys].sort())).toEqual([[key(OTHER), key(TYPE), key(NOBODY)].sort()]);
      expect(await Promise.all(batch.map(async (e) => ids(await matcher.match(e))))).toEqual([
        ['s-1'],
        ['s-2'],
        [],
        ['s-1'],
      ]);
      expect(index.candidateReads).toEqual([]);
    });

    it('EDU-8: the next batch asks only for the keys not cached yet, and a batch with none makes no request', async () => {
      const index = new BatchReadingRouteIndex()
        .add(candidate('s-1'))
        .add(candidate('s-2', { match: { types: [OTHER] } }));
      const matcher = new SubscriptionMatcher(index);
      await matcher.refresh();
      await matcher.prefetch([event(), event({ id: 'e3', type: NOBODY })]);
      await matcher.prefetch([event({ id: 'e5' }), event({ id: 'e6', type: NOBODY })]);
      expect(index.batchReads).toHaveLength(1);
      await matcher.prefetch([event({ id: 'e7' }), event({ id: 'e8', type: OTHER })]);
      expect(index.batchReads.at(-1)).toEqual([key(OTHER)]);
      expect(ids(await matcher.match(event({ type: OTHER })))).toEqual(['s-2']);
      expect(index.candidateReads).toEqual([]);
    });
  });
});
