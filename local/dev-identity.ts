/**
 * The development OAuth 2.0 authorisation server of the laptop host, standing in for the
 * organisation's own: client-credentials grant only (RFC 6749 §4.4), JWT access tokens in the
 * RFC 9068 profile, signed ES256 with a key kept under the state directory and published as a JWKS.
 * Development only: never deployed.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { HttpRequest, HttpResponse } from '../functions/core/http/messages.js';
import { mediaTypeOf } from '../functions/core/http/messages.js';
import { DEFAULT_ACCESS_TOKEN_RULES, type AccessTokenRules } from '../functions/core/auth/access-token-rules.js';
import type { DevClientConfig } from './local-config-file.js';
import type { DevSignIn } from './dev-sign-in.js';

/** An hour, or the deployment's cap on `exp - iat` when that is shorter. */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 3600;
const ALGORITHM = 'ES256';
const SIGNING_KEY_FILE = 'dev-signing-key.json';

export interface DevIdentity {
  /** The public key set, as served at `/.well-known/jwks.json`. */
  readonly jwks: { keys: JWK[] };
  /** Mints a token directly, for any client id (known or not), with the given scopes. */
  issueToken(clientId: string, scopes: readonly string[]): Promise<string>;
  /** `POST /oauth/token`. */
  tokenEndpoint(request: HttpRequest): Promise<HttpResponse>;
}

export async function createDevIdentity(options: {
  stateDir: string;
  issuer: string;
  audience: string;
  clients: Readonly<Record<string, DevClientConfig>>;
  /**
   * The rules the handlers apply (functions/config.ts `accessTokenRules`), so the tokens look like
   * the ones the configured issuer would hand out: its `typ`, its client claim, a lifetime within the cap.
   */
  tokenRules?: AccessTokenRules;
  /** The console's sign-in (authorization code + PKCE), answered at the same token endpoint. */
  signIn?: DevSignIn;
}): Promise<DevIdentity> {
  const { privateKey, publicJwk } = await loadOrCreateSigningKey(options.stateDir);
  const rules = options.tokenRules ?? DEFAULT_ACCESS_TOKEN_RULES;
  const lifetimeSeconds = Math.min(ACCESS_TOKEN_LIFETIME_SECONDS, rules.maxLifetimeSeconds);

  const issueToken = async (clientId: string, scopes: readonly string[]): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    // RFC 9068 §2.2 `client_id` always; the configured claim too when it is another one (`azp`, `appid`).
    // The scopes where the configured issuer puts them: Entra ID's `roles` is an array.
    const scopeClaim = rules.scopeClaims[0] ?? 'scope';
    const scopeValue = scopeClaim === 'scope' ? scopes.join(' ') : [...scopes];
    return new SignJWT({ client_id: clientId, [rules.clientIdClaim]: clientId, [scopeClaim]: scopeValue })
      .setProtectedHeader({
        alg: ALGORITHM,
        ...(publicJwk.kid === undefined ? {} : { kid: publicJwk.kid }),
        typ: rules.tokenType,
      })
      .setIssuer(options.issuer)
      .setAudience(options.audience)
      .setSubject(clientId)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + lifetimeSeconds)
      .setJti(randomUUID())
      .sign(privateKey);
  };

  return {
    jwks: { keys: [publicJwk] },
    issueToken,
    async tokenEndpoint(request) {
      const outcome = checkTokenRequest(request, options.clients, options.signIn);
      if ('error' in outcome) return outcome.error;
      const accessToken = await issueToken(outcome.clientId, outcome.scopes);
      return tokenResponse(200, {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: lifetimeSeconds,
        scope: outcome.scopes.join(' '),
      });
    },
  };
}

/** The ES256 key pair, generated on first start and kept as a private JWK under the state directory. */
async function loadOrCreateSigningKey(stateDir: string): Promise<{ privateKey: CryptoKey; publicJwk: JWK }> {
  const path = join(stateDir, SIGNING_KEY_FILE);
  let privateJwk: JWK;
  try {
    privateJwk = JSON.parse(await readFile(path, 'utf8')) as JWK;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`cannot read the development signing key ${path}`, { cause: error });
    const pair = await generateKeyPair(ALGORITHM, { extractable: true });
    privateJwk = await exportJWK(pair.privateKey);
    privateJwk.kid = await calculateJwkThumbprint(privateJwk);
    privateJwk.alg = ALGORITHM;
    await writeFile(path, JSON.stringify(privateJwk), { mode: 0o600 });
  }
  const { d: _private, ...publicParts } = privateJwk;
  const publicJwk: JWK = { ...publicParts, alg: ALGORITHM, use: 'sig' };
  return { privateKey: (await importJWK(privateJwk, ALGORITHM)) as CryptoKey, publicJwk };
}

