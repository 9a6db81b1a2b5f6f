/**
 * OAuth 2.0 client-credentials access tokens (EDU-2, EDU-4): who is calling, and may they?
 * Tokens are JWTs verified with `jose` against the organisation's issuer and its JWKS.
 */
import {
  decodeJwt,
  errors as joseErrors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type JWTVerifyResult,
} from 'jose';
import { KoerierError, problems } from '../http/problems.js';
import type { AccessTokenRules, AccessTokenType, ScopeClaim } from './access-token-rules.js';
import {
  consoleMayUse,
  consoleTokenProblem,
  consoleUserPrincipal,
  USER_POOL_ALGORITHMS,
  type ConsoleUserPool,
} from './console-user-pool.js';
import { VerifiedTokenCache } from './verified-token-cache.js';

/**
 * Asymmetric algorithms only. Leaving out `none` and every HMAC algorithm is what stops a token
 * "signed" with the issuer's public key as an HMAC secret from passing.
 */
export const ACCEPTED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];

/** The most clock difference tolerated on `exp`, `nbf` and `iat`. */
export const CLOCK_TOLERANCE_SECONDS = 60;

export const scopes = {
  publish: 'events:publish',
  consume: 'events:consume',
  manageSubscriptions: 'subscriptions:manage',
  readSubscriptions: 'subscriptions:read',
  readContracts: 'contracts:read',
  writeContracts: 'contracts:write',
  admin: 'admin',
} as const;
export type Scope = (typeof scopes)[keyof typeof scopes];
/** What the console asks a user's identity provider for; a user gets the part of it their organisation grants. */
export const CONSOLE_SCOPES: readonly Scope[] = [
  scopes.readSubscriptions,
  scopes.manageSubscriptions,
  scopes.consume,
  scopes.readContracts,
  scopes.writeContracts,
  scopes.admin,
];
/** A scope a client also holds through another: whoever may manage its subscriptions may read them. */
const INCLUDED_IN: Partial<Record<Scope, readonly Scope[]>> = {
  [scopes.readSubscriptions]: [scopes.manageSubscriptions],
};

export interface Principal {
  /** The confidential client the token was issued to. */
  readonly clientId: string;
  readonly scopes: ReadonlySet<string>;
}

export interface TokenVerification {
  readonly keys: JWTVerifyGetKey;
  readonly issuer: string;
  readonly audience: string;
  readonly rules: AccessTokenRules;
  /** Where the stack created a user pool for the console (issue 16): its tokens too, from the console's client only. */
  readonly consoleUserPool?: ConsoleUserPool;
  /** For tests with a controlled clock. */
  readonly currentDate?: Date;
}

/**
 * Verifies the bearer token in `authorization` and checks it carries `requiredScope`.
 * Throws a KoerierError: 401 with `WWW-Authenticate: Bearer error="invalid_token"` for a missing or
 * bad token, 403 with `error="insufficient_scope"` for a valid token without the scope.
 */
export async function authenticate(
  authorization: string | undefined,
  requiredScope: Scope,
  verification: TokenVerification,
): Promise<Principal> {
  const token = bearerToken(authorization);
  if (!token) throw invalidToken('A bearer access token is required (Authorization: Bearer <token>).');

  // Only client tokens are remembered (./verified-token-cache.ts), so a hit took the client path before.
  const now = (verification.currentDate ?? new Date()).getTime();
  const verifiedTokens = verifiedTokensOf(verification);
  let principal = verifiedTokens.get(token, now);
  if (principal === undefined) {
    // The unverified `iss` only picks which keys and rules verify the token; each path pins its issuer again.
    const pool = verification.consoleUserPool;
    if (pool !== undefined && unverifiedIssuer(token) === pool.issuer) {
      principal = await consoleUserOf(token, pool, verification);
      if (!consoleMayUse(requiredScope)) {
        throw insufficientScope(
          requiredScope,
          `A console user's token only reads; this operation needs the scope "${requiredScope}", which only a confidential client (OAuth 2.0 client credentials) is given (EDU-2).`,
        );
      }
    } else {
      principal = await clientOf(token, verification, now);
    }
  }
  if (!holds(principal, requiredScope))
    throw insufficientScope(requiredScope, `This operation needs the scope "${requiredScope}".`);
  return principal;
}

