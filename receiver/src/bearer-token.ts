/**
 * The bearer token every Koerier delivery carries (WH-3: `Authorization: Bearer …`). Koerier gets
 * it from the subscription's sink credential: a static token (ACCESSTOKEN), or one it fetches from
 * the receiver's own OAuth 2.0 authorisation server (CLIENTCREDENTIALS, EDU-4). So the receiver
 * checks it either with its own function or as a JWT against that server's JWKS (jose: signature,
 * `iss`, `aud`, `exp`/`nbf`, and the client the token was issued to, when named).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';

/** Checks the token itself; true accepts. */
export type TokenCheckFunction = (token: string) => boolean | Promise<boolean>;

/** A JWT access token issued by the receiver's authorisation server (RFC 9068). */
export interface JwksTokenCheck {
  /** The authorisation server's JWKS URL. */
  readonly jwks: string;
  /** The `iss` the token must carry. */
  readonly issuer: string;
  /** The `aud` it must carry (one of them). */
  readonly audience: string | readonly string[];
  /** The client Koerier authenticates as there (`client_id`, else `azp`); any client when absent. */
  readonly clientId?: string;
  /** JWS algorithms accepted; jose's default (the key's own) when absent. */
  readonly algorithms?: readonly string[];
}

export type TokenCheck = TokenCheckFunction | JwksTokenCheck;

/** A token check comparing with one static token in constant time. */
export function staticToken(expected: string): TokenCheckFunction {
  const wanted = createHash('sha256').update(expected).digest();
  return (token) => timingSafeEqual(createHash('sha256').update(token).digest(), wanted);
}

/** The token of an `Authorization: Bearer` header (RFC 6750 §2.1), or undefined. */
export function bearerTokenOf(authorization: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization ?? '');
  return match?.[1];
}

/** The check as one function: a JWKS check made once, its key set fetched on first use and cached by jose. */
export function tokenVerifier(check: TokenCheck): (token: string) => Promise<boolean> {
  if (typeof check === 'function') return async (token) => (await check(token)) === true;
  const keys = createRemoteJWKSet(new URL(check.jwks));
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: check.issuer,
        audience: typeof check.audience === 'string' ? check.audience : [...check.audience],
        ...(check.algorithms ? { algorithms: [...check.algorithms] } : {}),
      }));
    } catch {
      return false;
    }
    if (check.clientId === undefined) return true;
    return (payload['client_id'] ?? payload['azp']) === check.clientId;
  };
}
