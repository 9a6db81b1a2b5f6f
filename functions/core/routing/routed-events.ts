/**
 * The router's duplicate check (EDU-IDEM-15, CE-17): events with the same `source` + `id` are
 * routed once within the idempotency window. A marker per event records the routing, and it is
 * marked *routed* only after the deliveries are queued, so a failure in between never drops the
 * event: the retry takes the marker over and routes again.
 *
 * A ledger may mark a whole batch routed with one write (`batch()`, see
 * functions/aws/dynamodb-routed-event-ledger.ts): each marker then names the batch's commit, and a
 * claim counts as routed once that commit lists it.
 *
 * The marker also holds a random `routingId`, fixed at the first attempt. Delivery keys derive
 * from it (`deliveryIdOf`, core/delivery-message/delivery-rules.ts), so a retry after a partial failure gives the deliveries that did get
 * queued the very same Idempotency-Key, and the target can drop the repeats (EDU-IDEM-9).
 */
import { boundedKey, DYNAMODB_LIMITS } from '../ids/bounded-key.js';

export interface EventIdentity {
  readonly source: string;
  readonly id: string;
}

/**
 * Who accepted an event, when, and under which Idempotency-Key (issue 30 item 1): the ingest puts it
 * on the queued message, and the claim writes it on the marker, so the trace reads it with no write
 * of its own. Markers written before it have none.
 */
export interface EventAcceptance {
  /** Epoch ms the ingest accepted it. */
  readonly acceptedAt: number;
  readonly publisher?: string | undefined;
  readonly idempotencyKey?: string | undefined;
  readonly correlationId?: string | undefined;
}

/** Where one routing of an event went, kept with the write that marks it routed (issue 30 item 1). */
export interface RoutedTo {
  /** Epoch ms the router planned the deliveries (their `createdAt`). */
  readonly routedAt: number;
  /** The subscriptions it was queued for, after the entitlement check. */
  readonly subscriptionIds: readonly string[];
}

export type RoutingClaim =
  /** This attempt routes the event; `claimId` proves it to `complete`/`abandon`. */
  | { readonly outcome: 'claimed'; readonly claimId: string; readonly routingId: string }
  /** Routed before, within the window: drop it. `first`: the acceptance that was routed, where the marker holds one. */
  | { readonly outcome: 'duplicate'; readonly first?: EventAcceptance }
  /** Another attempt is routing it right now: try again later. */
  | { readonly outcome: 'busy' };

export interface ClaimOptions {
  /** Epoch ms. */
  readonly now: number;
  /** How long the claim blocks other attempts; longer than the router's timeout. */
  readonly lockMs: number;
  /** How long the event counts as routed (the idempotency window). */
  readonly ttlSeconds: number;
  /** Written on the marker with the claim: the trace's "accepted when, by whom, under which key". */
  readonly acceptance?: EventAcceptance;
}

export interface RoutedEventLedger {
  claim(event: EventIdentity, options: ClaimOptions): Promise<RoutingClaim>;
  /** The deliveries are queued: repeats of the event are duplicates from now on. `routes`: kept for the trace. */
  complete(event: EventIdentity, claimId: string, routes?: RoutedTo): Promise<void>;
  /** Routing failed: release the claim at once, keeping the routing id for the retry. */
  abandon(event: EventIdentity, claimId: string): Promise<void>;
  /**
   * Optional: a ledger for one router invocation, whose claims are marked routed together in one
   * write (`completeAll`) rather than one `complete` each. Same guarantees, fewer writes.
   */
  batch?(): RoutedEventBatch;
  /**
   * Optional: a later acceptance of a routed event was dropped as its duplicate; the marker counts
   * it and keeps the latest, for the trace. Only the duplicate path pays this write.
   */
  noteDuplicate?(event: EventIdentity, acceptance: EventAcceptance): Promise<void>;
}

export interface ClaimedIdentity {
  readonly event: EventIdentity;
  readonly claimId: string;
  /** Where the routing went, kept by the write that marks it routed. */
  readonly routes?: RoutedTo;
}

export interface RoutedEventBatch extends Pick<RoutedEventLedger, 'claim' | 'abandon'> {
  /** These claims' deliveries are queued (`complete` for each, in one write); the batch's other claims stay held. */
  completeAll(claims: readonly ClaimedIdentity[]): Promise<void>;
}

/**
 * The marker's key (a partition key): `routed#<source>#<id>`, each part URI-encoded so no
 * separator can be forged, or its SHA-256 form when that would not fit DynamoDB's 2,048 bytes.
 * Every key that fits is the one earlier versions wrote, so markers already stored still count.
 */
export function routedEventKey(event: EventIdentity): string {
  return boundedKey('routed', [event.source, event.id], DYNAMODB_LIMITS.partitionKeyBytes);
}
