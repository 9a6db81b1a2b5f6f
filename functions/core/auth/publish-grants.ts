/**
 * Which client may publish under which `source` (EDU-IN: the receiving intermediary authenticates
 * AND authorises). Without it any holder of `events:publish` could publish as another
 * organisation, reach that organisation's subscribers, and, since duplicates are recognised by
 * `source` + `id` (CE-17), make the router drop the real organisation's next event with that id.
 *
 * Shape (setting KOERIER_PUBLISHERS, context `koerier:publishers`, `publishers` in koerier.local.json):
 *   { "<client id>": ["<source grant>", ...] }
 * A client that is not listed may publish nothing.
 *
 * How a grant covers a source (review #15): whole segments, never a bare string prefix.
 *   - A grant always covers the source equal to it.
 *   - `""` covers every source.
 *   - Otherwise the source must start with the grant AND the grant must end on a segment boundary:
 *     either the grant itself ends with a separator, or the source's next character is one.
 *   - The separator is `:` for a grant that starts with `urn:` (any case), `/` for every other
 *     grant (URLs, paths). So `:` in a URL (a port) and `/` inside a URN are not boundaries.
 *   - Characters are compared exactly (case-sensitive): a source that differs only in case is
 *     another source, for the grants as for the duplicate check.
 * Examples:
 *   grant `urn:nld:oin:0001`      covers `urn:nld:oin:0001`, `urn:nld:oin:0001:lvs`;
 *                                 not    `urn:nld:oin:00012`, `urn:nld:oin:0001/lvs`
 *   grant `urn:nld:oin:0001:`     covers `urn:nld:oin:0001:lvs`;  not `urn:nld:oin:0001` itself
 *   grant `https://school.example` covers `https://school.example/lvs`;
 *                                 not    `https://school.example.evil`, `https://school.example:8443/`
 *   grant `/scholen/a`            covers `/scholen/a`, `/scholen/a/lvs`;  not `/scholen/ab`
 *
 * Grants of different clients must not overlap (review #15): if one source could be covered by
 * grants of two clients, either client could publish the other's events and have the other's
 * next event dropped as a duplicate. Every loader of the configuration (functions/config.ts,
 * lib/stack-config.ts, local/local-config-file.ts) parses through `parsePublishGrants`, so such a
 * configuration never starts. Two grants overlap exactly when one covers the other, so `""` held
 * by one client overlaps every grant of every other client.
 */
import type { ValidationIssue } from '../http/problems.js';
import { segmentPrefixCovers } from './segment-prefix.js';

export type PublishGrants = Readonly<Record<string, readonly string[]>>;

export class PublishGrantsError extends Error {
  override name = 'PublishGrantsError';
}

const SHAPE = '{"<client id>": ["<source grant>", ...]}';

export function parsePublishGrants(json: string): PublishGrants {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new PublishGrantsError(`publish grants must be JSON: ${SHAPE}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new PublishGrantsError(`publish grants must be an object: ${SHAPE}`);
  }
  const grants: Record<string, string[]> = {};
  for (const [client, prefixes] of Object.entries(value)) {
    if (!Array.isArray(prefixes) || !prefixes.every((p): p is string => typeof p === 'string')) {
      throw new PublishGrantsError(`publish grants of "${client}" must be a list of source prefixes`);
    }
    grants[client] = prefixes;
  }
  const overlaps = overlappingGrants(grants);
  if (overlaps.length > 0) {
    const described = overlaps.map(
      ({ first, second }) =>
        `"${first.client}" (grant ${JSON.stringify(first.grant)}) and "${second.client}" (grant ${JSON.stringify(second.grant)})`,
    );
    throw new PublishGrantsError(
      `publish grants of different clients overlap, so each could publish the other's events: ${described.join('; ')}; give each client its own sources`,
    );
  }
  return grants;
}

/** True when `grant` covers `source` by the segment rule above (the rule entitlements follow too: segment-prefix.ts). */
export function grantCovers(grant: string, source: string): boolean {
  return segmentPrefixCovers(grant, source, /^urn:/i.test(grant) ? ':' : '/');
}

export interface GrantOverlap {
  readonly first: { readonly client: string; readonly grant: string };
  readonly second: { readonly client: string; readonly grant: string };
}

/**
 * Every pair of grants of different clients that some source satisfies both of. When a source is
 * covered by two grants, one of them is a prefix of the other ending on its boundary, so that
 * grant covers the other grant as a source: checking coverage both ways finds every overlap.
 */
export function overlappingGrants(grants: PublishGrants): GrantOverlap[] {
  const all = Object.entries(grants).flatMap(([client, list]) =>
    [...new Set(list)].map((grant) => ({ client, grant })),
  );
  const overlaps: GrantOverlap[] = [];
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const first = all[i]!;
      const second = all[j]!;
      if (first.client === second.client) continue;
      if (grantCovers(first.grant, second.grant) || grantCovers(second.grant, first.grant))
        overlaps.push({ first, second });
    }
  }
  return overlaps;
}

/** One issue per event whose source this client may not publish under; empty when all may go. */
export function ungrantedSources(
  clientId: string,
  sources: readonly string[],
  grants: PublishGrants,
  batch: boolean,
): ValidationIssue[] {
  const clientGrants = Object.hasOwn(grants, clientId) ? grants[clientId]! : [];
  const issues: ValidationIssue[] = [];
  sources.forEach((source, index) => {
    if (clientGrants.some((grant) => grantCovers(grant, source))) return;
    issues.push({
      attribute: 'source',
      rule: 'publish-grant',
      requirement: 'EDU-IN',
      message: `Client "${clientId}" may not publish events with source '${source}'.`,
      ...(batch ? { index } : {}),
    });
  });
  return issues;
}
