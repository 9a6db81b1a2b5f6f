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
 */

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
