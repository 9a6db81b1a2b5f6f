/**
 * The route index conditions of a `sql` filter (issue 32 item 4): the pins of its CESQL expression
 * (cesql/pins.ts) in the shape route-keys.ts combines with the other dialects' conditions, so a
 * subscription whose expression pins `type` (`type = '…'`, `type IN (…)`, `type LIKE 'prefix%'`,
 * or a conjunction holding one) sits under the same keys as an `exact` or `prefix` filter would
 * put it. An expression that pins nothing yields no condition; if nothing else in the
 * subscription narrows it, it sits under the catch-all key and is evaluated for every event the
 * subscriber is entitled to.
 */
import { pinsOf } from '../cesql/index.js';
import { compiledSqlFilter } from '../subscriptions/sql-filter.js';

export type SqlRouteCondition =
  | { readonly kind: 'eq'; readonly values: Readonly<Record<string, string>> }
  | { readonly kind: 'pre'; readonly attribute: string; readonly value: string };

/** A conjunction of alternatives: an event the expression matches satisfies one of each list. */
export function sqlRouteConjuncts(text: string): SqlRouteCondition[][] {
  const compiled = compiledSqlFilter(text);
  if (compiled === undefined) return [];
  return pinsOf(compiled.tree).map((alternatives) =>
    alternatives.map((pin) =>
      pin.kind === 'eq'
        ? { kind: 'eq', values: { [pin.attribute]: pin.value } }
        : { kind: 'pre', attribute: pin.attribute, value: pin.value },
    ),
  );
}
