/**
 * The event trace, GET /events/{source}/{id} (issue 30 item 1): what became of one event — when it
 * was accepted and under which Idempotency-Key, later acceptances dropped as its duplicates, how
 * many subscriptions it was routed to, and per subscription the delivery state and attempts.
 *
 * Who may read it: the event's publisher (every detail of the acceptance and the routed count, but
 * only the subscriptions it owns), the owner of a subscription it was routed to (its own
 * subscriptions, and when it was accepted), and `admin` (everything). Anyone else gets the 404 an
 * unknown event gets, so a trace never tells a stranger that an event exists.
 *
 * Where the parts come from, and why (bench/ counts requests per event): the acceptance and the
 * routing are kept by writes the router makes anyway (the claim, the commit: core/routing); the
 * delivery state is derived here from the attempt history and the dead letters the delivery path
 * writes anyway (event-deliveries.ts). Storing a per-event, per-subscription state would have been
 * a new write on every delivery; the price of deriving is on this read, and a pull subscription's
 * acknowledgement, which Koerier does not record, shows as `queued`.
 */
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import type { AttemptRecord, DeadLetter } from '../delivery/delivery-records.js';
import { KoerierError, problems } from '../http/problems.js';
import type { EventAcceptance, EventIdentity } from '../routing/routed-events.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { MAX_TRACED_ATTEMPTS, type EventDeliveryReader } from './event-deliveries.js';
import type { RoutedEventReader, RoutedEventRecord } from './routed-event-records.js';

export type TracedDeliveryState = 'pending' | 'queued' | 'retrying' | 'delivered' | 'dead-lettered' | 'retired';

export interface TracedAcceptance {
  /** ISO 8601. */
  readonly at: string;
  /** The publisher's own details: to the publisher and operators only. */
  readonly publisher?: string;
  readonly idempotencyKey?: string;
  readonly correlationId?: string;
}

export interface TracedSubscription {
  readonly id: string;
  readonly delivery: 'push' | 'pull';
  readonly state: TracedDeliveryState;
  readonly attemptCount: number;
  /** Oldest first, the newest MAX_TRACED_ATTEMPTS. */
  readonly attempts: readonly Omit<AttemptRecord, 'subscriptionId' | 'events'>[];
  readonly deadLetters?: readonly Pick<DeadLetter, 'deliveryId' | 'deadLetteredAt' | 'reason' | 'detail'>[];
  /** The attempt history since the routing was longer than a trace reads: older attempts may be missing. */
  readonly historyTruncated?: true;
}

export interface EventTrace {
  readonly source: string;
  readonly id: string;
  /** `routing`: accepted, not (yet) routed; `routed`: its deliveries are queued. */
  readonly state: 'routing' | 'routed';
  /** The acceptance that was routed (absent for an event accepted before traces were kept). */
  readonly accepted?: TracedAcceptance;
  /** Later acceptances of the same source + id, dropped as duplicates of `accepted` (EDU-IDEM-15, CE-17). */
  readonly duplicates?: { readonly count: number; readonly latest?: TracedAcceptance };
  readonly routed?: {
    readonly at: string;
    /** How many subscriptions it went to: to the publisher and operators only. */
    readonly subscriptionCount?: number;
  };
  /** The routed subscriptions the caller may see. */
  readonly subscriptions: readonly TracedSubscription[];
}

export interface EventTraceDependencies {
  readonly routedEvents: Pick<RoutedEventReader, 'read'>;
  readonly deliveries: EventDeliveryReader;
  readonly subscriptions: { get(id: string): Promise<Subscription | undefined> };
  readonly now: () => number;
}

