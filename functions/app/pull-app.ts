/**
 * Pull delivery (docs/PULL.md, CARD-7, EDU-17), scope `events:consume`, the caller's own pull
 * subscription only (another client's, or an unknown one, answers 404 as the subscriptions API
 * does; a push subscription 409):
 *   POST /subscriptions/{id}/events/receive       events with their locks
 *   POST /subscriptions/{id}/events/acknowledge   done: delete
 *   POST /subscriptions/{id}/events/release       back to the queue, after an optional delay
 *   POST /subscriptions/{id}/events/renew-lock    keep the lock longer
 *   POST /subscriptions/{id}/events/reject        to the subscription's dead letters
 * Each takes an Idempotency-Key and honours it (EDU-IDEM-3): the same key with the same request
 * answers the first answer again, with no second change; none is required (docs/PULL.md says why).
 */
import { scopes } from '../core/auth/access-tokens.js';
import { KoerierError, problem, problems } from '../core/http/problems.js';
import { PullQueueGone } from '../core/pull/pull-queues.js';
import { PullService } from '../core/pull/pull-service.js';
import { receivedEvents } from '../core/pull/receive-claim-check.js';
import { KEYED_RECEIVE_MAX_BYTES } from '../core/pull/receive-assembly.js';
import { IDEMPOTENCY_KEY_HEADER } from '../core/idempotency/index.js';
import type { SettleAction } from '../core/pull/pull-requests.js';
import type { HttpRequest, HttpResponse } from '../core/http/messages.js';
import type { RouteKey } from '../config/resources.js';
import { claimCheckReading } from './claim-check-reading.js';
import { idempotencyGuard } from './idempotency-guard.js';
import type { KoerierDependencies, GuardedRouteMembers } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';

const SETTLE_ROUTES: Partial<Record<RouteKey<'pull'>, SettleAction>> = {
  'POST /subscriptions/{id}/events/acknowledge': 'acknowledge',
  'POST /subscriptions/{id}/events/release': 'release',
  'POST /subscriptions/{id}/events/renew-lock': 'renew-lock',
  'POST /subscriptions/{id}/events/reject': 'reject',
};

/** What the app reads: its handler (functions/handlers/pull.ts) must compose a builder for each. */
export type PullAppDependencies = Pick<
  KoerierDependencies,
  | GuardedRouteMembers
  | 'clock'
  | 'pullSubscriptions'
  | 'pullQueues'
  | 'rejectionMarks'
  | 'givenUpLocks'
  | 'pollLeases'
  | 'lockTokenKey'
  | 'deliveryState'
  | 'claimCheckStore'
  | 'payloadLedger'
  | 'partners'
  | 'metrics'
  | 'orderedLanes'
  | 'outbox'
>;

export function pullApp(deps: PullAppDependencies): HttpApp {
  const { config, log } = deps;
  const claimCheck = claimCheckReading(deps);
  // Cached (functions/composition/adapters.ts): a deleted subscription shows up as its missing queue, read through then.
  const subscriptions = deps.pullSubscriptions;
  let built: PullService | undefined;
  const service = () =>
    (built ??= new PullService({
      queues: deps.pullQueues,
      rejections: deps.rejectionMarks,
      givenUpLocks: deps.givenUpLocks,
      deadLetters: deps.deliveryState,
      metrics: deps.metrics,
      lockTokenKey: () => deps.lockTokenKey(),
      clock: deps.clock,
      deadLetterRetentionSeconds: config.delivery.deadLetterRetentionSeconds,
      log,
      leases: deps.pollLeases,
      maxPollsPerSubscription: config.pull.maxPollsPerSubscription,
      maxPollsPerClient: config.pull.maxPollsPerClient,
      outgoingEvents: (subscription, events, maxAnswerBytes) =>
        receivedEvents(subscription, events, claimCheck, maxAnswerBytes),
      // Issue 28, item 9: entitlement is checked again on every receive, not only when the router matched.
      entitlements: async () => (await deps.partners.current()).entitlements,
      // Issue 33: an ordered subscription's receive settles its lanes and hands out their heads; an acknowledgement releases the next.
      ordering: { lanes: deps.orderedLanes, outbox: deps.outbox, settlingWindowMs: config.orderingSettlingMs },
    }));

  return async (request) => {
    const route = request.routeKey as RouteKey<'pull'>;
    switch (route) {
      case 'POST /subscriptions/{id}/events/receive':
      case 'POST /subscriptions/{id}/events/acknowledge':
      case 'POST /subscriptions/{id}/events/release':
      case 'POST /subscriptions/{id}/events/renew-lock':
      case 'POST /subscriptions/{id}/events/reject':
        break;
      default:
        return unroutedAnswer(request);
    }
    const principal = await deps.authenticate(request, scopes.consume);
    // Optional: without a key a call runs as before; with one, the guard answers repeats (and a wrong or reused key) first.
    const keyed = request.headers[IDEMPOTENCY_KEY_HEADER] !== undefined;
    const work = () => pull(principal.clientId, route, request, keyed);
    return keyed
      ? idempotencyGuard(deps, request, { replayHeaders: ['cache-control'] })(principal.clientId, route, work)
      : work();
  };

  async function pull(
    clientId: string,
    route: RouteKey<'pull'>,
    request: HttpRequest,
    keyed: boolean,
  ): Promise<HttpResponse> {
    const id = request.pathParameters['id'] ?? '';
    const notFound = () => new KoerierError(problems.notFound(`There is no subscription ${id} for this client.`));
    // A miss reads through: a subscription created a moment ago is not kept from its consumer.
    const subscription = (await subscriptions.get(id)) ?? (await subscriptions.get(id, { fresh: true }));
    // Owner only, also for an admin: the locks are the consumer's, and an admin has the dead-letter API.
    if (!subscription || subscription.owner !== clientId) throw notFound();
    if (subscription.delivery !== 'pull') {
      throw new KoerierError(
        problem(
          409,
          'not-a-pull-subscription',
          `Subscription ${id} delivers by push; only a pull subscription can be received from.`,
        ),
      );
    }
    const action = SETTLE_ROUTES[route];
    try {
      // A receive whose answer is stored for repeats holds no more than the store can keep.
      return action === undefined
        ? await service().receive(clientId, subscription, request.body, keyed ? KEYED_RECEIVE_MAX_BYTES : undefined)
        : await service().settle(clientId, subscription, action, request.body);
    } catch (error) {
      // The cached subscription was deleted meanwhile (its queue with it): the same 404 as a fresh read gives.
      if (error instanceof PullQueueGone && !(await subscriptions.get(id, { fresh: true }))) throw notFound();
      throw error;
    }
  }
}
