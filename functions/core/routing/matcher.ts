/**
 * Finds the routable subscriptions an event matches (EDU-8): reads the route index entries of the
 * keys the event satisfies (see `route-keys.ts`), then checks each candidate's full conditions in
 * memory. Reads per event depend on the shapes in use, not on the number of subscriptions.
 *
 * Candidates are cached per container, but only as long as the index's *generation* is unchanged:
 * every change to the index increments it, and the router reads it once per batch of events
 * (`refresh`). So a subscription activated before an event was accepted is always seen for that
 * event, with no staleness window; the cache only saves reads while nothing changes.
 *
 * A batch's keys are read together (`prefetch`) where the index can (`candidatesOfKeys`: DynamoDB
 * reads up to 100 keys in one request), so a request serves many events; a key found empty is
 * cached like any other, until the generation changes.
 */
import type { OrderingSettings } from '../ordering/ordering-settings.js';
import type { ContentMode } from '../cloudevents/index.js';
import type { EventAttributes } from '../subscriptions/filters.js';
import type { DeliveryMode, Subscription } from '../subscriptions/subscription.js';
import { routeKeysOf, subscriptionMatches, type RouteShape, type SubscriptionMatch } from './route-keys.js';

/** What the index keeps per (route key, subscription): enough to decide and to shape the delivery. */
export interface RouteCandidate {
  readonly subscriptionId: string;
  /** The subscribing client: routing checks it is still entitled to the event (EDU-7). */
  readonly owner: string;
  readonly match: SubscriptionMatch;
  readonly contentMode: ContentMode;
  readonly batchSupported: boolean;
  /** `pull`: the router writes the event to the subscription's own queue (docs/PULL.md). */
  readonly delivery: DeliveryMode;
  /** Ordered delivery per key (issue 33): the router marks each event of a key for its lane. */
  readonly ordering?: OrderingSettings;
}

/** What the route index keeps of a subscription: the same for every store that writes the index. */
export function routeCandidateOf(
  subscription: Pick<
    Subscription,
    | 'id'
    | 'owner'
    | 'source'
    | 'types'
    | 'filters'
    | 'zgwAbonnement'
    | 'contentMode'
    | 'batchSupported'
    | 'delivery'
    | 'ordering'
  >,
): RouteCandidate {
  return {
    subscriptionId: subscription.id,
    owner: subscription.owner,
    match: {
      ...(subscription.source === undefined ? {} : { source: subscription.source }),
      ...(subscription.types === undefined ? {} : { types: subscription.types }),
      ...(subscription.filters === undefined ? {} : { filters: subscription.filters }),
      // Read by the router on the event's data (docs/ZGW.md), not by `subscriptionMatches`: no route key holds it.
      ...(subscription.zgwAbonnement === undefined ? {} : { zgwAbonnement: subscription.zgwAbonnement }),
    },
    contentMode: subscription.contentMode,
    batchSupported: subscription.batchSupported,
    delivery: subscription.delivery,
    ...(subscription.ordering === undefined ? {} : { ordering: subscription.ordering }),
  };
}

export interface RouteIndexState {
  /** Increases with every change to the index. */
  readonly generation: number;
  readonly shapes: readonly RouteShape[];
}

/** The route index as the router reads it. */
export interface RouteIndexReader {
  readState(): Promise<RouteIndexState>;
  candidates(routeKey: string): Promise<RouteCandidate[]>;
  /** The candidates of many keys at once (every key in the answer, `[]` when empty). Optional. */
  candidatesOfKeys?(routeKeys: readonly string[]): Promise<ReadonlyMap<string, RouteCandidate[]>>;
}

export interface MatcherOptions {
  /** Route keys whose candidates are kept between batches (least recently used go first). */
  readonly cachedKeys?: number;
}

export class SubscriptionMatcher {
  private state: RouteIndexState | undefined;
  private readonly cache = new Map<string, Promise<RouteCandidate[]>>();
  private readonly cachedKeys: number;

  constructor(
    private readonly index: RouteIndexReader,
    options: MatcherOptions = {},
  ) {
    this.cachedKeys = options.cachedKeys ?? 10_000;
  }

  /** Reads the index generation and shapes; drops the cache when anything changed. Once per batch. */
  async refresh(): Promise<void> {
    const state = await this.index.readState();
    if (state.generation !== this.state?.generation) this.cache.clear();
    this.state = state;
  }

  /**
   * Reads the uncached keys of all these events together, before `match` asks for them one event
   * at a time. If that read fails, nothing is remembered: `match` reads each key on its own, so
   * a key that cannot be read fails only the events that reach it. Call `refresh` first.
   */
  async prefetch(events: readonly EventAttributes[]): Promise<void> {
    const state = this.stateOrThrow();
    if (!this.index.candidatesOfKeys) return;
    const missing = new Set<string>();
    for (const attributes of events)
      for (const key of routeKeysOf(attributes, state.shapes)) if (!this.cache.has(key)) missing.add(key);
    if (missing.size === 0) return;
    const keys = [...missing];
    const loading = this.index.candidatesOfKeys(keys);
    for (const key of keys)
      void this.remember(
        key,
        loading.then((found) => found.get(key) ?? []),
      );
    await loading.catch(() => undefined);
  }

  /** Every candidate whose conditions the event meets, each subscription once. Call `refresh` first. */
  async match(attributes: EventAttributes): Promise<RouteCandidate[]> {
    const keys = routeKeysOf(attributes, this.stateOrThrow().shapes);
    const lists = await Promise.all(keys.map((key) => this.candidatesOf(key)));
    const matched = new Map<string, RouteCandidate>();
    for (const candidate of lists.flat()) {
      if (!matched.has(candidate.subscriptionId) && subscriptionMatches(candidate.match, attributes))
        matched.set(candidate.subscriptionId, candidate);
    }
    return [...matched.values()];
  }

  private candidatesOf(key: string): Promise<RouteCandidate[]> {
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    return this.remember(key, this.index.candidates(key));
  }

  private remember(key: string, loading: Promise<RouteCandidate[]>): Promise<RouteCandidate[]> {
    this.cache.set(key, loading);
    // A failed read is not remembered: the next lookup reads again.
    loading.catch(() => this.cache.get(key) === loading && this.cache.delete(key));
    if (this.cache.size > this.cachedKeys) this.cache.delete(this.cache.keys().next().value!);
    return loading;
  }

  private stateOrThrow(): RouteIndexState {
    if (!this.state) throw new Error('SubscriptionMatcher.refresh must run before match');
    return this.state;
  }
}
