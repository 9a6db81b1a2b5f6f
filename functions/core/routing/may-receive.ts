/**
 * May this subscription receive this event? One rule, asked wherever Koerier decides to send an
 * event to a subscriber (issue 29, item 3): the router when it routes, a replay when it queues an
 * archived event, a redrive when it sends a dead letter again, and at hand-out — every push
 * attempt (delivery/hand-out-check.ts) and every pull receive (pull/pull-service.ts) — because a grant
 * may have been withdrawn, or the filters changed, after the event was queued.
 *
 * The rule: the subscription's owner is entitled to the event as the partner directory has it now
 * (EDU-7), and the event meets the subscription's `source`, `types` and `filters` as they are now
 * (EDU-8), a ZGW abonnement's filters on kenmerken included (issue 34, docs/ZGW.md). What a caller does with a "no" is its own: the router and a replay do not queue, a
 * redrive keeps the dead letter, a hand-out settles the queued event unsent (docs/SUBSCRIPTIONS.md,
 * "When a subscriber may no longer receive an event").
 */
import { entitledToEvent, type EntitlementSubject, type Entitlements } from '../subscriptions/entitlements.js';
import type { EventAttributes } from '../subscriptions/filters.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { abonnementTakes } from '../zgw/zgw-filters.js';
import { subscriptionMatches } from './route-keys.js';

/** Why a subscription may not receive an event. */
export type WithheldReason = 'not-entitled' | 'no-longer-matches';

/** `receives`, or why not. */
export type ReceiveVerdict = 'receives' | WithheldReason;

/** What the rule reads of a subscription: its owner and its conditions. */
export type Receiver = Pick<Subscription, 'owner' | 'source' | 'types' | 'filters' | 'zgwAbonnement'>;

/** What the rule reads of an event: what the entitlement reads, its context attributes for the filters, its text for an abonnement's. */
export interface ReceivableEvent extends EntitlementSubject {
  readonly attributes: EventAttributes;
  readonly json: string;
}

export function mayReceive(subscription: Receiver, event: ReceivableEvent, entitlements: Entitlements): ReceiveVerdict {
  const entitled = mayReceiveMatched(subscription, event, entitlements);
  if (entitled !== 'receives') return entitled;
  if (!subscriptionMatches(subscription, event.attributes)) return 'no-longer-matches';
  if (!kenmerkenPass(subscription, event)) return 'no-longer-matches';
  return 'receives';
}

/**
 * A ZGW abonnement's filters on kenmerken (issue 34, docs/ZGW.md), which read the event's data and
 * so no route key holds: the router asks this of each candidate it found, `mayReceive` at hand-out.
 */
export function kenmerkenPass(
  subscription: Pick<Subscription, 'zgwAbonnement'>,
  event: Pick<ReceivableEvent, 'type' | 'json'>,
): boolean {
  return subscription.zgwAbonnement === undefined || abonnementTakes(subscription.zgwAbonnement, event);
}

/**
 * The same rule for a subscription the route matcher (matcher.ts) has just found for this event:
 * the matcher checked its conditions with the same `subscriptionMatches` on the same attributes,
 * so only the entitlement is left. Checking the conditions twice cost the router a second CESQL
 * evaluation per match.
 */
export function mayReceiveMatched(
  subscription: Pick<Receiver, 'owner'>,
  event: EntitlementSubject,
  entitlements: Entitlements,
): 'receives' | 'not-entitled' {
  return entitledToEvent(subscription.owner, event, entitlements) ? 'receives' : 'not-entitled';
}
