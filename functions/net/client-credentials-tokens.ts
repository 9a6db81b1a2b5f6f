/**
 * OAuth 2.0 client-credentials tokens (RFC 6749 §4.4) for subscribers whose webhook wants them
 * (WH-3, EDU-4): fetched from the subscriber's token endpoint through the safe client (the token
 * URL is subscriber input too), cached per credential, and renewed before they expire — when a
 * minute or a tenth of their lifetime (whichever is more, at most half) is left. Concurrent
 * callers share one fetch.
 *
 * What a failure says (`CredentialUnavailableError`'s message) is shown to the subscriber with the
 * attempt and the dead letter, so it is fixed words (review item 18): the network's own message
 * (`connect ECONNREFUSED 127.0.0.1:1`, the private address a name resolved to) goes to the
 * operator log only, and a refused connection, a timeout or a TLS failure all read the same, so
 * the token URL cannot be used to probe ports either (review item 19).
 */
import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../core/ports/clock.js';
import { silentLog, type Log } from '../core/ports/log.js';
import { SUBSCRIBER_FAILURE } from '../core/delivery/attempt-outcome.js';
import { CredentialUnavailableError } from '../core/delivery/dispatch-ports.js';
import type { SinkCredential } from '../core/credentials/sink-credential.js';
import { classifyOutboundError, type SafeHttpClient } from './safe-http-client.js';

type ClientCredentials = Extract<SinkCredential, { kind: 'oauth2-client-credentials' }>;

/**
 * The most tokens one container keeps: a delivery container serves many OAuth targets over its
 * life, and each token is a secret held in memory. Past it, expired ones go first, then the least
 * recently fetched; a target whose token went is served a fresh one on its next delivery.
 */
export const MAX_CACHED_TOKENS = 1_000;

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
    private readonly clock: Clock = systemClock,
    /** The operator log: the precise failure, never shown to the subscriber. */
    private readonly log: Log = silentLog,
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
    this.remember(cacheKey, fresh);
    return fresh.token;
  }

  /** How many tokens are held (for the bound's test). */
  get size(): number {
    return this.cache.size;
  }

  private remember(cacheKey: string, fresh: CachedToken): void {
    // Deleted first so the Map's order is the order of fetching.
    this.cache.delete(cacheKey);
    this.cache.set(cacheKey, fresh);
    if (this.cache.size <= MAX_CACHED_TOKENS) return;
    const now = this.clock();
    for (const [key, cached] of this.cache) if (cached.renewAt <= now) this.cache.delete(key);
    for (const key of this.cache.keys()) {
      if (this.cache.size <= MAX_CACHED_TOKENS) break;
      this.cache.delete(key);
    }
  }

  private async fetch(credential: ClientCredentials): Promise<CachedToken> {
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (credential.scope) form.set('scope', credential.scope);
    if (credential.audience) form.set('audience', credential.audience);
    // client_secret_basic, the method every authorization server must support (RFC 6749 §2.3.1).
    const basic = Buffer.from(
      `${encodeURIComponent(credential.clientId)}:${encodeURIComponent(credential.clientSecret)}`,
    ).toString('base64');
    const requestedAt = this.clock();
    let response;
    try {
      response = await this.client.request({
        method: 'POST',
        url: credential.tokenUrl,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${basic}`,
        },
        body: form.toString(),
        timeoutMs: TOKEN_TIMEOUT_MS,
      });
    } catch (error) {
      const failure = classifyOutboundError(error);
      this.log.warn('token endpoint failed', {
        tokenOrigin: originOf(credential.tokenUrl),
        failure: failure.kind,
        error: failure.message,
      });
      throw new CredentialUnavailableError(
        SUBSCRIBER_FAILURE[failure.kind].code === 'invalid-url'
          ? 'the token URL is not one Koerier may call'
          : 'the token endpoint could not be reached',
      );
    }
    if (response.status !== 200) throw new CredentialUnavailableError(`the token endpoint answered ${response.status}`);
    let body: { access_token?: unknown; token_type?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(response.body.toString('utf8')) as typeof body;
    } catch {
      throw new CredentialUnavailableError('the token endpoint answered something other than JSON');
    }
    if (typeof body.access_token !== 'string' || body.access_token === '')
      throw new CredentialUnavailableError('the token response holds no access_token');
    // Checked here, so a token that cannot travel in a header is the token endpoint's fault, not the target's.
    if (body.access_token.length > 16_384 || !B64TOKEN.test(body.access_token))
      throw new CredentialUnavailableError(
        'the token endpoint issued an access token that cannot be sent as a Bearer token',
      );
    if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') {
      throw new CredentialUnavailableError(
        'the token endpoint issued a token type other than Bearer; webhooks take Bearer tokens (WH-3)',
      );
    }
    const lifetime =
      (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_SECONDS) * 1000;
    return {
      token: body.access_token,
      renewAt: requestedAt + lifetime - Math.min(Math.max(60_000, lifetime / 10), lifetime / 2),
    };
  }
}

/** RFC 6750 b64token: what may follow `Bearer ` in an Authorization header. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}

/** The secret is part of the key (hashed): a changed credential never gets the old token. */
function keyOf(credential: ClientCredentials): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        credential.tokenUrl,
        credential.clientId,
        credential.clientSecret,
        credential.scope ?? '',
        credential.audience ?? '',
      ]),
    )
    .digest('base64url');
}
