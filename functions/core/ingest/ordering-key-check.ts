/**
 * Issue 33, ORD-1: an ordered subscription may say `"withoutKey": "refuse"`. An event that lacks
 * the key attribute of such a subscription, and that the router would route to it, is refused
 * before anything of the request is stored, as an invalid event is: 400, nothing queued, and the
 * idempotency guard stores the refusal (never an acceptance). A batch is refused whole, each such
 * event named by `index`, as the data contract check does (event-policies.ts).
 *
 * "Would route to it" is the router's decision (routing/delivery-plan.ts): the subscription's
 * source, types and filters (the router's matcher, ordering-key-requirements.ts), an abonnement's
 * filters on kenmerken, and the owner's entitlement to the event (EDU-7) as the partner directory
 * holds it now. A subscription the owner may not receive the event on does not refuse it.
 */
import type { ParsedEvents } from '../cloudevents/index.js';
import type { AcceptedEvent } from '../cloudevents/accepted-event.js';
import { KoerierError, problem, problems, type ValidationIssue } from '../http/problems.js';
import { orderingKeyOf } from '../ordering/ordering-settings.js';
import { kenmerkenPass, mayReceiveMatched } from '../routing/may-receive.js';
import type { RouteCandidate } from '../routing/matcher.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { KeyRequirements, OrderingKeyRequirements } from './ordering-key-requirements.js';

export interface OrderingKeyCheck {
  readonly requirements: OrderingKeyRequirements;
  /** The owners' entitlements as the router decides with them: asked only when an event lacks a key asked for. */
  entitlements(): Promise<Entitlements>;
}

/** The requirement the refusal cites (docs/CONFORMANCE.md). */
const REQUIREMENT = 'ORD-1';

/**
 * Throws the 400 `ordering-key-missing` when an event of the request lacks the key of an ordered
 * subscription that refuses such events and would receive it, after `refusing(events)`. A list
 * that cannot be read is a 503: the request may be retried with the same Idempotency-Key.
 */
export async function refuseEventsWithoutOrderingKey(
  outcome: ParsedEvents,
  check: OrderingKeyCheck | undefined,
  refusing: (events: number) => void,
): Promise<void> {
  if (!check) return;
  let requirements: KeyRequirements;
  try {
    requirements = await check.requirements.current();
  } catch (error) {
    throw new KoerierError(
      problem(
        503,
        'unavailable',
        'Koerier could not read which subscriptions refuse events without their key; nothing was accepted. Retry with the same Idempotency-Key.',
      ),
      { headers: { 'retry-after': '1' }, cause: error },
    );
  }
  if (requirements.subscriptions.length === 0) return;
  const lacking = outcome.events.flatMap((event, index) =>
    [...requirements.keyAttributes].some((key) => orderingKeyOf(event.attributes, { key }) === undefined)
      ? [{ event, index }]
      : [],
  );
  if (lacking.length === 0) return;
  const entitlements = await check.entitlements();
  const issues: ValidationIssue[] = [];
  for (const { event, index } of lacking) {
    const refusers = refusersOf(await requirements.match(event.attributes), event, entitlements);
    if (refusers.length > 0) issues.push(issueOf(refusers, outcome.mode === 'batch' ? index : undefined));
  }
  if (issues.length === 0) return;
  refusing(issues.length);
  const first = issues[0]!;
  throw new KoerierError(
    problems.badRequest(
      'ordering-key-missing',
      issues.length === 1
        ? `${first.message} No event of the request was accepted.`
        : `${issues.length} events lack the key an ordered subscription refuses events without (\`withoutKey: refuse\`); \`errors\` names each. No event of the request was accepted.`,
      issues,
    ),
  );
}

/** The subscriptions the router would give this event to that refuse it for its missing key, by id. */
function refusersOf(
  matched: readonly RouteCandidate[],
  event: AcceptedEvent,
  entitlements: Entitlements,
): RouteCandidate[] {
  return matched
    .filter(
      (candidate) =>
        candidate.ordering?.withoutKey === 'refuse' &&
        orderingKeyOf(event.attributes, candidate.ordering) === undefined &&
        kenmerkenPass(candidate.match, event) &&
        mayReceiveMatched(candidate, event, entitlements) === 'receives',
    )
    .sort((a, b) => (a.subscriptionId < b.subscriptionId ? -1 : a.subscriptionId > b.subscriptionId ? 1 : 0));
}

/** One issue per event, naming the first subscription that refuses it (and how many more do): bounded by the batch cap. */
function issueOf(refusers: readonly RouteCandidate[], index: number | undefined): ValidationIssue {
  const [first, ...others] = refusers;
  const key = first!.ordering!.key;
  const more = others.length === 0 ? '' : ` (and ${others.length} more subscription${others.length === 1 ? '' : 's'})`;
  return {
    attribute: key,
    rule: 'ordering-key-required',
    requirement: REQUIREMENT,
    message: `The event has no \`${key}\`: subscription ${first!.subscriptionId} orders its events by \`${key}\` and refuses events without it${more}.`,
    ...(index === undefined ? {} : { index }),
  };
}