/** The caller's trace of the event. Throws the 404 for an unknown event and for a caller who may not see it. */
export async function traceEvent(
  event: EventIdentity,
  caller: Principal,
  deps: EventTraceDependencies,
): Promise<EventTrace> {
  const record = await deps.routedEvents.read(event, deps.now());
  if (record === undefined) throw eventNotFound(event);
  const operator = hasScope(caller, scopes.admin);
  const publisher = record.acceptance?.publisher === caller.clientId;
  const routedIds = record.routing?.subscriptionIds ?? [];
  const routed = await Promise.all(routedIds.map((id) => deps.subscriptions.get(id)));
  const visible = routed.filter(
    (subscription): subscription is Subscription =>
      subscription !== undefined && (operator || subscription.owner === caller.clientId),
  );
  if (!operator && !publisher && visible.length === 0) throw eventNotFound(event);
  const full = operator || publisher;
  const routedAt = record.routing?.routedAt;
  const subscriptions =
    routedAt === undefined
      ? []
      : await Promise.all(
          visible.map(async (subscription) =>
            tracedSubscription(subscription, await deps.deliveries.deliveriesOf(subscription.id, event, routedAt)),
          ),
        );
  return {
    source: event.source,
    id: event.id,
    state: record.state,
    ...(record.acceptance ? { accepted: traced(record.acceptance, full) } : {}),
    ...duplicatesPart(record, full),
    ...(record.routing
      ? {
          routed: {
            at: new Date(record.routing.routedAt).toISOString(),
            ...(full ? { subscriptionCount: record.routing.count } : {}),
          },
        }
      : {}),
    subscriptions,
  };
}

export function eventNotFound(event: EventIdentity): KoerierError {
  return new KoerierError(
    problems.notFound(
      `There is no event with source ${JSON.stringify(event.source)} and id ${JSON.stringify(event.id)} that this client may trace within the idempotency window.`,
    ),
  );
}

/** The state a subscription's delivery of the event is in, from what the delivery path recorded. */
export function deliveryStateOf(
  delivery: 'push' | 'pull',
  attempts: readonly Pick<AttemptRecord, 'at' | 'outcome'>[],
  deadLetters: readonly Pick<DeadLetter, 'deadLetteredAt'>[],
): TracedDeliveryState {
  const newest = attempts.at(-1);
  const lastDead = deadLetters
    .map((dead) => dead.deadLetteredAt)
    .sort()
    .at(-1);
  // A redrive after the dead letter is a new attempt: the newest record says where it stands.
  if (newest && (lastDead === undefined || newest.at > lastDead)) {
    return newest.outcome;
  }
  if (lastDead !== undefined) return 'dead-lettered';
  // Pull: in the subscription's queue, or received and acknowledged (Koerier keeps no record of that).
  return delivery === 'pull' ? 'queued' : 'pending';
}

function tracedSubscription(
  subscription: Subscription,
  found: Awaited<ReturnType<EventDeliveryReader['deliveriesOf']>>,
): TracedSubscription {
  const attempts = found.attempts.map(({ subscriptionId: _s, events: _e, ...attempt }) => attempt);
  return {
    id: subscription.id,
    delivery: subscription.delivery,
    state: deliveryStateOf(subscription.delivery, found.attempts, found.deadLetters),
    attemptCount: attempts.length,
    attempts: attempts.slice(-MAX_TRACED_ATTEMPTS),
    ...(found.deadLetters.length > 0
      ? {
          deadLetters: found.deadLetters.map(({ deliveryId, deadLetteredAt, reason, detail }) => ({
            deliveryId,
            deadLetteredAt,
            reason,
            detail,
          })),
        }
      : {}),
    ...(found.complete ? {} : { historyTruncated: true as const }),
  };
}

function traced(acceptance: EventAcceptance, full: boolean): TracedAcceptance {
  const { acceptedAt, publisher, idempotencyKey, correlationId } = acceptance;
  return {
    at: new Date(acceptedAt).toISOString(),
    ...(full && publisher !== undefined ? { publisher } : {}),
    ...(full && idempotencyKey !== undefined ? { idempotencyKey } : {}),
    ...(correlationId !== undefined ? { correlationId } : {}),
  };
}

function duplicatesPart(record: RoutedEventRecord, full: boolean): Pick<EventTrace, 'duplicates'> {
  if (!full || record.duplicates === undefined) return {};
  const { count, latest } = record.duplicates;
  return { duplicates: { count, ...(latest ? { latest: traced(latest, true) } : {}) } };
}
