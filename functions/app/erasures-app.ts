/**
 * The erasure API (issue 31 item 4; docs/PRIVACY.md, "Erasure"), scope `admin` only: an operator
 * erases the events about one person on request (AVG article 17).
 *   POST /erasures        start (202 + Location), through the Idempotency-Key guard (EDU-IDEM-3)
 *   GET  /erasures        the audit records, newest first
 *   GET  /erasures/{id}   one audit record: what was removed where, what could not be reached
 */
import { scopes } from '../core/auth/access-tokens.js';
import { ErasureService } from '../core/erasure/erasure-service.js';
import type { RouteKey } from '../config/resources.js';
import type { KoerierDependencies, GuardedRouteMembers } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';
import { idempotencyGuard } from './idempotency-guard.js';

/** What the app reads: its handler (functions/handlers/erasures.ts) must compose a builder for each. */
export type ErasuresAppDependencies = Pick<
  KoerierDependencies,
  GuardedRouteMembers | 'clock' | 'erasureStore' | 'erasureQueue' | 'lockTokenKey'
>;

export function erasuresApp(deps: ErasuresAppDependencies): HttpApp {
  const service = () =>
    new ErasureService({
      store: deps.erasureStore,
      queue: deps.erasureQueue,
      // One deployment secret, shared by every container; the audit key is derived from it under a label of its own.
      secret: () => deps.lockTokenKey(),
      clock: deps.clock,
      log: deps.log,
    });

  return async (request) => {
    const route = request.routeKey as RouteKey<'erasures'>;
    switch (route) {
      case 'POST /erasures': {
        const principal = await deps.authenticate(request, scopes.admin);
        return idempotencyGuard(deps, request)(principal.clientId, route, () => service().start(principal, request));
      }
      case 'GET /erasures':
        await deps.authenticate(request, scopes.admin);
        return service().list();
      case 'GET /erasures/{id}':
        await deps.authenticate(request, scopes.admin);
        return service().get(request.pathParameters['id'] ?? '');
      default:
        return unroutedAnswer(request);
    }
  };
}
