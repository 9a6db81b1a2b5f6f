/**
 * The replay API (issue 13, item 2; docs/REPLAY.md), scope `subscriptions:manage` on one's own
 * subscriptions (the GETs `subscriptions:read`, which `subscriptions:manage` includes; `admin`: any subscription):
 *   POST /subscriptions/{id}/replays                   start a replay of a time window (202 + Location)
 *   GET  /subscriptions/{id}/replays                   its replays kept, newest first
 *   GET  /subscriptions/{id}/replays/{replayId}        its progress
 *   POST /subscriptions/{id}/replays/{replayId}/cancel stop it
 * Both POSTs run through the Idempotency-Key guard (EDU-IDEM-3).
 */
import { scopes } from '../core/auth/access-tokens.js';
import { quotasOf } from '../core/quotas/client-quotas.js';
import { ReplayService } from '../core/replay/replay-service.js';
import type { RouteKey } from '../config/resources.js';
import type { KoerierDependencies, GuardedRouteMembers } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';
import { idempotencyGuard } from './idempotency-guard.js';

/** What the app reads: its handler (functions/handlers/replays.ts) must compose a builder for each. */
export type ReplaysAppDependencies = Pick<
  KoerierDependencies,
  GuardedRouteMembers | 'clock' | 'partners' | 'subscriptions' | 'replayStore' | 'replayQueue' | 'quotaHolds'
>;

export function replaysApp(deps: ReplaysAppDependencies): HttpApp {
  // Built per authenticated request, with the partner directory's entitlements and quotas as of now.
  const service = async () => {
    const partners = await deps.partners.current();
    return new ReplayService({
      subscriptions: deps.subscriptions,
      store: deps.replayStore,
      queue: deps.replayQueue,
      entitlements: partners.entitlements,
      clock: deps.clock,
      log: deps.log,
      quota: {
        holds: deps.quotaHolds,
        limitOf: (owner) => quotasOf(owner, deps.config.quotas, partners.quotas).maxConcurrentReplays,
      },
    });
  };

  return async (request) => {
    const route = request.routeKey as RouteKey<'replays'>;
    const id = request.pathParameters['id'] ?? '';
    const replayId = request.pathParameters['replayId'] ?? '';
    switch (route) {
      case 'POST /subscriptions/{id}/replays': {
        const principal = await deps.authenticate(request, scopes.manageSubscriptions);
        const replays = await service();
        return idempotencyGuard(deps, request)(principal.clientId, route, () => replays.start(principal, id, request));
      }
      case 'GET /subscriptions/{id}/replays': {
        const principal = await deps.authenticate(request, scopes.readSubscriptions);
        return (await service()).list(principal, id);
      }
      case 'GET /subscriptions/{id}/replays/{replayId}': {
        const principal = await deps.authenticate(request, scopes.readSubscriptions);
        return (await service()).get(principal, id, replayId);
      }
      case 'POST /subscriptions/{id}/replays/{replayId}/cancel': {
        const principal = await deps.authenticate(request, scopes.manageSubscriptions);
        const replays = await service();
        return idempotencyGuard(deps, request)(principal.clientId, route, () =>
          replays.cancel(principal, id, replayId),
        );
      }
      default:
        return unroutedAnswer(request);
    }
  };
}
