/**
 * The route index's two promises (EDU-8): it never misses a subscription an event matches (a
 * seeded search over generated subscriptions and events), and it stays selective — which
 * condition a subscription is filed under when it has several, and where that choice is capped.
 */
import { describe, expect, it } from 'vitest';
import {
  CATCH_ALL_SHAPE,
  routeEntriesOf,
  routeKeysOf,
  subscriptionMatches,
  type SubscriptionMatch,
} from '../../../functions/core/routing/route-keys.js';
import type { EventAttributes, Filter } from '../../../functions/core/subscriptions/filters.js';

/** Mulberry32: a small seeded generator, so a failure can be replayed. */
function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick };
}

const SOURCES = ['urn:nld:oin:1:systeem:a', 'urn:nld:oin:2:systeem:b'];
const TYPES = ['nl.edu.leerling.ingeschreven.v1', 'nl.edu.leerling.uitgeschreven.v1', 'nl.gov.zaak.gestart.v1'];
const SUBJECTS = ['leerling/1', 'leerling/2', 'zaak/9'];
const REGIONS = ['noord', 'zuid'];

function generatedFilter(random: ReturnType<typeof seeded>, depth = 0): Filter {
  const kind = random.pick(
    depth > 1 ? ['exact', 'prefix', 'suffix'] : ['exact', 'exact', 'prefix', 'suffix', 'all', 'any', 'not'],
  );
  switch (kind) {
    case 'exact':
      return {
        exact: random.pick<Record<string, string>>([
          { subject: random.pick(SUBJECTS) },
          { region: random.pick(REGIONS) },
          { type: random.pick(TYPES) },
          { subject: random.pick(SUBJECTS), region: random.pick(REGIONS) },
        ]),
      };
    case 'prefix':
      return {
        prefix: random.pick<Record<string, string>>([
          { type: random.pick(['nl.', 'nl.edu.', 'nl.edu.leer', 'nl.gov.zaak.']) },
          { subject: random.pick(['leerling/', 'zaak/', 'leer']) },
          { source: 'urn:nld:oin:1:' },
        ]),
      };
    case 'suffix':
      return { suffix: { type: random.pick(['.v1', '.v2']) } };
    case 'all':
      return { all: [generatedFilter(random, depth + 1), generatedFilter(random, depth + 1)] };
    case 'any':
      return { any: [generatedFilter(random, depth + 1), generatedFilter(random, depth + 1)] };
    default:
      return { not: generatedFilter(random, depth + 1) };
  }
}

function generatedMatch(random: ReturnType<typeof seeded>): SubscriptionMatch {
  const match: { source?: string; types?: string[]; filters?: Filter[] } = {};
  if (random.next() < 0.4) match.source = random.pick(SOURCES);
  if (random.next() < 0.6)
    match.types = [...new Set([random.pick(TYPES), ...(random.next() < 0.5 ? [random.pick(TYPES)] : [])])];
  if (random.next() < 0.8)
    match.filters = Array.from({ length: 1 + Math.floor(random.next() * 2) }, () => generatedFilter(random));
  return match;
}

function generatedEvent(random: ReturnType<typeof seeded>, n: number): EventAttributes {
  return {
    id: `e-${n}`,
    specversion: '1.0',
    source: random.pick(SOURCES),
    type: random.pick(TYPES),
    ...(random.next() < 0.8 ? { subject: random.pick(SUBJECTS) } : {}),
    ...(random.next() < 0.7 ? { region: random.pick(REGIONS) } : {}),
  };
}

