/**
 * The partners admin API (issue 12, item 3), scope `admin` only: GET /clients,
 * GET/PUT/DELETE /clients/{clientId} (functions/core/partners/partners-admin.ts). Every change runs
 * through the Idempotency-Key guard (EDU-IDEM-3), its ETag replayed with it.
 */
import { scopes } from '../core/auth/access-tokens.js';
import { PartnersAdmin } from '../core/partners/partners-admin.js';
import type { RouteKey } from '../config/resources.js';
import type { KoerierDependencies, GuardedRouteMembers } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';
import { idempotencyGuard } from './idempotency-guard.js';

/** What the app reads: its handler (functions/handlers/partners.ts) must compose a builder for each. */
export type PartnersAppDependencies = Pick<
  KoerierDependencies,
  GuardedRouteMembers | 'partnerStore' | 'credentialCipher'
>;

export function partnersApp(deps: PartnersAppDependencies): HttpApp {
  // Built on the first authenticated request: a refused caller costs no adapter.
  let built: PartnersAdmin | undefined;
  const admin = () =>
    (built ??= new PartnersAdmin({
      store: deps.partnerStore,
      seed: { publishGrants: deps.config.publishGrants, entitlements: deps.config.entitlements },
      audit: deps.log,
      // Issue 34: a partner's ZGW secret is sealed before the directory holds it.
      cipher: deps.credentialCipher,
    }));

  return async (request) => {
    const route = request.routeKey as RouteKey<'partners'>;
    const clientId = request.pathParameters['clientId'] ?? '';
    switch (route) {
      case 'GET /clients':
      case 'GET /clients/{clientId}':
      case 'PUT /clients/{clientId}':
      case 'DELETE /clients/{clientId}':
        break;
      default:
        return unroutedAnswer(request);
    }
    const principal = await deps.authenticate(request, scopes.admin);
    const guarded = idempotencyGuard(deps, request, { replayHeaders: ['etag'] });
    switch (route) {
      case 'GET /clients':
        return admin().list();
      case 'GET /clients/{clientId}':
        return admin().read(clientId);
      case 'PUT /clients/{clientId}':
        return guarded(principal.clientId, route, () => admin().put(principal, clientId, request));
      case 'DELETE /clients/{clientId}':
        return guarded(principal.clientId, route, () => admin().remove(principal, clientId, request));
    }
  };
}
