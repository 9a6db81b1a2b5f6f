/**
 * Push delivery administration (EDU-18), scope `subscriptions:manage` on one's own subscriptions
 * (the GETs `subscriptions:read`, which `subscriptions:manage` includes; `admin` widens to every subscription):
 *   GET  /subscriptions/{id}/deliveries              recent attempts
 *   GET  /subscriptions/{id}/dead-letters            dead letters
 *   POST /subscriptions/{id}/dead-letters/redrive    send dead letters again
 *   POST /subscriptions/{id}/pause                   pause a push subscription (suspended, `paused`)
 *   POST /subscriptions/{id}/resume                  resume a suspended subscription
 * and, scope `admin` only:
 *   POST /deliveries/dead-letter-queue/redrive       move what the queue's redrive policy caught back
 * and, for the event's publisher (`events:publish`), the owners of subscriptions it reached
 * (`subscriptions:read`) and `admin` (core/trace/event-trace.ts says who sees what):
 *   GET  /events/{source}/{id}                       one event's trace (issue 30 item 1)
 * and, with the same scopes, for the sources the caller's publish grants cover (`admin`: all):
 *   GET  /events                                     archived events by type, source and time (issue 30 item 4)
 * Every POST runs through the Idempotency-Key guard (EDU-IDEM-3).
 */
import { scopes, type Principal, type Scope } from '../core/auth/access-tokens.js';
import { KoerierError } from '../core/http/problems.js';
import type { HttpRequest } from '../core/http/messages.js';
import { traceEvent } from '../core/trace/event-trace.js';
import { readEventSearchQuery, searchEvents } from '../core/trace/event-search.js';
import { DeliveryAdmin } from '../core/delivery/delivery-admin.js';
import { jsonResponse } from '../core/http/messages.js';
import type { RouteKey } from '../config/resources.js';
import type { KoerierDependencies, GuardedRouteMembers } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';
import { idempotencyGuard } from './idempotency-guard.js';

/** Any one of these lets a client ask for a trace; which trace it then sees is core/trace's rule. */
const TRACE_SCOPES: readonly Scope[] = [scopes.readSubscriptions, scopes.publish, scopes.admin];
/**
 * The trace's scopes: a search shows a client the events of the sources its publish grants cover,
 * an operator all (core/trace/event-search.ts), so a console user of the publisher's organisation
 * (read scopes only, EDU-2) finds its own events too.
 */
const SEARCH_SCOPES = TRACE_SCOPES;
const DAY_MS = 86_400_000;

/**
 * The principal if the token carries any of `wanted`, tried in order (a verified token is cached,
 * so a second try costs no verification); else the refusal of the last one.
 */
async function authenticateAnyOf(
  deps: Pick<KoerierDependencies, 'authenticate'>,
  request: HttpRequest,
  wanted: readonly Scope[],
): Promise<Principal> {
  for (const [index, scope] of wanted.entries()) {
    try {
      return await deps.authenticate(request, scope);
    } catch (error) {
      // Only a missing scope moves on to the next; a bad token is refused at once.
      if (!(error instanceof KoerierError) || error.problem.status !== 403 || index === wanted.length - 1) throw error;
    }
  }
  throw new Error('no scope to authenticate with');
}

/** Messages one dead-letter-queue redrive moves at most; call again for more. */
const MAX_QUEUE_REDRIVE = 1000;

/** What the app reads: its handler (functions/handlers/delivery-admin.ts) must compose a builder for each. */
export type DeliveryAdminAppDependencies = Pick<
  KoerierDependencies,
  | GuardedRouteMembers
  | 'deliveryQueue'
  | 'deliveryState'
  | 'operationalEvents'
  | 'partners'
  | 'outbox'
  | 'subscriptions'
  | 'routedEventRecords'
  | 'eventDeliveries'
  | 'eventArchive'
  | 'clock'
>;

