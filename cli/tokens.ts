/**
 * Access tokens for the CLI: OAuth 2.0 client credentials (RFC 6749 §4.4, client_secret_basic) at
 * the token URL, cached in the user's config folder (0600) and fetched again a minute before they
 * expire. Without a configured token URL it is found from the gateway: the API description
 * (`GET /openapi.json`) names the token URL of its client-credentials flow, on the laptop the
 * development identity's `/oauth/token`, in AWS the organisation's identity provider.
 *
 * A client secret goes only where it cannot be read on the way or taken by another gateway (issue 28
 * item 10): to an https token URL (http only on this machine's loopback), and a secret `login`
 * stored goes only to the token URL `login` pinned for the profile's gateway.
 */
import { isIPv4 } from 'node:net';
import { API_BASE_PATH, type TokenSource } from './api-client.js';
import { CliError, exitCodes } from './exit-codes.js';
import { gatewayUrl, type Settings } from './settings.js';

/** A token closer than this to its expiry is replaced before use, so it cannot expire in flight. */
const RENEW_BEFORE_MS = 60_000;

export interface TokenAnswer {
  readonly accessToken: string;
  readonly expiresAt: number;
  readonly scope: string | undefined;
}

export async function discoverTokenUrl(gateway: string): Promise<string> {
  const where = `${gateway}${API_BASE_PATH}/openapi.json`;
  let description: {
    components?: { securitySchemes?: Record<string, { flows?: { clientCredentials?: { tokenUrl?: string } } }> };
  };
  try {
    const response = await fetch(where, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`answered ${response.status}`);
    description = (await response.json()) as typeof description;
  } catch (error) {
    throw new CliError(
      `cannot find the token URL at ${where} (${(error as Error).message}); give --token-url or KOERIER_TOKEN_URL`,
      exitCodes.unavailable,
    );
  }
  for (const scheme of Object.values(description.components?.securitySchemes ?? {})) {
    const tokenUrl = scheme.flows?.clientCredentials?.tokenUrl;
    if (tokenUrl) return new URL(tokenUrl, where).toString();
  }
  throw new CliError(
    `the API description at ${where} names no client-credentials token URL; give --token-url or KOERIER_TOKEN_URL`,
    exitCodes.usage,
  );
}

/** localhost, 127.0.0.0/8 or ::1: a request there never leaves this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return host === 'localhost' || host === '::1' || (isIPv4(host) && host.startsWith('127.'));
}

/** The token URL, refused unless the secret would travel encrypted or stay on this machine. */
export function checkTokenUrl(tokenUrl: string): URL {
  const url = URL.canParse(tokenUrl) ? new URL(tokenUrl) : undefined;
  if (!url) throw new CliError(`the token URL "${tokenUrl}" is not a URL`, exitCodes.usage);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return url;
  throw new CliError(
    `refusing to send a client secret to ${tokenUrl}: a token URL must be https (http only for localhost, 127.0.0.0/8 or ::1)`,
    exitCodes.usage,
  );
}

export async function requestToken(
  tokenUrl: string,
  clientId: string,
  secret: string,
  scope?: string,
): Promise<TokenAnswer> {
  checkTokenUrl(tokenUrl);
  // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined for Basic.
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64');
  let response: Response;
  try {
    response = await fetch(tokenUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }).toString(),
    });
  } catch (error) {
    throw new CliError(
      `cannot reach the token endpoint ${tokenUrl}: ${(error as Error).message}`,
      exitCodes.unavailable,
    );
  }
  const body = (await response.json().catch(() => ({}))) as {
    access_token?: string;
    expires_in?: number;
    scope?: string;
    error?: string;
    error_description?: string;
  };
  if (!response.ok || !body.access_token) {
    const reason = [body.error, body.error_description].filter(Boolean).join(': ') || `status ${response.status}`;
    throw new CliError(
      `the token endpoint refused client ${clientId}: ${reason}`,
      response.status >= 500 ? exitCodes.unavailable : exitCodes.auth,
    );
  }
  return { accessToken: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 300) * 1000, scope: body.scope };
}

/** The token source the API client uses: the cached token while it is good, a new one otherwise. */
export function cachedTokens(settings: Settings): TokenSource {
  // In memory too, so a long `pull --follow` or `listen` renews its token as it nears expiry.
  let current: { accessToken: string; expiresAt: number } | undefined;
  const fresh = (token: { expiresAt: number } | undefined) =>
    token !== undefined && token.expiresAt - Date.now() > RENEW_BEFORE_MS;
  // Concurrent requests (send runs several) share one token request instead of each making its own.
  let pending: Promise<string> | undefined;
  const fetchToken = async (renew: boolean): Promise<string> => {
    const clientId = settings.clientId;
    if (!clientId)
      throw new CliError('no client: give --client-id, set KOERIER_CLIENT_ID, or run koerier login', exitCodes.usage);
    // Without a secret of this run, only what login stored is left: its secret, and tokens fetched with it.
    if (settings.secret === undefined) refuseForeignGateway(settings, clientId);
    const tokenUrl = settings.tokenUrl ?? (await discoverTokenUrl(gatewayUrl(settings)));
    // A token with fewer scopes is cached apart from the client's full one.
    const key = `${tokenUrl} ${clientId}${settings.scope ? ` ${settings.scope}` : ''}`;
    const cached = renew ? undefined : await settings.store.token(key);
    if (cached && fresh(cached)) return (current = cached).accessToken;
    const secret = settings.secret ?? (await settings.store.secret(settings.profileName, clientId));
    if (!secret) throw noSecret(clientId);
    const answer = await requestToken(tokenUrl, clientId, secret, settings.scope);
    current = { accessToken: answer.accessToken, expiresAt: answer.expiresAt };
    await settings.store.saveToken(key, current);
    return current.accessToken;
  };
  return {
    token(renew = false) {
      if (!renew && current && fresh(current)) return Promise.resolve(current.accessToken);
      pending ??= fetchToken(renew).finally(() => (pending = undefined));
      return pending;
    },
  };
}

/**
 * The stored secret and cached tokens serve only the gateway the profile was logged in to, at the
 * token URL pinned then, or a token URL the user named. Any other gateway would choose where the
 * secret goes (its API description names the token URL), or receive a token cached for another.
 */
function refuseForeignGateway(settings: Settings, clientId: string): void {
  if (settings.tokenUrlGiven || (settings.profileGateway && settings.profile.tokenUrl !== undefined)) return;
  const gateway = gatewayUrl(settings);
  const profile = settings.profileName === 'default' ? '' : ` --profile ${settings.profileName}`;
  if (settings.profile.url === undefined) throw noSecret(clientId);
  const why = settings.profileGateway
    ? `profile ${settings.profileName} has no token URL pinned for ${gateway}`
    : `profile ${settings.profileName} was logged in to ${settings.profile.url}, not ${gateway}: its stored secret and tokens are not sent where ${gateway} says`;
  throw new CliError(
    `${why}. Log in again for that gateway: koerier login --url ${gateway}${profile} (or --profile NAME for a profile of its own); or give --token-url, KOERIER_CLIENT_SECRET or --client-secret-file`,
    exitCodes.auth,
  );
}

function noSecret(clientId: string): CliError {
  return new CliError(
    `no valid token for ${clientId} and no secret to get one: run koerier login, or set KOERIER_CLIENT_SECRET, or give --client-secret-file`,
    exitCodes.auth,
  );
}
