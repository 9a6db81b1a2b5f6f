/**
 * What a deployment accepts as an access token beyond signature, issuer and audience (review #17):
 * the rules, their defaults and the parsing of their written forms, shared by the functions'
 * settings (functions/config/auth-settings.ts), the stack's context (lib/stack-config.ts) and the
 * laptop's development identity. The verification that applies them is ./access-tokens.ts.
 */

/**
 * What a deployment accepts as an access token beyond signature, issuer and audience (review #17).
 * Settings KOERIER_ACCESS_TOKEN_TYPE, KOERIER_ACCESS_TOKEN_MAX_LIFETIME_SECONDS, KOERIER_CLIENT_ID_CLAIM
 * (functions/config.ts), context `koerier:accessTokenType`, `koerier:accessTokenMaxLifetimeMinutes`,
 * `koerier:clientIdClaim` (lib/stack-config.ts).
 */
export interface AccessTokenRules {
  /**
   * The JWT header `typ` an access token must carry. `at+jwt` (RFC 9068 §2.1, §4) keeps ID tokens
   * and other JWTs of the same issuer and audience out. `JWT` is the switch for identity providers
   * that label access tokens `JWT` (Entra ID; Keycloak unless its RFC 9068 header type is enabled);
   * it accepts `JWT` and still `at+jwt`, so switching the issuer over later needs no flag day.
   */
  readonly tokenType: AccessTokenType;
  /** The longest `exp - iat` accepted; tokens without `iat` or `exp` are refused. */
  readonly maxLifetimeSeconds: number;
  /** The one claim that names the client (RFC 9068 §2.2: `client_id`; Entra ID: `azp` or `appid`). Never a fallback. */
  readonly clientIdClaim: string;
  /**
   * Where the scopes are, first present claim wins: `scope` (RFC 9068, space-separated), `scp`
   * (some issuers, string or array), `roles` (Entra ID application permissions, an array).
   */
  readonly scopeClaims: readonly ScopeClaim[];
}

export const scopeClaimNames = ['scope', 'scp', 'roles'] as const;
export type ScopeClaim = (typeof scopeClaimNames)[number];
/** What Koerier always read: RFC 9068 `scope`, else `scp`. `roles` only when configured, since user tokens carry app roles there too. */
export const DEFAULT_SCOPE_CLAIMS: readonly ScopeClaim[] = ['scope', 'scp'];

export const accessTokenTypes = ['at+jwt', 'JWT'] as const;
export type AccessTokenType = (typeof accessTokenTypes)[number];

/**
 * Two hours. RFC 9068 leaves the lifetime to the deployment; short-lived tokens limit what a
 * leaked one can do (RFC 9700 §4.14). Entra ID gives client-credential tokens a random 60 to 90
 * minutes and, to absorb clock skew, dates `iat` and `nbf` some minutes before the moment of
 * issue, so its tokens reach about 95 minutes of `exp - iat`; Keycloak's default is 5 minutes. Two hours accepts both with room, and refuses the
 * day-long or year-long tokens that a misconfigured issuer hands out.
 */
export const DEFAULT_MAX_TOKEN_LIFETIME_SECONDS = 2 * 3600;
/** The longest cap a deployment may configure: a day. */
export const MAX_TOKEN_LIFETIME_LIMIT_SECONDS = 24 * 3600;
export const DEFAULT_CLIENT_ID_CLAIM = 'client_id';

export const DEFAULT_ACCESS_TOKEN_RULES: AccessTokenRules = {
  tokenType: 'at+jwt',
  maxLifetimeSeconds: DEFAULT_MAX_TOKEN_LIFETIME_SECONDS,
  clientIdClaim: DEFAULT_CLIENT_ID_CLAIM,
  scopeClaims: DEFAULT_SCOPE_CLAIMS,
};

/** The scope claim list from its written form (`scope`, `scp`, `roles`, or `scope,scp`); undefined when any name is unknown or none is given. */
export function scopeClaimsOf(value: string): ScopeClaim[] | undefined {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (
    names.length === 0 ||
    !names.every((name): name is ScopeClaim => (scopeClaimNames as readonly string[]).includes(name))
  )
    return undefined;
  return [...new Set(names)];
}

/**
 * Claims that never name a client: the registered time, issuer and audience claims, the scopes
 * and the token id. `sub` is allowed, but only by choice (for issuers whose client-credentials
 * tokens carry the client id there and nothing else).
 */
const NOT_CLIENT_CLAIMS = new Set(['iss', 'aud', 'exp', 'nbf', 'iat', 'jti', 'scope', 'scp', 'roles', 'typ']);

/** Why a claim name cannot be the client claim, or undefined when it can. */
export function clientIdClaimProblem(claim: string): string | undefined {
  // Collision-resistant claim names may be URIs (RFC 7519 §4.2), hence `:` and `/`; nothing that
  // would need escaping in the WWW-Authenticate description the name appears in.
  if (!/^[A-Za-z0-9_.:/-]{1,128}$/.test(claim)) return 'must be a claim name (letters, digits, _ . : / -, at most 128)';
  if (NOT_CLIENT_CLAIMS.has(claim)) return `must name the client, not "${claim}"`;
  return undefined;
}

/** The configured type as written (`at+jwt`, `JWT`), matched case-insensitively; undefined when unknown. */
export function accessTokenTypeOf(value: string): AccessTokenType | undefined {
  return accessTokenTypes.find((type) => type.toLowerCase() === value.trim().toLowerCase());
}