export function deliveryAdminApp(deps: DeliveryAdminAppDependencies): HttpApp {
  const { config, log } = deps;
  // Built for each authenticated request (a refused caller costs no adapter), with the partner
  // directory's entitlements as of now (within its refresh interval).
  const deliveryAdmin = async () =>
    new DeliveryAdmin({
      targets: deps.deliveryState,
      breaker: config.delivery.breaker,
      ledger: deps.deliveryState,
      deadLetters: deps.deliveryState,
      subscriptions: deps.subscriptions,
      // A pull subscription's dead letters go back into its own queue (docs/PULL.md).
      outbox: deps.outbox,
      audit: log,
      entitlements: (await deps.partners.current()).entitlements,
      sinkCredentials: config.sinkCredentials,
      operations: deps.operationalEvents,
    });

  return async (request) => {
    const route = request.routeKey as RouteKey<'deliveryAdmin'>;
    const guarded = idempotencyGuard(deps, request);
    const id = request.pathParameters['id'] ?? '';
    switch (route) {
      case 'POST /deliveries/dead-letter-queue/redrive': {
        const principal = await deps.authenticate(request, scopes.admin);
        return guarded(principal.clientId, route, async () => {
          const moved = await deps.deliveryQueue.redriveDeadLetterQueue(MAX_QUEUE_REDRIVE);
          log.info('dead-letter queue redriven', { by: principal.clientId, moved });
          return jsonResponse(202, { moved, more: moved === MAX_QUEUE_REDRIVE });
        });
      }
      case 'GET /subscriptions/{id}/deliveries': {
        const principal = await deps.authenticate(request, scopes.readSubscriptions);
        return (await deliveryAdmin()).listAttempts(principal, id, request);
      }
      case 'GET /subscriptions/{id}/health': {
        const principal = await deps.authenticate(request, scopes.readSubscriptions);
        return (await deliveryAdmin()).health(principal, id);
      }
      case 'GET /subscriptions/{id}/dead-letters': {
        const principal = await deps.authenticate(request, scopes.readSubscriptions);
        return (await deliveryAdmin()).listDeadLetters(principal, id, request);
      }
      case 'POST /subscriptions/{id}/dead-letters/redrive': {
        const principal = await deps.authenticate(request, scopes.manageSubscriptions);
        const admin = await deliveryAdmin();
        return guarded(principal.clientId, route, () => admin.redrive(principal, id, request));
      }
      case 'POST /subscriptions/{id}/pause': {
        const principal = await deps.authenticate(request, scopes.manageSubscriptions);
        const admin = await deliveryAdmin();
        return guarded(principal.clientId, route, () => admin.pause(principal, id));
      }
      case 'POST /subscriptions/{id}/resume': {
        const principal = await deps.authenticate(request, scopes.manageSubscriptions);
        const admin = await deliveryAdmin();
        return guarded(principal.clientId, route, () => admin.resume(principal, id));
      }
      case 'GET /events/{source}/{id}': {
        const principal = await authenticateAnyOf(deps, request, TRACE_SCOPES);
        const event = { source: request.pathParameters['source'] ?? '', id: request.pathParameters['id'] ?? '' };
        const trace = await traceEvent(event, principal, {
          routedEvents: deps.routedEventRecords,
          deliveries: deps.eventDeliveries,
          subscriptions: deps.subscriptions,
          now: deps.clock,
        });
        return jsonResponse(200, trace);
      }
      case 'GET /events': {
        const principal = await authenticateAnyOf(deps, request, SEARCH_SCOPES);
        const query = readEventSearchQuery(request);
        const found = await searchEvents(query, principal, {
          archive: deps.eventArchive,
          publishGrants: (await deps.partners.current()).publishGrants,
          now: deps.clock(),
          retentionMs: config.archive.retentionDays * DAY_MS,
        });
        return jsonResponse(200, found);
      }
      default:
        return unroutedAnswer(request);
    }
  };
}