function holds(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has(scope) || (INCLUDED_IN[scope] ?? []).some((including) => principal.scopes.has(including));
}

function insufficientScope(requiredScope: Scope, detail: string): KoerierError {
  return new KoerierError(problems.forbidden(detail), {
    headers: { 'www-authenticate': `Bearer realm="koerier", error="insufficient_scope", scope="${requiredScope}"` },
  });
}

/**
 * The verified client tokens of each verification (one per container: its key set, issuer,
 * audience and rules), so a token is only ever taken on trust under the settings that checked it.
 */
const verifiedTokensByVerification = new WeakMap<TokenVerification, VerifiedTokenCache<Principal>>();

function verifiedTokensOf(verification: TokenVerification): VerifiedTokenCache<Principal> {
  let cache = verifiedTokensByVerification.get(verification);
  if (cache === undefined) verifiedTokensByVerification.set(verification, (cache = new VerifiedTokenCache()));
  return cache;
}

/** A partner's client-credentials token from the organisation's issuer (RFC 9068, review #17); remembered once it passed every check. */
async function clientOf(token: string, verification: TokenVerification, now: number): Promise<Principal> {
  const { rules } = verification;
  const { payload, protectedHeader: header } = await verified(token, verification.keys, verification, {
    issuer: verification.issuer,
    audience: verification.audience,
    algorithms: ACCEPTED_ALGORITHMS,
  });
  // Signature, issuer, audience, exp and nbf hold; now what makes it an access token of this deployment.
  const type = normalisedType(header.typ);
  if (type === undefined || !acceptedTypes(rules.tokenType).has(type)) {
    throw invalidToken(
      `The token is not an access token: its header "typ" must be ${rules.tokenType === 'at+jwt' ? '"at+jwt"' : '"JWT" or "at+jwt"'}.`,
    );
  }
  requireBoundedLifetime(payload, verification);
  const principal = principalOf(payload, rules);
  if (!principal)
    throw invalidToken(
      `The token names no client: its "${rules.clientIdClaim}" claim is missing or not a non-empty string of printable text.`,
    );
  verifiedTokensOf(verification).set(token, principal, payload.exp!, now);
  return principal;
}

/** A console user's access token from the stack's user pool (./console-user-pool.ts). */
async function consoleUserOf(
  token: string,
  pool: ConsoleUserPool,
  verification: TokenVerification,
): Promise<Principal> {
  const { payload } = await verified(token, pool.keys, verification, {
    issuer: pool.issuer,
    algorithms: USER_POOL_ALGORITHMS,
  });
  const problem = consoleTokenProblem(payload, pool);
  if (problem) throw invalidToken(problem);
  requireBoundedLifetime(payload, verification);
  const principal = consoleUserPrincipal(payload['cognito:groups']);
  if (typeof principal === 'string') throw new KoerierError(problems.forbidden(principal));
  if (!stringClaim(principal.clientId))
    throw new KoerierError(problems.forbidden('The partner group names no client Koerier can key by.'));
  return principal;
}

async function verified(
  token: string,
  keys: JWTVerifyGetKey,
  verification: TokenVerification,
  options: JWTVerifyOptions,
): Promise<JWTVerifyResult> {
  try {
    return await jwtVerify(token, keys, {
      ...options,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['exp', 'iat'],
      ...(verification.currentDate ? { currentDate: verification.currentDate } : {}),
    });
  } catch (error) {
    // The issuer's key set being unreachable is our outage, not the caller's bad token.
    if (
      error instanceof joseErrors.JWKSTimeout ||
      error instanceof joseErrors.JWKSInvalid ||
      error instanceof TypeError
    ) {
      throw new KoerierError(problems.unavailable('The access token cannot be verified right now; retry later.'), {
        headers: { 'retry-after': '5' },
        cause: error,
      });
    }
    throw invalidToken(describeVerificationFailure(error));
  }
}