type TokenRequestOutcome = { clientId: string; scopes: string[] } | { error: HttpResponse };

/** RFC 6749 §4.4.2 and §2.3.1 (and §4.1.3 for the console's sign-in), with the error responses of §5.2. */
function checkTokenRequest(
  request: HttpRequest,
  clients: Readonly<Record<string, DevClientConfig>>,
  signIn: DevSignIn | undefined,
): TokenRequestOutcome {
  if (mediaTypeOf(request.headers['content-type']) !== 'application/x-www-form-urlencoded') {
    return oauthError(400, 'invalid_request', 'The request body must be application/x-www-form-urlencoded.');
  }
  const form = new URLSearchParams(request.body.toString('utf8'));
  const names = [...form.keys()];
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated) return oauthError(400, 'invalid_request', `The parameter "${repeated}" is repeated.`);

  const grantType = form.get('grant_type');
  if (!grantType) return oauthError(400, 'invalid_request', 'The parameter "grant_type" is required.');
  if (grantType === 'authorization_code' && signIn) {
    const exchanged = signIn.exchange(form);
    return 'error' in exchanged
      ? oauthError(exchanged.error === 'invalid_client' ? 401 : 400, exchanged.error, exchanged.description)
      : exchanged;
  }
  if (grantType !== 'client_credentials') {
    return oauthError(
      400,
      'unsupported_grant_type',
      'Only the client_credentials grant is supported (and authorization_code for the console).',
    );
  }

  const authorization = request.headers['authorization'];
  const formId = form.get('client_id');
  const formSecret = form.get('client_secret');
  let credentials: { id: string; secret: string } | undefined;
  if (authorization !== undefined) {
    if (formSecret !== null) {
      return oauthError(
        400,
        'invalid_request',
        'Use one client authentication method: HTTP Basic or the form, not both.',
      );
    }
    credentials = basicCredentials(authorization);
    if (!credentials)
      return oauthError(401, 'invalid_client', 'The Authorization header must be HTTP Basic client credentials.');
    if (formId !== null && formId !== credentials.id) {
      return oauthError(400, 'invalid_request', 'client_id in the form differs from the authenticated client.');
    }
  } else if (formId !== null && formSecret !== null) {
    credentials = { id: formId, secret: formSecret };
  } else {
    // Confidential clients only (EDU-2): a client_id alone is no authentication.
    return oauthError(
      401,
      'invalid_client',
      'Client authentication is required (client_secret_basic or client_secret_post).',
    );
  }

  // Own properties only: `__proto__` or `constructor` is no client.
  const client = Object.hasOwn(clients, credentials.id) ? clients[credentials.id] : undefined;
  // Compare against something even for unknown clients, so timing tells nothing about which ids exist.
  const secretMatches = sameSecret(credentials.secret, client?.secret ?? `unknown-client:${randomUUID()}`);
  if (!client || !secretMatches) return oauthError(401, 'invalid_client', 'Unknown client or wrong secret.');

  const requested = (form.get('scope') ?? '').split(' ').filter(Boolean);
  if (requested.length === 0) return { clientId: credentials.id, scopes: [...client.scopes] };
  const notGranted = requested.filter((scope) => !client.scopes.includes(scope));
  if (notGranted.length > 0)
    return oauthError(400, 'invalid_scope', `The client may not request: ${notGranted.join(' ')}.`);
  return { clientId: credentials.id, scopes: [...new Set(requested)] };
}

/** RFC 6749 §2.3.1: id and secret are form-encoded before they are joined and base64-encoded. */
function basicCredentials(authorization: string): { id: string; secret: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+=*)\s*$/i.exec(authorization);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  try {
    const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function oauthError(status: 400 | 401, error: string, description: string): { error: HttpResponse } {
  return {
    error: tokenResponse(
      status,
      { error, error_description: description },
      // RFC 6749 §5.2: a 401 names the authentication scheme the client should use.
      status === 401 ? { 'www-authenticate': 'Basic realm="koerier-dev"' } : {},
    ),
  };
}

function tokenResponse(status: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return {
    status,
    headers: {
      'content-type': 'application/json;charset=UTF-8',
      'cache-control': 'no-store',
      pragma: 'no-cache',
      ...headers,
    },
    body: JSON.stringify(body),
  };
}
