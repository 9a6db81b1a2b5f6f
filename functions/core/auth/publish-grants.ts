/**
 * Which client may publish under which `source` (EDU-IN: the receiving intermediary authenticates
 * AND authorises). Without it any holder of `events:publish` could publish as another
 * organisation, reach that organisation's subscribers, and, since duplicates are recognised by
 * `source` + `id` (CE-17), make the router drop the real organisation's next event with that id.
 *
 * Shape (setting KOERIER_PUBLISHERS, context `koerier:publishers`):
 *   { "<client id>": ["<source prefix>", ...] }   — "" allows every source.
 * A client that is not listed may publish nothing.
 */
import type { ValidationIssue } from '../http/problems.js';

export type PublishGrants = Readonly<Record<string, readonly string[]>>;

export class PublishGrantsError extends Error {
  override name = 'PublishGrantsError';
}

export function parsePublishGrants(json: string): PublishGrants {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new PublishGrantsError('publish grants must be JSON: {"<client id>": ["<source prefix>", ...]}');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new PublishGrantsError('publish grants must be an object: {"<client id>": ["<source prefix>", ...]}');
  }
  const grants: Record<string, string[]> = {};
  for (const [client, prefixes] of Object.entries(value)) {
    if (!Array.isArray(prefixes) || !prefixes.every((p): p is string => typeof p === 'string')) {
      throw new PublishGrantsError(`publish grants of "${client}" must be a list of source prefixes`);
    }
    grants[client] = prefixes;
  }
  return grants;
}

/** One issue per event whose source this client may not publish under; empty when all may go. */
export function ungrantedSources(clientId: string, sources: readonly string[], grants: PublishGrants, batch: boolean): ValidationIssue[] {
  const prefixes = Object.hasOwn(grants, clientId) ? grants[clientId]! : [];
  const issues: ValidationIssue[] = [];
  sources.forEach((source, index) => {
    if (prefixes.some((prefix) => source.startsWith(prefix))) return;
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
