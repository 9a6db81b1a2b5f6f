/**
 * The console's own sign-in (issue 16): where an organisation has no OpenID Connect provider of its
 * own, the stack creates a Cognito user pool, and the API takes that pool's access tokens beside the
 * partners' client-credentials tokens — from the console's public client only. A pool token is no
 * RFC 9068 token: it has no `aud` and no `typ`, and names the app client in `client_id` and its
 * kind in `token_use`, so those two are pinned instead. Who the user acts for comes from the
 * pool's groups (`cognito:groups`), which the operator assigns: `partner:<client id>` for the
 * partner, `admin` for an operator. A console user only reads (EDU-2, below).
 */
import type { JWTPayload, JWTVerifyGetKey } from 'jose';

export interface ConsoleUserPool {
  /** `https://cognito-idp.<region>.<the partition's URL suffix>/<pool id>`, as the stack builds it: the `iss` of the pool's tokens. */
  readonly issuer: string;
  /** The console's app client: the only client whose tokens are taken. */
  readonly clientId: string;
  readonly keys: JWTVerifyGetKey;
}

/** The group naming the partner a user acts for: `partner:school-a` acts as client `school-a`. */
export const PARTNER_GROUP_PREFIX = 'partner:';
/** The group of operators: the `admin` scope, on top of a partner. */
export const ADMIN_GROUP = 'admin';
/** Cognito signs with RS256 only; nothing else is taken from a pool. */
export const USER_POOL_ALGORITHMS = ['RS256'];

/**
 * What every console user may do for their partner: read their subscriptions (deliveries, health,
 * dead letters, replays) and the contract register. The console is a public client (PKCE, no
 * secret), and the Edukoppeling profile leaves the exchange to confidential clients (EDU-2): consuming
 * events and making or changing subscriptions stay with the partner's client-credentials client.
 */
export const CONSOLE_USER_SCOPES: readonly string[] = ['subscriptions:read', 'contracts:read'];
/**
 * What the `admin` group adds: `admin` widens those reads to every partner's subscriptions. It
 * opens no operation of its own, because a console user's token is taken only for operations
 * whose scope is one of CONSOLE_USER_SCOPES (consoleMayUse).
 */
export const CONSOLE_ADMIN_SCOPES: readonly string[] = ['admin'];

/**
 * Whether a console user's token is taken for an operation needing `requiredScope`: the read
 * scopes only, whatever the groups give, so no later grant can let a public client change state.
 */
export function consoleMayUse(requiredScope: string): boolean {
  return CONSOLE_USER_SCOPES.includes(requiredScope);
}

/**
 * A `Principal` of ./access-tokens.ts, which imports this module (and the console's browser code
 * does too, to show who is signed in): declared here so neither imports the other back.
 */
export interface ConsoleUser {
  readonly clientId: string;
  readonly scopes: ReadonlySet<string>;
}

/** Why a pool access token is not one of the console's, or undefined when it is. */
export function consoleTokenProblem(payload: JWTPayload, pool: Pick<ConsoleUserPool, 'clientId'>): string | undefined {
  // An ID token of the same pool is signed by the same keys; only `token_use` tells them apart.
  if (payload['token_use'] !== 'access') return 'The token is not an access token: its "token_use" must be "access".';
  if (payload['client_id'] !== pool.clientId) return 'The token was not issued to the console.';
  return undefined;
}

/**
 * The principal a console user acts as, from their groups: exactly one partner group names the
 * client; `admin` adds the operator's scopes. A string says why there is none (a 403: the user is
 * signed in, the operator has not placed them with one partner).
 */
export function consoleUserPrincipal(groupsClaim: unknown): ConsoleUser | string {
  const groups = Array.isArray(groupsClaim)
    ? groupsClaim.filter((group): group is string => typeof group === 'string')
    : [];
  const partners = groups
    .filter((group) => group.startsWith(PARTNER_GROUP_PREFIX))
    .map((group) => group.slice(PARTNER_GROUP_PREFIX.length));
  if (partners.length !== 1 || partners[0] === '') {
    return `A console user must belong to exactly one partner group ("${PARTNER_GROUP_PREFIX}<client id>"); this one belongs to ${partners.length}.`;
  }
  const granted = groups.includes(ADMIN_GROUP)
    ? [...CONSOLE_USER_SCOPES, ...CONSOLE_ADMIN_SCOPES]
    : CONSOLE_USER_SCOPES;
  return { clientId: partners[0]!, scopes: new Set(granted) };
}
