/**
 * Which ordered subscriptions refuse events without their key (issue 33, ORD-1: `ordering.withoutKey`
 * `refuse`), as the ingest reads them: one list per container, read again after a few seconds.
 *
 * The ingest must not read the route index per event (every request is a bill line on AWS). The
 * route index keeps these subscriptions in one place of their own (functions/aws/dynamodb-route-index.ts,
 * `keyRequiringSubscriptions`), so one read gives them all; usually there are none, and then the
 * check costs that one cached read and nothing else. The price of the cache: a subscription switched
 * to `refuse` (or away from it) takes effect at the ingest within `ttlMs` (docs/ORDERING.md, "Events
 * without the key").
 *
 * Matching an event against them is the router's: the same `SubscriptionMatcher` (routing/matcher.ts),
 * here over an index held in memory, built from the same route entries the router's index has.
 */
import type { EventAttributes } from '../subscriptions/filters.js';
import type { Clock } from '../ports/clock.js';
import { SubscriptionMatcher, type RouteCandidate, type RouteIndexReader } from '../routing/matcher.js';
import { routeEntriesOf } from '../routing/route-keys.js';

/** Where the list is read: the route index, in one request (the AWS adapter), or memory in tests. */
export interface KeyRequiringSubscriptionSource {
  /** The routable subscriptions whose `ordering.withoutKey` is `refuse`, as the route index holds them. */
  keyRequiringSubscriptions(): Promise<readonly RouteCandidate[]>;
}

/** The list as one request sees it. */
export interface KeyRequirements {
  /** The subscriptions of the list (empty: nothing to check). */
  readonly subscriptions: readonly RouteCandidate[];
  /** The key attributes they order by: an event that has all of them lacks no key. */
  readonly keyAttributes: ReadonlySet<string>;
  /** The subscriptions of the list whose source, types and filters the event meets (the router's matcher). */
  match(attributes: EventAttributes): Promise<RouteCandidate[]>;
}

export interface OrderingKeyRequirements {
  /** The list, from the cache while it is younger than its time to live, else read again. */
  current(): Promise<KeyRequirements>;
}

const NONE: KeyRequirements = { subscriptions: [], keyAttributes: new Set(), match: async () => [] };

/** The list read at most once per `ttlMs` per container; a failed read is not kept (the next request reads again). */
export function cachedOrderingKeyRequirements(
  source: KeyRequiringSubscriptionSource,
  ttlMs: number,
  clock: Clock,
): OrderingKeyRequirements {
  let cached: { readonly at: number; readonly value: Promise<KeyRequirements> } | undefined;
  return {
    current() {
      const now = clock();
      if (cached && now - cached.at < ttlMs) return cached.value;
      const value = source.keyRequiringSubscriptions().then(keyRequirementsOf);
      const entry = { at: now, value };
      cached = entry;
      value.catch(() => cached === entry && (cached = undefined));
      return value;
    },
  };
}

/** The list with a matcher over it: the router's, on an index of just these subscriptions. */
export async function keyRequirementsOf(subscriptions: readonly RouteCandidate[]): Promise<KeyRequirements> {
  const refusing = subscriptions.filter((candidate) => candidate.ordering?.withoutKey === 'refuse');
  if (refusing.length === 0) return NONE;
  const matcher = new SubscriptionMatcher(indexOf(refusing));
  await matcher.refresh();
  return {
    subscriptions: refusing,
    keyAttributes: new Set(refusing.map((candidate) => candidate.ordering!.key)),
    match: (attributes) => matcher.match(attributes),
  };
}

/** A route index in memory holding these subscriptions under the entries `routeEntriesOf` gives them, as the stored one does. */
function indexOf(subscriptions: readonly RouteCandidate[]): RouteIndexReader {
  const byKey = new Map<string, RouteCandidate[]>();
  const shapes = new Set<string>();
  for (const candidate of subscriptions) {
    for (const { routeKey, shape } of routeEntriesOf(candidate.match)) {
      shapes.add(shape);
      byKey.set(routeKey, [...(byKey.get(routeKey) ?? []), candidate]);
    }
  }
  const state = { generation: 0, shapes: [...shapes] };
  return {
    readState: async () => state,
    candidates: async (routeKey) => byKey.get(routeKey) ?? [],
  };
}