function requireBoundedLifetime(payload: JWTPayload, verification: TokenVerification): void {
  const now = Math.floor((verification.currentDate ?? new Date()).getTime() / 1000);
  const issuedAt = payload.iat!;
  const expiresAt = payload.exp!;
  if (issuedAt > now + CLOCK_TOLERANCE_SECONDS) throw invalidToken('The token is issued in the future ("iat").');
  if (expiresAt <= issuedAt) throw invalidToken('The token expires before it is issued ("exp" is not after "iat").');
  if (expiresAt - issuedAt > verification.rules.maxLifetimeSeconds) {
    throw invalidToken(
      `The token lives too long: "exp" - "iat" may be at most ${verification.rules.maxLifetimeSeconds} seconds.`,
    );
  }
}

function unverifiedIssuer(token: string): unknown {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}

/** True when the principal holds `scope` (for routes where `admin` widens what a client sees). */
export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has(scope);
}

function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(authorization);
  return match?.[1];
}

/**
 * RFC 7515 §4.1.9: `typ` is a media type, compared case-insensitively, and may omit its
 * `application/` prefix when it has no other `/`. RFC 9068 §4 names `at+jwt` and `application/at+jwt`.
 */
function normalisedType(typ: unknown): string | undefined {
  if (typeof typ !== 'string') return undefined;
  const lower = typ.toLowerCase();
  return lower.includes('/') ? lower : `application/${lower}`;
}

function acceptedTypes(configured: AccessTokenType): ReadonlySet<string> {
  return new Set(configured === 'at+jwt' ? ['application/at+jwt'] : ['application/jwt', 'application/at+jwt']);
}

/** The client from the one configured claim; no fallback, so a user's `sub` never poses as a client. */
function principalOf(payload: JWTPayload, rules: AccessTokenRules): Principal | undefined {
  const clientId = stringClaim(payload[rules.clientIdClaim]);
  if (!clientId) return undefined;
  return { clientId, scopes: new Set(scopesOf(payload, rules.scopeClaims)) };
}

/**
 * From the first configured claim the token carries: a space-separated string (RFC 9068 `scope`)
 * or an array of strings (`scp` of some issuers, Entra ID's `roles`).
 */
function scopesOf(payload: JWTPayload, claims: readonly ScopeClaim[]): string[] {
  for (const claim of claims) {
    const value = payload[claim];
    if (typeof value === 'string') return value.split(' ').filter(Boolean);
    if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  }
  return [];
}

/**
 * The client id keys idempotency entries, rate windows, subscriptions and logs, and is URI-encoded
 * into DynamoDB keys: a claim with control characters or unpaired surrogates (which
 * `encodeURIComponent` cannot encode) names no client we could key anything by.
 */
const UNKEYABLE_TEXT =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && !UNKEYABLE_TEXT.test(value) ? value : undefined;
}

function invalidToken(description: string): KoerierError {
  return new KoerierError(problems.unauthorized(description), {
    headers: {
      'www-authenticate': `Bearer realm="koerier", error="invalid_token", error_description="${description.replace(/"/g, "'")}"`,
    },
  });
}

/** Tell the caller what is wrong with the token, never anything about the keys or the server. */
function describeVerificationFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The token has expired.';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'The token is not valid yet.';
    if (error.claim === 'iss') return 'The token was issued by an issuer Koerier does not trust.';
    if (error.claim === 'aud') return 'The token is not meant for Koerier (audience).';
    if (error.reason === 'missing') return `The token lacks the required "${error.claim}" claim.`;
    return `The token's "${error.claim}" claim is not acceptable.`;
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed)
    return 'The token is signed with an algorithm Koerier does not accept.';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The token signature is invalid.';
  if (error instanceof joseErrors.JWKSNoMatchingKey)
    return 'The token was signed with a key the issuer does not publish.';
  if (error instanceof joseErrors.JWSInvalid || error instanceof joseErrors.JWTInvalid)
    return 'The token is malformed.';
  return 'The token could not be verified.';
}
