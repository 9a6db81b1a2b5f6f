/**
 * Who is calling: the access token verified against the organisation's JWKS, then the caller
 * admitted past its per-client throttle (./client-throttling.ts), or the 401/403/429 problem.
 * Both happen before a route can reach DynamoDB, SQS or KMS, so no authenticated route can forget
 * the throttle, and a request without a valid token costs nothing but the signature check.
 */
import { createRemoteJWKSet } from 'jose';
import { authenticate, type Principal, type Scope, type TokenVerification } from '../core/auth/access-tokens.js';
import type { HttpRequest } from '../core/http/messages.js';
import type { KoerierConfig } from '../config.js';
import type { ClientAdmission } from './client-throttling.js';

export type Authenticator = (request: HttpRequest, scope: Scope) => Promise<Principal>;

/** The key set is fetched on the first request, not here, so building an authenticator does no I/O. */
export function tokenVerification(auth: KoerierConfig['auth']): TokenVerification {
  const pool = auth.consoleUserPool;
  return {
    keys: remoteKeySet(auth.jwksUrl),
    issuer: auth.issuer,
    audience: auth.audience,
    rules: auth.tokenRules,
    ...(pool === undefined
      ? {}
      : { consoleUserPool: { issuer: pool.issuer, clientId: pool.clientId, keys: remoteKeySet(pool.jwksUrl) } }),
  };
}

/** jose caches the key set and refetches it (rate-limited) when a token names an unknown kid. */
function remoteKeySet(url: URL) {
  return createRemoteJWKSet(url, { timeoutDuration: 3000, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
}

export function authenticator(verification: TokenVerification, admission: ClientAdmission): Authenticator {
  return async (request, scope) => {
    const principal = await authenticate(request.headers['authorization'], scope, verification);
    admission.admit(principal.clientId, scope);
    return principal;
  };
}
