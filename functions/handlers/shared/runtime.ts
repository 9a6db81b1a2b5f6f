/**
 * What a handler needs once per Lambda container: the configuration and the token verifier.
 * Built lazily on first use, so importing a handler does no I/O (cold start stays small) and the
 * laptop host can set the environment before the first request.
 */
import { createRemoteJWKSet } from 'jose';
import { authenticate, type Principal, type Scope, type TokenVerification } from '../../core/auth/access-tokens.js';
import type { HttpRequest } from '../../core/http/messages.js';
import { loadConfig, type KoerierConfig } from '../../config.js';
import { admitClient } from './throttling.js';

let config: KoerierConfig | undefined;
let verification: TokenVerification | undefined;

export function runtimeConfig(): KoerierConfig {
  config ??= loadConfig();
  return config;
}

function tokenVerification(): TokenVerification {
  if (!verification) {
    const { auth } = runtimeConfig();
    verification = {
      // jose caches the key set and refetches it (rate-limited) when a token names an unknown kid.
      keys: createRemoteJWKSet(auth.jwksUrl, { timeoutDuration: 3000, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 }),
      issuer: auth.issuer,
      audience: auth.audience,
      rules: auth.tokenRules,
    };
  }
  return verification;
}

/**
 * Authenticates the caller and admits it past its per-client throttle (./throttling.ts), or throws
 * the 401/403/429 problem. Both happen here, before a route can reach DynamoDB, SQS or KMS, so no
 * authenticated route can forget the throttle, and a request without a valid token costs nothing
 * but the signature check.
 */
export async function authenticateRequest(request: HttpRequest, scope: Scope): Promise<Principal> {
  const principal = await authenticate(request.headers['authorization'], scope, tokenVerification());
  admitClient(principal.clientId, scope, runtimeConfig());
  return principal;
}
