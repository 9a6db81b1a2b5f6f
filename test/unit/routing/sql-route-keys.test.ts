/**
 * Issue 32 item 4: a `sql` filter keeps routing indexed. The conditions its CESQL expression pins
 * go into the route index as the other dialects' do, and the index never misses an event the
 * expression matches.
 */
import { describe, expect, it } from 'vitest';
import {
  CATCH_ALL_SHAPE,
  routeEntriesOf,
  routeKeysOf,
  subscriptionMatches,
  type SubscriptionMatch,
} from '../../../functions/core/routing/route-keys.js';
import { checkEntitlement, parseEntitlements } from '../../../functions/core/subscriptions/entitlements.js';
import type { EventAttributes } from '../../../functions/core/subscriptions/filters.js';

const entriesOf = (sql: string, rest: SubscriptionMatch = {}) =>
  routeEntriesOf({ ...rest, filters: [...(rest.filters ?? []), { sql }] });

describe('CESQL-4, issue 32 item 4: the route index lifts what an expression pins', () => {
  it('CESQL-4, issue 32 item 4: type = , type IN and type LIKE prefix% sit under the keys exact, types and prefix give', () => {
    expect(entriesOf("type = 'nl.edu.leerling.ingeschreven.v1'")).toEqual(
      routeEntriesOf({ filters: [{ exact: { type: 'nl.edu.leerling.ingeschreven.v1' } }] }),
    );
    expect(entriesOf('TYPE in (\'nl.edu.a.v1\', "nl.edu.b.v1")')).toEqual(
      routeEntriesOf({ types: ['nl.edu.a.v1', 'nl.edu.b.v1'] }),
    );
    expect(entriesOf("type LIKE 'nl.edu.leerling.%'")).toEqual(
      routeEntriesOf({ filters: [{ prefix: { type: 'nl.edu.leerling.' } }] }),
    );
    expect(entriesOf("'nl.overheid.zaken.zaak.v1' = type")).toEqual(
      routeEntriesOf({ types: ['nl.overheid.zaken.zaak.v1'] }),
    );
  });

  it('CESQL-4, issue 32 item 4: a conjunction holding a pin is indexed by it, combined with the subscription s source', () => {
    expect(entriesOf("subject <> 'test' AND (type = 'nl.edu.a.v1' AND schoolcode IN ('12AB'))")).toEqual(
      routeEntriesOf({ types: ['nl.edu.a.v1'] }),
    );
    expect(
      entriesOf("type = 'nl.edu.a.v1' AND subject = 'leerling/1'", { source: 'urn:x' }).map((e) => e.shape),
    ).toEqual(['eq:source,subject,type']);
    expect(
      entriesOf("(type = 'nl.edu.a.v1' OR type LIKE 'nl.overheid.%') AND EXISTS subject").map((e) => e.shape),
    ).toEqual(['eq:type', 'pre:type:2']);
  });

  it('CESQL-4, issue 32 item 4: an expression that pins nothing sits under the catch-all key', () => {
    for (const sql of [
      "type LIKE '%.v1'",
      "NOT (type = 'a.v1')",
      "type <> 'a.v1'",
      "type = 'a.v1' OR subject = 'x' OR EXISTS schoolcode",
      "type NOT IN ('a.v1')",
      "type LIKE 'nl._du.%'",
    ])
      expect([sql, entriesOf(sql)]).toEqual([sql, [{ shape: CATCH_ALL_SHAPE, routeKey: CATCH_ALL_SHAPE }]]);
  });

  it('CESQL-4, issue 32 item 4: an integer extension compared with a string literal on the left is not lifted, since 5 = 05 there', () => {
    expect(entriesOf("'05' = leerjaar")).toEqual([{ shape: CATCH_ALL_SHAPE, routeKey: CATCH_ALL_SHAPE }]);
    expect(entriesOf("leerjaar IN ('5')")).toEqual([{ shape: CATCH_ALL_SHAPE, routeKey: CATCH_ALL_SHAPE }]);
    expect(subscriptionMatches({ filters: [{ sql: "'05' = leerjaar" }] }, { type: 't', leerjaar: 5 })).toBe(true);
  });
});