describe('route index: never misses a match', () => {
  it('EDU-8: for 400 generated subscriptions and 300 generated events, every matching subscription is under a key the event looks up', () => {
    const random = seeded(20260301);
    const matches = Array.from({ length: 400 }, () => generatedMatch(random));
    const entries = matches.map(routeEntriesOf);
    const shapes = new Set(entries.flat().map((entry) => entry.shape));
    let matched = 0;
    const missed: string[] = [];
    for (let n = 0; n < 300; n++) {
      const event = generatedEvent(random, n);
      const keys = new Set(routeKeysOf(event, shapes));
      matches.forEach((match, i) => {
        if (!subscriptionMatches(match, event)) return;
        matched++;
        if (!entries[i]!.some((entry) => keys.has(entry.routeKey)))
          missed.push(`${JSON.stringify(match)} ← ${JSON.stringify(event)}`);
      });
    }
    expect(missed).toEqual([]);
    // The search means something: plenty of pairs matched, through narrow keys as well.
    expect(matched).toBeGreaterThan(2000);
    expect([...shapes].filter((shape) => shape !== CATCH_ALL_SHAPE).length).toBeGreaterThan(5);
  });
});

describe('subscriptionMatches', () => {
  const event: EventAttributes = { id: 'e', source: SOURCES[0]!, type: TYPES[0]!, subject: 'leerling/1' };

  it("EDU-8: the source must be the subscription's source, when it names one", () => {
    expect(subscriptionMatches({ source: SOURCES[0]! }, event)).toBe(true);
    expect(subscriptionMatches({ source: SOURCES[1]! }, event)).toBe(false);
  });

  it('EDU-8: the type must be one of its types; an empty list means any type', () => {
    expect(subscriptionMatches({ types: [TYPES[1]!, TYPES[0]!] }, event)).toBe(true);
    expect(subscriptionMatches({ types: [TYPES[1]!] }, event)).toBe(false);
    expect(subscriptionMatches({ types: [] }, event)).toBe(true);
  });

  it('EDU-8: every filter must hold', () => {
    expect(
      subscriptionMatches({ filters: [{ exact: { subject: 'leerling/1' } }, { prefix: { type: 'nl.edu.' } }] }, event),
    ).toBe(true);
    expect(
      subscriptionMatches({ filters: [{ exact: { subject: 'leerling/1' } }, { prefix: { type: 'nl.gov.' } }] }, event),
    ).toBe(false);
  });
});

