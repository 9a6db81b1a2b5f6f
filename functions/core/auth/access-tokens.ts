/**
 * OAuth 2.0 client-credentials access tokens (EDU-2, EDU-4): who is calling, and may they?
 * Tokens are JWTs verified with `jose` against the organisation's issuer and its JWKS.
 */
import { errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { problems, ProblemError } from '../http/problems.js';

/**
 * Asymmetric algorithms only. Leaving out `none` and every HMAC algorithm is what stops a token
 * "signed" with the issuer's public key as an HMAC secret from passing.
 */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/** The most clock difference tolerated on `exp` and `nbf`. */
export const CLOCK_TOLERANCE_SECONDS = 60;

export const scopes = {
  publish: 'events:publish',
  consume: 'events:consume',
  manageSubscriptions: 'subscriptions:manage',
  readContracts: 'contracts:read',
  writeContracts: 'contracts:write',
  admin: 'admin',
} as const;
export type Scope = (typeof scopes)[keyof typeof scopes];

export interface Principal {
  /** The confidential client the token was issued to. */
  readonly clientId: string;
  readonly scopes: ReadonlySet<string>;
}

export interface TokenVerification {
  readonly keys: JWTVerifyGetKey;
  readonly issuer: string;
  readonly audience: string;
  /** For tests with a controlled clock. */
  readonly currentDate?: Date;
}

/**
 * Verifies the bearer token in `authorization` and checks it carries `requiredScope`.
 * Throws a ProblemError: 401 with `WWW-Authenticate: Bearer error="invalid_token"` for a missing or
 * bad token, 403 with `error="insufficient_scope"` for a valid token without the scope.
 */
export async function authenticate(
  authorization: string | undefined,
  requiredScope: Scope,
  verification: TokenVerification,
): Promise<Principal> {
  const token = bearerToken(authorization);
  if (!token) throw invalidToken('A bearer access token is required (Authorization: Bearer <token>).');

  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, verification.keys, {
      issuer: verification.issuer,
      audience: verification.audience,
      algorithms: ACCEPTED_ALGORITHMS,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ['exp'],
      ...(verification.currentDate ? { currentDate: verification.currentDate } : {}),
    }));
  } catch (error) {
    // The issuer's key set being unreachable is our outage, not the caller's bad token.
    if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid || error instanceof TypeError) {
      throw new ProblemError(problems.unavailable('The access token cannot be verified right now; retry later.'), { 'retry-after': '5' });
    }
    throw invalidToken(describeVerificationFailure(error));
  }

  const principal = principalOf(payload);
  if (!principal) throw invalidToken('The token names no client (client_id, azp or sub).');
  if (!principal.scopes.has(requiredScope)) {
    throw new ProblemError(problems.forbidden(`This operation needs the scope "${requiredScope}".`), {
      'www-authenticate': `Bearer realm="koerier", error="insufficient_scope", scope="${requiredScope}"`,
    });
  }
  return principal;
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

function principalOf(payload: JWTPayload): Principal | undefined {
  const clientId = stringClaim(payload['client_id']) ?? stringClaim(payload['azp']) ?? stringClaim(payload.sub);
  if (!clientId) return undefined;
  return { clientId, scopes: new Set(scopeClaim(payload)) };
}

/** RFC 9068 `scope` is space-separated; some issuers send `scp` as an array instead. */
function scopeClaim(payload: JWTPayload): string[] {
  const scope = payload['scope'];
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  const scp = payload['scp'];
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  if (typeof scp === 'string') return scp.split(' ').filter(Boolean);
  return [];
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function invalidToken(description: string): ProblemError {
  return new ProblemError(problems.unauthorized(description), {
    'www-authenticate': `Bearer realm="koerier", error="invalid_token", error_description="${description.replace(/"/g, "'")}"`,
  });
}

/** Tell the caller what is wrong with the token, never anything about the keys or the server. */
function describeVerificationFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'The token has expired.';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'The token is not valid yet.';
    if (error.claim === 'iss') return 'The token was issued by an issuer Koerier does not trust.';
    if (error.claim === 'aud') return 'The token is not meant for Koerier (audience).';
    return `The token's "${error.claim}" claim is not acceptable.`;
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'The token is signed with an algorithm Koerier does not accept.';
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'The token signature is invalid.';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'The token was signed with a key the issuer does not publish.';
  if (error instanceof joseErrors.JWSInvalid || error instanceof joseErrors.JWTInvalid) return 'The token is malformed.';
  return 'The token could not be verified.';
}
