import { describe, expect, it } from 'vitest';
import {
  CATCH_ALL_SHAPE,
  routeEntriesOf,
  routeKeysOf,
  subscriptionMatches,
  type SubscriptionMatch,
} from '../../../functions/core/routing/route-keys.js';
import type { EventAttributes, Filter } from '../../../functions/core/subscriptions/filters.js';

const event: EventAttributes = {
  id: 'e-1',
  source: 'urn:nld:oin:1:systeem:lvs',
  type: 'nl.edu.leerling.ingeschreven.v1',
  subject: 'leerling/42',
};

/** The keys of `event` the router would look up, given the shapes `match` registers. */
function lookedUp(match: SubscriptionMatch, attributes: EventAttributes = event): string[] {
  return routeKeysOf(
    attributes,
    routeEntriesOf(match).map((entry) => entry.shape),
  );
}

function found(match: SubscriptionMatch, attributes: EventAttributes = event): boolean {
  const keys = new Set(lookedUp(match, attributes));
  return routeEntriesOf(match).some((entry) => keys.has(entry.routeKey));
}

describe('route index keys', () => {
  it("EDU-8: a subscription to one person's events of a type sits under a key combining type and subject", () => {
    const entries = routeEntriesOf({
      types: ['nl.edu.leerling.ingeschreven.v1'],
      filters: [{ exact: { subject: 'leerling/42' } }],
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]!.shape).toBe('eq:subject,type');
    expect(
      found({ types: ['nl.edu.leerling.ingeschreven.v1'], filters: [{ exact: { subject: 'leerling/42' } }] }),
    ).toBe(true);
    // Another person's event of the same type reaches another key.
    const other = lookedUp(
      { types: ['nl.edu.leerling.ingeschreven.v1'], filters: [{ exact: { subject: 'leerling/42' } }] },
      { ...event, subject: 'leerling/43' },
    );
    expect(other).not.toContain(entries[0]!.routeKey);
  });

  it('EDU-8: types give one key each; source and types combine', () => {
    expect(routeEntriesOf({ types: ['a.b.v1', 'a.b.v2'] }).map((e) => e.shape)).toEqual(['eq:type', 'eq:type']);
    expect(routeEntriesOf({ source: 's', types: ['a.b.v1'] }).map((e) => e.shape)).toEqual(['eq:source,type']);
  });

  it('EDU-8: a type prefix is found from every event type that starts with it, cut at a separator', () => {
    const match = { filters: [{ prefix: { type: 'nl.edu.leer' } }] as Filter[] };
    expect(routeEntriesOf(match)).toEqual([{ shape: 'pre:type:2', routeKey: 'pre:type:2|nl.edu.' }]);
    expect(found(match)).toBe(true);
    expect(found(match, { ...event, type: 'nl.edu.leer' })).toBe(true);
    expect(lookedUp(match, { ...event, type: 'nl.gov.zaak' })).toEqual(['pre:type:2|nl.gov.']);
  });

  it('EDU-8: without any indexable condition a subscription goes under the catch-all key', () => {
    expect(routeEntriesOf({ filters: [{ suffix: { type: '.v1' } }] })).toEqual([
      { shape: CATCH_ALL_SHAPE, routeKey: CATCH_ALL_SHAPE },
    ]);
    expect(routeEntriesOf({})).toEqual([{ shape: CATCH_ALL_SHAPE, routeKey: CATCH_ALL_SHAPE }]);
  });

  it('EDU-8: a conjunction that can never hold is routed nowhere', () => {
    expect(routeEntriesOf({ types: ['a.v1'], filters: [{ exact: { type: 'b.v1' } }] })).toEqual([]);
  });

  it('EDU-8: an event lacking an attribute of a shape gets no key for it', () => {
    expect(routeKeysOf({ type: 't' }, ['eq:subject,type', 'pre:type:3', 'any'])).toEqual(['any']);
  });

  it('EDU-8: very long values are hashed into a bounded key, the same on both sides', () => {
    const subject = 'x'.repeat(1000);
    const match = { filters: [{ exact: { subject } }] as Filter[] };
    const [entry] = routeEntriesOf(match);
    expect(entry!.routeKey.length).toBeLessThan(100);
    expect(found(match, { ...event, subject })).toBe(true);
  });

  it('EDU-8: a subscription to more types than one key set holds is still found, for each of its types', () => {
    const many = Array.from({ length: 20 }, (_, i) => `nl.edu.type${i}`);
    for (const type of [many[0]!, many[16]!, many[19]!]) {
      const attributes = { ...event, type };
      expect(found({ types: many }, attributes)).toBe(true);
      expect(
        found(
          { types: many, filters: [{ prefix: { subject: 'leerling-' } }] },
          { ...attributes, subject: 'leerling-7' },
        ),
      ).toBe(true);
    }
  });

  it('EDU-8: whenever a subscription matches an event, the router looks up one of its keys (5,000 random cases)', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
    const types = ['nl.edu.a.v1', 'nl.edu.b.v1', 'nl.gov.c', 'x'];
    const sources = ['urn:a', 'urn:b'];
    const subjects = ['p/1', 'p/2', 'p/3'];
    const attribute = () => pick(['type', 'source', 'subject']);
    const valueFor = (name: string) =>
      name === 'type' ? pick(types) : name === 'source' ? pick(sources) : pick(subjects);
    const leaf = (): Filter => {
      const name = attribute();
      const value = valueFor(name);
      const kind = pick(['exact', 'exact', 'prefix', 'suffix']);
      if (kind === 'prefix') return { prefix: { [name]: value.slice(0, 1 + Math.floor(random() * value.length)) } };
      if (kind === 'suffix') return { suffix: { [name]: value.slice(Math.floor(random() * value.length)) } };
      return { exact: { [name]: value } };
    };
    const filter = (depth: number): Filter => {
      const kind = depth > 2 ? 'leaf' : pick(['leaf', 'leaf', 'all', 'any', 'not']);
      if (kind === 'all') return { all: [filter(depth + 1), filter(depth + 1)] };
      if (kind === 'any') return { any: [filter(depth + 1), filter(depth + 1)] };
      if (kind === 'not') return { not: filter(depth + 1) };
      return leaf();
    };
    let matched = 0;
    for (let i = 0; i < 5000; i++) {
      const match: SubscriptionMatch = {
        ...(random() < 0.3 ? { source: pick(sources) } : {}),
        ...(random() < 0.4
          ? {
              types:
                random() < 0.2
                  ? [...types, ...Array.from({ length: 16 }, (_, n) => `nl.other.t${n}`)]
                  : [pick(types), pick(types)],
            }
          : {}),
        ...(random() < 0.8 ? { filters: [filter(0), ...(random() < 0.3 ? [filter(0)] : [])] } : {}),
      };
      const attributes = {
        id: 'e',
        type: pick(types),
        source: pick(sources),
        ...(random() < 0.8 ? { subject: pick(subjects) } : {}),
      };
      if (!subscriptionMatches(match, attributes)) continue;
      matched++;
      expect(found(match, attributes), JSON.stringify({ match, attributes })).toBe(true);
    }
    expect(matched).toBeGreaterThan(500);
  });
});
