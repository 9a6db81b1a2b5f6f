/**
 * The one rule by which a grant written as a prefix covers a name (review #15, issue 28 item 14c):
 * whole segments, never a bare string prefix. Publish grants cover sources by it (segments split
 * by `:` in a URN, `/` elsewhere: publish-grants.ts), entitlements cover event types by it
 * (segments split by `.`: subscriptions/entitlements.ts). Without the boundary a grant of
 * `nl.example.case` would also hand out `nl.example.caseworker.secret`.
 *
 *   - `""` covers every name; a grant always covers the name equal to it.
 *   - Otherwise the name must start with the grant AND the grant must end on a segment boundary:
 *     either the grant itself ends with the separator, or the name's next character is one.
 *   - Characters are compared exactly (case-sensitive).
 */

/** True when `grant` covers the one name `name` by whole `separator`-delimited segments. */
export function segmentPrefixCovers(grant: string, name: string, separator: string): boolean {
  if (name === grant || grant === '') return true;
  if (!name.startsWith(grant)) return false;
  return grant.endsWith(separator) || name[grant.length] === separator;
}

/**
 * True when `grant` covers every name that starts with `prefix` (a subscription's prefix filter,
 * which is a plain string prefix): `prefix` must itself lie within the grant's segments, and may
 * equal the grant only when the grant ends on a boundary, since `nl.example.case` as a filter
 * also matches `nl.example.caseworker`.
 */
export function segmentPrefixCoversPrefix(grant: string, prefix: string, separator: string): boolean {
  if (grant === '') return true;
  if (prefix === grant) return grant.endsWith(separator);
  return segmentPrefixCovers(grant, prefix, separator);
}
