/**
 * Sign-in: the authorization code grant with PKCE (RFC 7636, S256) against the organisation's
 * OpenID Connect provider in AWS (or the Cognito user pool the stack created for the console), or
 * the laptop's development identity. The console is a public
 * client: no client secret ever reaches the browser. The access token lives in sessionStorage
 * (gone with the tab) and is never written to a URL.
 */
import { consoleUserPrincipal } from '../../functions/core/auth/console-user-pool.js';

export interface ConsoleConfig {
  readonly apiUrl: string;
  readonly clientId: string;
  readonly scope: string;
  readonly issuer?: string;
  readonly authorizationEndpoint?: string;
  readonly tokenEndpoint?: string;
}

export interface Session {
  readonly accessToken: string;
  readonly expiresAt: number;
  readonly clientId: string;
  readonly scopes: readonly string[];
}

const SESSION = 'koerier.session';
const PENDING = 'koerier.signin';

async function endpoints(config: ConsoleConfig): Promise<{ authorization: string; token: string }> {
  if (config.authorizationEndpoint && config.tokenEndpoint)
    return { authorization: config.authorizationEndpoint, token: config.tokenEndpoint };
  if (!config.issuer) throw new Error('config.json names neither the endpoints nor an issuer');
  const response = await fetch(`${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`OpenID Connect discovery answered ${response.status}`);
  const discovered = (await response.json()) as { authorization_endpoint: string; token_endpoint: string };
  return { authorization: discovered.authorization_endpoint, token: discovered.token_endpoint };
}

function randomText(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

function redirectUri(): string {
  return `${location.origin}${location.pathname}`;
}

export async function signIn(config: ConsoleConfig): Promise<void> {
  const verifier = randomText(48);
  const state = randomText(16);
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state }));
  const { authorization } = await endpoints(config);
  const target = new URL(authorization);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: config.clientId,
    redirect_uri: redirectUri(),
    scope: config.scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })) {
    target.searchParams.set(name, value);
  }
  location.assign(target.toString());
}

/** After the provider sent the browser back: trades the code for a token, then takes it out of the address bar. */
export async function completeSignIn(config: ConsoleConfig): Promise<void> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  if (!code) return;
  history.replaceState(null, '', redirectUri() + location.hash);
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null') as { verifier: string; state: string } | null;
  sessionStorage.removeItem(PENDING);
  if (!pending || pending.state !== (params.get('state') ?? ''))
    throw new Error('the sign-in answer does not belong to this browser tab (state)');
  const { token } = await endpoints(config);
  const response = await fetch(token, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri(),
      client_id: config.clientId,
      code_verifier: pending.verifier,
    }),
  });
  const body = (await response.json()) as {
    access_token?: string;
    expires_in?: number;
    scope?: string;
    error_description?: string;
  };
  if (!response.ok || !body.access_token)
    throw new Error(body.error_description ?? `the token endpoint answered ${response.status}`);
  const claims = JSON.parse(atob(body.access_token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as Record<
    string,
    unknown
  >;
  const scopes = (body.scope ?? String(claims['scope'] ?? '')).split(' ').filter(Boolean);
  const session: Session = {
    accessToken: body.access_token,
    expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000,
    ...signedInAs(claims, scopes),
  };
  sessionStorage.setItem(SESSION, JSON.stringify(session));
}

/**
 * Who the session acts as. A user of the stack's own user pool acts for the partner of their group,
 * as the API reads it; with no single partner group the API refuses them, and its answer says why.
 */
function signedInAs(claims: Record<string, unknown>, scopes: readonly string[]): Pick<Session, 'clientId' | 'scopes'> {
  if (claims['token_use'] !== 'access')
    return { clientId: String(claims['client_id'] ?? claims['azp'] ?? claims['sub'] ?? ''), scopes };
  const poolUser = consoleUserPrincipal(claims['cognito:groups']);
  if (typeof poolUser === 'string') return { clientId: String(claims['username'] ?? ''), scopes: [] };
  return { clientId: poolUser.clientId, scopes: [...poolUser.scopes] };
}

export function currentSession(): Session | undefined {
  const session = JSON.parse(sessionStorage.getItem(SESSION) ?? 'null') as Session | null;
  if (!session || session.expiresAt <= Date.now()) return undefined;
  return session;
}

export function signOut(): void {
  sessionStorage.removeItem(SESSION);
}
