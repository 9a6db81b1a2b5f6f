/**
 * Access tokens for the CLI: OAuth 2.0 client credentials (RFC 6749 §4.4, client_secret_basic) at
 * the token URL, cached in the user's config folder (0600) and fetched again a minute before they
 * expire. Without a configured token URL it is found from the gateway: the API description
 * (`GET /openapi.json`) names the token URL of its client-credentials flow, on the laptop the
 * development identity's `/oauth/token`, in AWS the organisation's identity provider.
 */
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
  let description: { components?: { securitySchemes?: Record<string, { flows?: { clientCredentials?: { tokenUrl?: string } } }> } };
  try {
    const response = await fetch(where, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new Error(`answered ${response.status}`);
    description = (await response.json()) as typeof description;
  } catch (error) {
    throw new CliError(`cannot find the token URL at ${where} (${(error as Error).message}); give --token-url or KOERIER_TOKEN_URL`, exitCodes.unavailable);
  }
  for (const scheme of Object.values(description.components?.securitySchemes ?? {})) {
    const tokenUrl = scheme.flows?.clientCredentials?.tokenUrl;
    if (tokenUrl) return new URL(tokenUrl, where).toString();
  }
  throw new CliError(`the API description at ${where} names no client-credentials token URL; give --token-url or KOERIER_TOKEN_URL`, exitCodes.usage);
}

export async function requestToken(tokenUrl: string, clientId: string, secret: string, scope?: string): Promise<TokenAnswer> {
  // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined for Basic.
  const basic = Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64');
  let response: Response;
  try {
    response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }).toString(),
    });
  } catch (error) {
    throw new CliError(`cannot reach the token endpoint ${tokenUrl}: ${(error as Error).message}`, exitCodes.unavailable);
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
    throw new CliError(`the token endpoint refused client ${clientId}: ${reason}`, response.status >= 500 ? exitCodes.unavailable : exitCodes.auth);
  }
  return { accessToken: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 300) * 1000, scope: body.scope };
}

/** The token source the API client uses: the cached token while it is good, a new one otherwise. */
export function cachedTokens(settings: Settings): TokenSource {
  // In memory too, so a long `pull --follow` or `listen` renews its token as it nears expiry.
  let current: { accessToken: string; expiresAt: number } | undefined;
  const fresh = (token: { expiresAt: number } | undefined) => token !== undefined && token.expiresAt - Date.now() > RENEW_BEFORE_MS;
  // Concurrent requests (send runs several) share one token request instead of each making its own.
  let pending: Promise<string> | undefined;
  const fetchToken = async (renew: boolean): Promise<string> => {
    const clientId = settings.clientId;
    if (!clientId) throw new CliError('no client: give --client-id, set KOERIER_CLIENT_ID, or run koerier login', exitCodes.usage);
    const tokenUrl = settings.tokenUrl ?? (await discoverTokenUrl(gatewayUrl(settings)));
    // A token with fewer scopes is cached apart from the client's full one.
    const key = `${tokenUrl} ${clientId}${settings.scope ? ` ${settings.scope}` : ''}`;
    const cached = renew ? undefined : await settings.store.token(key);
    if (cached && fresh(cached)) return (current = cached).accessToken;
    const secret = settings.secret ?? (await settings.store.secret(settings.profileName, clientId));
    if (!secret) {
      throw new CliError(
        `no valid token for ${clientId} and no secret to get one: run koerier login, or set KOERIER_CLIENT_SECRET, or give --client-secret-file`,
        exitCodes.auth,
      );
    }
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
