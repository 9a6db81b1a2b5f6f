/**
 * GET /.well-known/http-message-signatures-directory (no authentication; issue 12, item 6): the
 * public keys that sign Koerier's deliveries, as a JWK Set (RFC 7517) — the current key first,
 * then the previous ones still published during a rotation. A receiver fetches it, keeps it for
 * at most `max-age`, and fetches again when a delivery names a `keyid` it does not know.
 */
import type { RouteKey } from '../config/resources.js';
import type { KoerierDependencies } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';

/** Short, so a receiver meets a new key soon after a rotation even without an unknown `keyid`. */
const MAX_AGE_SECONDS = 300;

/** What the app reads: its handler (functions/handlers/signing-keys.ts) must compose a builder for each. */
export type SigningKeysAppDependencies = Pick<KoerierDependencies, 'signingKeys'>;

export function signingKeysApp(deps: SigningKeysAppDependencies): HttpApp {
  return async (request) => {
    const route = request.routeKey as RouteKey<'signingKeys'>;
    switch (route) {
      case 'GET /.well-known/http-message-signatures-directory': {
        const keys = await deps.signingKeys.publicKeys();
        return {
          status: 200,
          headers: {
            'content-type': 'application/jwk-set+json',
            'cache-control': `public, max-age=${MAX_AGE_SECONDS}`,
          },
          body: JSON.stringify({ keys }),
        };
      }
      default:
        return unroutedAnswer(request);
    }
  };
}
