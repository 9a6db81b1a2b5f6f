/**
 * OAuth 2.0 client-credentials tokens (RFC 6749 §4.4) for subscribers whose webhook wants them
 * (WH-3, EDU-4): fetched from the subscriber's token endpoint through the safe client (the token
 * URL is subscriber input too), cached per credential, and renewed before they expire — when a
 * minute or a tenth of their lifetime (whichever is more, at most half) is left. Concurrent
 * callers share one fetch.
 */
import { createHash } from 'node:crypto';
import { CredentialUnavailableError } from '../core/delivery/dispatcher.js';
import type { SinkCredential } from '../core/credentials/sink-credential.js';
import { classifyOutboundError, type SafeHttpClient } from './safe-http-client.js';

type ClientCredentials = Extract<SinkCredential, { kind: 'oauth2-client-credentials' }>;

/** Used when a token response names no lifetime. */
const DEFAULT_LIFETIME_SECONDS = 300;
export const TOKEN_TIMEOUT_MS = 5_000;

interface CachedToken {
  readonly token: string;
  readonly renewAt: number;
}

export class ClientCredentialsTokens {
  private readonly cache = new Map<string, CachedToken>();
  private readonly inFlight = new Map<string, Promise<CachedToken>>();

  constructor(
    private readonly client: SafeHttpClient,
    private readonly clock: () => number = Date.now,
  ) {}

  /** A valid access token for `credential`; `refresh` skips the cache (the target refused the cached one). */
  async token(credential: ClientCredentials, options: { refresh?: boolean } = {}): Promise<string> {
    const cacheKey = keyOf(credential);
    const cached = this.cache.get(cacheKey);
    if (!options.refresh && cached && cached.renewAt > this.clock()) return cached.token;
    let pending = this.inFlight.get(cacheKey);
    if (!pending) {
      pending = this.fetch(credential).finally(() => this.inFlight.delete(cacheKey));
      this.inFlight.set(cacheKey, pending);
    }
    const fresh = await pending;
    this.cache.set(cacheKey, fresh);
    return fresh.token;
  }

  private async fetch(credential: ClientCredentials): Promise<CachedToken> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (credential.scope) form.set('scope', credential.scope);
    if (credential.audience) form.set('audience', credential.audience);
    // client_secret_basic, the method every authorization server must support (RFC 6749 §2.3.1).
    const basic = Buffer.from(`${encodeURIComponent(credential.clientId)}:${encodeURIComponent(credential.clientSecret)}`).toString('base64');
    const requestedAt = this.clock();
    let response;
    try {
      response = await this.client.request({
        method: 'POST',
        url: credential.tokenUrl,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: `Basic ${basic}` },
        body: form.toString(),
        timeoutMs: TOKEN_TIMEOUT_MS,
      });
    } catch (error) {
      const failure = classifyOutboundError(error);
      throw new CredentialUnavailableError(`the token endpoint could not be reached (${failure.kind}: ${failure.message})`);
    }
    if (response.status !== 200) throw new CredentialUnavailableError(`the token endpoint answered ${response.status}`);
    let body: { access_token?: unknown; token_type?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(response.body.toString('utf8')) as typeof body;
    } catch {
      throw new CredentialUnavailableError('the token endpoint answered something other than JSON');
    }
    if (typeof body.access_token !== 'string' || body.access_token === '') throw new CredentialUnavailableError('the token response holds no access_token');
    if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') {
      throw new CredentialUnavailableError(`the token endpoint issued a ${body.token_type} token; webhooks take Bearer tokens (WH-3)`);
    }
    const lifetime = (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_SECONDS) * 1000;
    return { token: body.access_token, renewAt: requestedAt + lifetime - Math.min(Math.max(60_000, lifetime / 10), lifetime / 2) };
  }
}

/** The secret is part of the key (hashed): a changed credential never gets the old token. */
function keyOf(credential: ClientCredentials): string {
  return createHash('sha256')
    .update(JSON.stringify([credential.tokenUrl, credential.clientId, credential.clientSecret, credential.scope ?? '', credential.audience ?? '']))
    .digest('base64url');
}
