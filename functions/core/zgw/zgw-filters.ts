/**
 * How Open Notificaties relates kenmerken and filters (issue 34), as its data model decides:
 *
 * - a notificatie's kenmerken, and an abonnement's filters on a kanaal, must be *consistent* with
 *   the kanaal's filters: their names a subset or a superset of the kanaal's (`match_filter_names`).
 *   A kanaal with filters `[bron, zaaktype]` takes kenmerken `{bron}` and `{bron, zaaktype, x}`
 *   but refuses `{bron, x}`.
 * - an abonnement's filter group matches a notificatie when each of its filters whose key the
 *   notificatie has holds `*` or exactly the notificatie's value; a filter whose key the
 *   notificatie lacks does not count against it (`match_pattern`).
 * - an abonnement takes a notificatie when one of its filter groups for the notificatie's kanaal
 *   matches (`_get_subs`): with two groups on one kanaal, either lets it through.
 */
import type { EventText } from '../cloudevents/event-text.js';
import type { ZgwAbonnementTerms } from '../subscriptions/subscription.js';
import { KENMERKEN_ATTRIBUTE, stringMembers, ZGW_TYPE_PREFIX } from './notificatie-mapping.js';

/** Whether `names` are a subset or a superset of the kanaal's `filters`. */
export function consistentWithKanaal(kanaalFilters: readonly string[], names: readonly string[]): boolean {
  const kanaal = new Set(kanaalFilters);
  const given = new Set(names);
  const subset = [...given].every((name) => kanaal.has(name));
  const superset = [...kanaal].every((name) => given.has(name));
  return subset || superset;
}

/** Whether an abonnement's filters on a kanaal let a notificatie with these kenmerken through. */
export function filtersMatch(
  filters: Readonly<Record<string, string>>,
  kenmerken: Readonly<Record<string, string>>,
): boolean {
  return Object.entries(filters).every(([key, wanted]) => {
    const value = kenmerken[camelCase(key)];
    return value === undefined || wanted === '*' || wanted === value;
  });
}

/** Open Notificaties camelizes filter keys before matching (kenmerken arrive camelCased): `zaak_type` → `zaakType`. */
function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Whether the abonnement behind a subscription takes this event: one of its groups for the event's
 * kanaal (the type's `nl.overheid.<kanaal>.`) lets the event's kenmerken through: those of its
 * `zgwkenmerken` attribute, which the adapter writes and the claim check leaves in place, else those
 * in its `data`. The event is parsed only when such a group has filters. An event with neither (one
 * another publisher sent) has no kenmerk to hold against a filter: it passes.
 */
export function abonnementTakes(terms: ZgwAbonnementTerms, event: Pick<EventText, 'type' | 'json'>): boolean {
  const groups = terms.kanalen.filter((group) => event.type.startsWith(`${ZGW_TYPE_PREFIX}${group.naam}.`));
  if (groups.some((group) => Object.keys(group.filters).length === 0)) return true;
  if (groups.length === 0) return false;
  const kenmerken = kenmerkenOf(event);
  return groups.some((group) => filtersMatch(group.filters, kenmerken));
}

function kenmerkenOf(event: Pick<EventText, 'json'>): Record<string, string> {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(event.json) as Record<string, unknown>;
  } catch {
    return {};
  }
  const attribute = parsed[KENMERKEN_ATTRIBUTE];
  if (typeof attribute === 'string') {
    try {
      return stringMembers(JSON.parse(attribute));
    } catch {
      return {};
    }
  }
  const data = parsed['data'];
  return stringMembers(
    typeof data === 'object' && data !== null ? (data as Record<string, unknown>)['kenmerken'] : undefined,
  );
}
