/**
 * In-memory stand-ins for the router's two stores — the route index and the routed-events ledger
 * — with the semantics of their DynamoDB implementation (functions/aws/route-index-repository.ts),
 * plus switches to make one record's store call fail. The
 * router's own logic (routeInboundEvents, SubscriptionMatcher, routeEntriesOf) runs for real.
 */
import { randomUUID } from 'node:crypto';
import type { Entitlements, Grant } from '../../../functions/core/subscriptions/entitlements.js';
import type { RouteCandidate, RouteIndexReader, RouteIndexState } from '../../../functions/core/routing/matcher.js';
import { routeEntriesOf } from '../../../functions/core/routing/route-keys.js';
import type {
  ClaimOptions,
  EventAcceptance,
  EventIdentity,
  RoutedEventLedger,
  RoutedTo,
  RoutingClaim,
} from '../../../functions/core/routing/routed-events.js';

export class InMemoryRouteIndex implements RouteIndexReader {
  generation = 1;
  readonly candidateReads: string[] = [];
  /** Route keys whose read fails (a throttled Query). */
  readonly failingKeys = new Set<string>();
  readonly #byKey = new Map<string, RouteCandidate[]>();
  readonly #shapes = new Set<string>();

  add(candidate: RouteCandidate): this {
    for (const entry of routeEntriesOf(candidate.match)) {
      this.#byKey.set(entry.routeKey, [...(this.#byKey.get(entry.routeKey) ?? []), candidate]);
      this.#shapes.add(entry.shape);
    }
    this.generation++;
    return this;
  }

  async readState(): Promise<RouteIndexState> {
    return { generation: this.generation, shapes: [...this.#shapes] };
  }

  async candidates(routeKey: string): Promise<RouteCandidate[]> {
    this.candidateReads.push(routeKey);
    if (this.failingKeys.has(routeKey)) throw new Error(`route index read failed for ${routeKey}`);
    return this.stored(routeKey);
  }

  protected stored(routeKey: string): RouteCandidate[] {
    return structuredClone(this.#byKey.get(routeKey) ?? []);
  }
}

/** The route index of DynamoDB, which can also read many keys in one request (`candidatesOfKeys`). */
export class BatchReadingRouteIndex extends InMemoryRouteIndex {
  /** The keys of each many-keys request, in the order asked. */
  readonly batchReads: string[][] = [];

  async candidatesOfKeys(routeKeys: readonly string[]): Promise<ReadonlyMap<string, RouteCandidate[]>> {
    this.batchReads.push([...routeKeys]);
    return new Map(routeKeys.map((key) => [key, this.stored(key)]));
  }
}

type Marker = {
  state: 'claimed' | 'routed';
  claimId: string;
  routingId: string;
  lockUntil: number;
  acceptance?: EventAcceptance | undefined;
};

export class InMemoryLedger implements RoutedEventLedger {
  readonly claims: { event: EventIdentity; options: ClaimOptions }[] = [];
  readonly completed: string[] = [];
  readonly abandoned: string[] = [];
  /** Where each completed event went, by event id (issue 30 item 1). */
  readonly routes = new Map<string, RoutedTo | undefined>();
  /** Acceptances noted as dropped duplicates (issue 30 item 1). */
  readonly duplicatesNoted: { event: EventIdentity; acceptance: EventAcceptance }[] = [];
  /** Event ids whose claim, completion or release throws. */
  readonly failing = { claim: new Set<string>(), complete: new Set<string>(), abandon: new Set<string>() };
  readonly #markers = new Map<string, Marker>();

  markRouted(event: EventIdentity, acceptance?: EventAcceptance): void {
    this.#markers.set(`${event.source}#${event.id}`, {
      state: 'routed',
      claimId: 'old',
      routingId: randomUUID(),
      lockUntil: 0,
      acceptance,
    });
  }

  acceptanceOf(event: EventIdentity): EventAcceptance | undefined {
    return this.#markers.get(`${event.source}#${event.id}`)?.acceptance;
  }

  async noteDuplicate(event: EventIdentity, acceptance: EventAcceptance): Promise<void> {
    this.duplicatesNoted.push({ event, acceptance });
  }

  /** The marker's TTL has passed (the idempotency window is over). */
  forget(event: EventIdentity): void {
    this.#markers.delete(`${event.source}#${event.id}`);
  }

  markBusy(event: EventIdentity, until: number): void {
    this.#markers.set(`${event.source}#${event.id}`, {
      state: 'claimed',
      claimId: 'other',
      routingId: randomUUID(),
      lockUntil: until,
    });
  }

  async claim(event: EventIdentity, options: ClaimOptions): Promise<RoutingClaim> {
    this.claims.push({ event, options });
    if (this.failing.claim.has(event.id)) throw new Error('ledger write failed');
    const key = `${event.source}#${event.id}`;
    const marker = this.#markers.get(key);
    if (marker?.state === 'routed')
      return marker.acceptance ? { outcome: 'duplicate', first: marker.acceptance } : { outcome: 'duplicate' };
    if (marker && marker.lockUntil > options.now) return { outcome: 'busy' };
    const claimId = randomUUID();
    const routingId = marker?.routingId ?? randomUUID();
    this.#markers.set(key, {
      state: 'claimed',
      claimId,
      routingId,
      lockUntil: options.now + options.lockMs,
      acceptance: marker?.acceptance ?? options.acceptance,
    });
    return { outcome: 'claimed', claimId, routingId };
  }

  async complete(event: EventIdentity, claimId: string, routes?: RoutedTo): Promise<void> {
    if (this.failing.complete.has(event.id)) throw new Error('ledger write failed');
    this.routes.set(event.id, routes);
    const key = `${event.source}#${event.id}`;
    const marker = this.#markers.get(key);
    if (marker?.claimId === claimId) this.#markers.set(key, { ...marker, state: 'routed' });
    this.completed.push(event.id);
  }

  async abandon(event: EventIdentity, claimId: string): Promise<void> {
    if (this.failing.abandon.has(event.id)) throw new Error('ledger write failed');
    const key = `${event.source}#${event.id}`;
    const marker = this.#markers.get(key);
    if (marker?.claimId === claimId) this.#markers.set(key, { ...marker, lockUntil: 0 });
    this.abandoned.push(event.id);
  }
}

export const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:lvs';

/** A stored event (JSON event format), as the ingest keeps it. */
export function storedEvent(id: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    specversion: '1.0',
    id,
    source: SOURCE,
    type: 'nl.edu.leerling.ingeschreven.v1',
    subject: `leerling/${id}`,
    ...extra,
    data: { id },
  });
}

export function candidate(subscriptionId: string, over: Partial<RouteCandidate> = {}): RouteCandidate {
  return {
    subscriptionId,
    owner: 'client-a',
    match: { types: ['nl.edu.leerling.ingeschreven.v1'] },
    contentMode: 'structured',
    batchSupported: false,
    delivery: 'push',
    ...over,
  };
}

/**
 * Entitlements that grant every type to each owner `entitled` accepts (a grant of every type, "",
 * as KOERIER_ENTITLEMENTS writes it), and nothing to the rest; `asked` lists the owners looked up.
 */
export function entitledOwners(entitled: (owner: string) => boolean = () => true): Entitlements & { asked: string[] } {
  const asked: string[] = [];
  const grants = new (class extends Map<string, readonly Grant[]> {
    override get(owner: string): readonly Grant[] | undefined {
      asked.push(owner);
      return entitled(owner) ? [{ typePrefix: '' }] : undefined;
    }
  })();
  return Object.assign(grants, { asked });
}