describe('route index: selective keys', () => {
  const shapes = (match: SubscriptionMatch) => routeEntriesOf(match).map((entry) => entry.shape);

  it('EDU-8: of more than three equal attributes the key keeps subject, then extensions, then type, then source', () => {
    expect(shapes({ source: 's', types: ['t'], filters: [{ exact: { subject: 'x', region: 'noord' } }] })).toEqual([
      'eq:region,subject,type',
    ]);
    expect(
      shapes({ source: 's', types: ['t'], filters: [{ exact: { region: 'noord', time: '2026-01-01T00:00:00Z' } }] }),
    ).toEqual(['eq:region,source,type']);
    expect(
      shapes({
        source: 's',
        types: ['t'],
        filters: [{ exact: { subject: 'x', id: 'i', dataschema: 'https://s.example/' } }],
      }),
    ).toEqual(['eq:source,subject,type']);
    // Among extensions, by name.
    expect(shapes({ filters: [{ exact: { zeta: '1', alpha: '2', mid: '3', beta: '4' } }] })).toEqual([
      'eq:alpha,beta,mid',
    ]);
  });

  it('EDU-8: an `any` of equalities files the subscription under each alternative, up to 16', () => {
    const anyOf = (n: number): Filter => ({
      any: Array.from({ length: n }, (_, i) => ({ exact: { subject: `s/${i}` } })),
    });
    expect(shapes({ filters: [anyOf(16)] })).toEqual(Array<string>(16).fill('eq:subject'));
    expect(routeEntriesOf({ filters: [anyOf(17)] })).toEqual([{ shape: CATCH_ALL_SHAPE, routeKey: CATCH_ALL_SHAPE }]);
    // An alternative the index cannot express makes the whole `any` unusable.
    expect(routeEntriesOf({ filters: [{ any: [{ exact: { subject: 'a' } }, { suffix: { type: '.v1' } }] }] })).toEqual([
      { shape: CATCH_ALL_SHAPE, routeKey: CATCH_ALL_SHAPE },
    ]);
  });

  it("EDU-8: conditions inside `all` count as the subscription's own", () => {
    expect(shapes({ filters: [{ all: [{ exact: { subject: 'x' } }, { suffix: { type: '.v1' } }] }] })).toEqual([
      'eq:subject',
    ]);
    expect(
      shapes({
        filters: [
          { any: [{ all: [{ exact: { subject: 'x' } }, { prefix: { type: 'nl.' } }] }, { exact: { subject: 'y' } }] },
        ],
      }),
    ).toEqual(['eq:subject', 'eq:subject']);
  });

  it('EDU-8: equalities combine as a cross product while it fits 16 keys; the widest conjunct is dropped first', () => {
    const types = ['a.v1', 'b.v1', 'c.v1', 'd.v1', 'e.v1'];
    const subjects: Filter = { any: ['s/1', 's/2', 's/3', 's/4'].map((subject) => ({ exact: { subject } })) };
    // 5 types x 4 subjects = 20 > 16: the five types go, the four subjects stay.
    expect(shapes({ types, filters: [subjects] })).toEqual(Array<string>(4).fill('eq:subject'));
    // 4 types x 4 subjects = 16: all combined.
    expect(shapes({ types: types.slice(0, 4), filters: [subjects] })).toEqual(
      Array<string>(16).fill('eq:subject,type'),
    );
  });

  it('EDU-8: without equalities the narrowest prefix condition is used', () => {
    const entries = routeEntriesOf({
      filters: [
        { any: [{ prefix: { type: 'nl.edu.' } }, { prefix: { type: 'nl.gov.' } }] },
        { prefix: { subject: 'leerling/' } },
      ],
    });
    expect(entries).toEqual([{ shape: 'pre:subject:1', routeKey: 'pre:subject:1|leerling%2F' }]);
    expect(
      routeEntriesOf({ filters: [{ any: [{ prefix: { type: 'nl.edu.' } }, { prefix: { type: 'nl.gov.' } }] }] }).map(
        (e) => e.routeKey,
      ),
    ).toEqual(['pre:type:2|nl.edu.', 'pre:type:2|nl.gov.']);
  });

  it('EDU-8: a prefix filter on several attributes is filed by `type`, else by the first name', () => {
    expect(shapes({ filters: [{ prefix: { subject: 'leerling/', type: 'nl.edu.' } }] })).toEqual(['pre:type:2']);
    expect(shapes({ filters: [{ prefix: { subject: 'leerling/', source: 'urn:nld:' } }] })).toEqual(['pre:source:2']);
  });

  it('EDU-8: a prefix anchor stops at the eighth separator, and the event is found there', () => {
    const prefix = 'a.b.c.d.e.f.g.h.i.j.';
    const [entry] = routeEntriesOf({ filters: [{ prefix: { type: prefix } }] });
    expect(entry).toEqual({ shape: 'pre:type:8', routeKey: 'pre:type:8|a.b.c.d.e.f.g.h.' });
    expect(routeKeysOf({ type: `${prefix}k.v1` }, [entry!.shape])).toEqual([entry!.routeKey]);
    // An event with fewer separators than the anchor has no key of that shape.
    expect(routeKeysOf({ type: 'a.b.c' }, [entry!.shape])).toEqual([]);
    // A prefix with no separator at all is anchored at depth 0, which every event has.
    expect(routeEntriesOf({ filters: [{ prefix: { type: 'nl' } }] })).toEqual([
      { shape: 'pre:type:0', routeKey: 'pre:type:0|' },
    ]);
    expect(routeKeysOf({ type: 'zz' }, ['pre:type:0'])).toEqual(['pre:type:0|']);
  });

  it('EDU-8: a shape the router does not know, or a damaged depth, gives no key', () => {
    expect(routeKeysOf({ type: 'a.b.c' }, ['pre:type:x', 'pre:type:1.5', 'odd', 'eq'])).toEqual([]);
  });

  it('EDU-8: keys hold their values in clear up to 512 characters, and as a hash of the same shape beyond', () => {
    const shape = 'eq:subject';
    const fits = 'x'.repeat(512 - `${shape}|`.length);
    expect(routeEntriesOf({ filters: [{ exact: { subject: fits } }] })[0]!.routeKey).toBe(`${shape}|${fits}`);
    const over = routeEntriesOf({ filters: [{ exact: { subject: `${fits}x` } }] })[0]!.routeKey;
    expect(over).toMatch(/^eq:subject#[A-Za-z0-9_-]{43}$/);
    expect(routeKeysOf({ subject: `${fits}x` }, [shape])).toEqual([over]);
    // Values are URI-encoded, so a `|` in a value cannot forge another key.
    expect(routeEntriesOf({ filters: [{ exact: { subject: 'a|b', region: 'c' } }] })[0]!.routeKey).toBe(
      'eq:region,subject|c|a%7Cb',
    );
  });

  it('EDU-8: subject outranks extensions, extensions outrank type, and core attributes come last', () => {
    expect(shapes({ filters: [{ exact: { subject: 'x', aa: '1', ab: '2', ac: '3' } }] })).toEqual(['eq:aa,ab,subject']);
    expect(shapes({ filters: [{ exact: { type: 't', xx: '1', yy: '2', zz: '3' } }] })).toEqual(['eq:xx,yy,zz']);
    for (const core of [
      'id',
      'specversion',
      'time',
      'datacontenttype',
      'dataschema',
      'dataref',
      'sequence',
      'sequencetype',
    ]) {
      expect(shapes({ source: 's', types: ['t'], filters: [{ exact: { subject: 'x', [core]: 'v' } }] })).toEqual([
        'eq:source,subject,type',
      ]);
    }
  });

  it('EDU-8: an empty type list is no condition: the subscription is filed under the catch-all, not nowhere', () => {
    expect(routeEntriesOf({ types: [] })).toEqual([{ shape: CATCH_ALL_SHAPE, routeKey: CATCH_ALL_SHAPE }]);
  });

  it('EDU-8: equalities that cannot be combined within 16 keys are not used; a prefix is, else the catch-all', () => {
    const types = Array.from({ length: 17 }, (_, i) => `t${i}.v1`);
    expect(routeEntriesOf({ types })).toEqual([{ shape: CATCH_ALL_SHAPE, routeKey: CATCH_ALL_SHAPE }]);
    expect(shapes({ types, filters: [{ prefix: { subject: 'leerling/' } }] })).toEqual(['pre:subject:1']);
  });

  it('EDU-8: of several prefix conditions the one with the fewest alternatives wins, the first on a tie; 16 alternatives still fit', () => {
    const twoTypes: Filter = { any: [{ prefix: { type: 'nl.edu.' } }, { prefix: { type: 'nl.gov.' } }] };
    expect(shapes({ filters: [{ prefix: { subject: 'leerling/' } }, twoTypes] })).toEqual(['pre:subject:1']);
    expect(shapes({ filters: [{ prefix: { subject: 'leerling/' } }, { prefix: { type: 'nl.edu.' } }] })).toEqual([
      'pre:subject:1',
    ]);
    const sixteen: Filter = { any: Array.from({ length: 16 }, (_, i) => ({ prefix: { subject: `s${i}/` } })) };
    expect(shapes({ filters: [sixteen] })).toEqual(Array<string>(16).fill('pre:subject:1'));
  });

  it('EDU-8: a shape of an unknown kind gives no key, even when it looks like a prefix shape', () => {
    expect(routeKeysOf({ type: 'a.b.c' }, ['odd:type:1'])).toEqual([]);
  });
});