describe('CESQL-4, issue 32 item 4: never misses a match', () => {
  const TYPES = ['nl.edu.leerling.ingeschreven.v1', 'nl.edu.leerling.uitgeschreven.v1', 'nl.overheid.zaken.zaak.v1'];
  const ATOMS = [
    ...TYPES.map((t) => `type = '${t}'`),
    `type IN ('${TYPES[0]}', '${TYPES[2]}')`,
    "type LIKE 'nl.edu.%'",
    "type LIKE 'nl.edu.leerling.in%'",
    "type LIKE 'nl.overheid.zaken.zaak.v1'",
    "type LIKE '%.v1'",
    "subject = 'leerling/1'",
    "subject LIKE 'leerling/%'",
    "region IN ('noord', 'zuid')",
    "region = 'noord'",
    'EXISTS region',
    'leerjaar = 3',
    "leerjaar = '3'",
  ];
  let seed = 32;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const expression = (depth = 0): string => {
    const roll = next();
    if (depth > 2 || roll < 0.4) return pick(ATOMS);
    if (roll < 0.5) return `NOT (${expression(depth + 1)})`;
    const operator = pick(['AND', 'AND', 'OR', 'XOR']);
    return `(${expression(depth + 1)} ${operator} ${expression(depth + 1)})`;
  };
  const event = (n: number): EventAttributes => ({
    id: `e-${n}`,
    specversion: '1.0',
    source: 'urn:x',
    type: pick(TYPES),
    ...(next() < 0.7 ? { subject: pick(['leerling/1', 'leerling/2', 'zaak/9']) } : {}),
    ...(next() < 0.6 ? { region: pick(['noord', 'zuid', 'west']) } : {}),
    ...(next() < 0.5 ? { leerjaar: pick([3, 4]) } : {}),
  });

  it('CESQL-4, issue 32 item 4: for 400 generated expressions and 300 events, every match is under a key the event looks up', () => {
    const matches: SubscriptionMatch[] = Array.from({ length: 400 }, () => ({ filters: [{ sql: expression() }] }));
    const entries = matches.map(routeEntriesOf);
    const shapes = new Set(entries.flat().map((entry) => entry.shape));
    const missed: string[] = [];
    let matched = 0;
    for (let n = 0; n < 300; n++) {
      const attributes = event(n);
      const keys = new Set(routeKeysOf(attributes, shapes));
      matches.forEach((match, i) => {
        if (!subscriptionMatches(match, attributes)) return;
        matched++;
        if (!entries[i]!.some((entry) => keys.has(entry.routeKey)))
          missed.push(`${JSON.stringify(match)} ← ${JSON.stringify(attributes)}`);
      });
    }
    expect(missed).toEqual([]);
    expect(matched).toBeGreaterThan(5000);
    const indexed = entries.filter((list) => list.every((entry) => entry.shape !== CATCH_ALL_SHAPE)).length;
    expect(indexed).toBeGreaterThan(150);
  });
});

describe('CESQL-4, issue 32 item 4: entitlements read the type an expression pins', () => {
  const entitlements = parseEntitlements(JSON.stringify({ school: [{ typePrefix: 'nl.edu.' }] }));
  const check = (sql: string) => checkEntitlement('school', { filters: [{ sql }] }, entitlements).entitled;

  it('CESQL-4, issue 32 item 4: a subscriber granted nl.edu. may subscribe with sql pinning nl.edu. types, and not others', () => {
    expect(check("type LIKE 'nl.edu.leerling.%' AND subject <> 'test'")).toBe(true);
    expect(check("type IN ('nl.edu.a.v1', 'nl.edu.b.v1')")).toBe(true);
    expect(check("type IN ('nl.edu.a.v1', 'nl.overheid.b.v1')")).toBe(false);
    expect(check("type LIKE 'nl.overheid.%'")).toBe(false);
    expect(check("subject = 'leerling/1'")).toBe(false);
  });
});
