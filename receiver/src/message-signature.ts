/**
 * Verifying a signed delivery (RFC 9421 HTTP Message Signatures, RFC 9530 Content-Digest), as
 * Koerier signs it (its functions/core/signatures/message-signature.ts): the signature labelled
 * `koerier` covers `@method`, `@target-uri`, `idempotency-key`, `content-digest`, then
 * `content-type` and every `ce-` header the request has, with `created`, `keyid` and `alg`;
 * `ed25519` or `ecdsa-p256-sha256` (raw r‖s), by a key Koerier publishes as a JWK Set at
 * `/.well-known/http-message-signatures-directory`.
 *
 * Koerier builds its own signature base (it signs with KMS, which no library drives); the kit does
 * not re-implement it but verifies with the `http-message-signatures` library, so a receiver's
 * check is independent of the signer's reading of the RFC. What the kit adds is what the library
 * leaves to its caller: the digest of the body, which components must be covered (so an added,
 * unsigned `ce-` header fails), the age of the signature against the kit's own clock, and the keys.
 */
import { createHash, createPublicKey, timingSafeEqual, type JsonWebKey } from 'node:crypto';
import { createVerifier, httpbis, type Algorithm, type VerifyingKey } from 'http-message-signatures';

export const KEY_DIRECTORY_PATH = '/.well-known/http-message-signatures-directory';
/** What every Koerier signature covers first; `requiredComponents` adds the event's headers. */
export const SIGNED_COMPONENTS = ['@method', '@target-uri', 'idempotency-key', 'content-digest'] as const;

export interface SignatureOptions {
  /** Koerier's base URL (its origin, e.g. `https://koerier.example.org`): the keys are read from its key directory. */
  readonly koerier?: string;
  /** The key directory's URL, where it is not under `koerier`; or the keys themselves (a JWK Set). */
  readonly keys?: string | { readonly keys: readonly JsonWebKey[] };
  /** The oldest signature accepted, by its `created` (seconds; default 300). Koerier signs each attempt afresh. */
  readonly maxAgeSeconds?: number;
  /** Clock difference allowed (seconds; default 30). */
  readonly toleranceSeconds?: number;
  /**
   * The URL Koerier called, when it is not the one the receiver sees (a proxy or load balancer in
   * front): `@target-uri` is the subscription's sink exactly as registered.
   */
  readonly targetUri?: (receivedUrl: string) => string;
  /** How long the key directory is kept before it is read again (seconds; default 300). */
  readonly cacheSeconds?: number;
}

export interface SignedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

/** Why a request is not accepted as signed by Koerier; undefined when it is. */
export type SignatureVerifier = (request: SignedRequest, nowMs: number) => Promise<string | undefined>;

/** What the signature must cover for this request: Koerier's four, Content-Type and each `ce-` header present. */
export function requiredComponents(headers: Readonly<Record<string, string>>): string[] {
  const names = Object.keys(headers);
  const cloudEvent = names.filter((name) => name.startsWith('ce-')).sort();
  return [...SIGNED_COMPONENTS, ...(names.includes('content-type') ? ['content-type'] : []), ...cloudEvent];
}

/** RFC 9530: whether `Content-Digest`'s sha-256 member is the body's. */
export function digestMatches(header: string | undefined, body: Uint8Array): boolean {
  const member = (header ?? '')
    .split(',')
    .map((part) => /^\s*sha-256=:([A-Za-z0-9+/]+={0,2}):\s*$/.exec(part)?.[1])
    .find((value) => value !== undefined);
  if (member === undefined) return false;
  const expected = createHash('sha256').update(body).digest();
  const given = Buffer.from(member, 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function signatureVerifier(options: SignatureOptions, fetchKeys: typeof fetch = fetch): SignatureVerifier {
  const maxAge = options.maxAgeSeconds ?? 300;
  const tolerance = options.toleranceSeconds ?? 30;
  const keys = keySource(options, fetchKeys);
  return async (request, nowMs) => {
    if (request.headers['signature'] === undefined || request.headers['signature-input'] === undefined)
      return 'the delivery is not signed (no Signature and Signature-Input)';
    if (!digestMatches(request.headers['content-digest'], request.body))
      return 'Content-Digest is missing or is not the sha-256 of the body';
    const now = Math.floor(nowMs / 1000);
    let verified: boolean | null;
    try {
      verified = await httpbis.verifyMessage(
        {
          keyLookup: async ({ keyid, created, expires }) => {
            // The time window on the kit's clock; the library's own reads Date.now() (so it is opened wide below).
            const createdAt = created instanceof Date ? created.getTime() / 1000 : undefined;
            if (createdAt === undefined || createdAt > now + tolerance || now - createdAt > maxAge + tolerance)
              throw new Error('the signature is too old, or from the future');
            // Typed a Date, read by the library as its number of seconds.
            const expiresAt = expires instanceof Date ? expires.getTime() / 1000 : (expires as unknown);
            if (typeof expiresAt === 'number' && expiresAt < now - tolerance)
              throw new Error('the signature has expired');
            return typeof keyid === 'string' ? keys(keyid) : null;
          },
          requiredFields: requiredComponents(request.headers),
          requiredParams: ['created', 'keyid'],
          notAfter: Number.MAX_SAFE_INTEGER,
        },
        {
          method: request.method,
          url: options.targetUri ? options.targetUri(request.url) : request.url,
          headers: request.headers,
        },
      );
    } catch (error) {
      return `the signature does not verify: ${error instanceof Error ? error.message : String(error)}`;
    }
    return verified === true ? undefined : "the signature does not verify with any of Koerier's published keys";
  };
}

/** A verifying key by `keyid` from the key directory: cached, read again after `cacheSeconds` or, at most every 30 s, for an unknown keyid (a rotation). */
function keySource(
  options: SignatureOptions,
  fetchKeys: typeof fetch,
): (keyid: string) => Promise<VerifyingKey | null> {
  const given = options.keys;
  if (given !== undefined && typeof given !== 'string') {
    const fixed = verifyingKeys(given.keys);
    return async (keyid) => fixed.get(keyid) ?? null;
  }
  const url = given ?? (options.koerier ? new URL(KEY_DIRECTORY_PATH, options.koerier).href : undefined);
  if (url === undefined) throw new Error('signatures: name Koerier (koerier) or its keys (keys)');
  const cacheMs = (options.cacheSeconds ?? 300) * 1000;
  let cached: { readonly at: number; readonly keys: Map<string, VerifyingKey> } | undefined;
  let reading: Promise<Map<string, VerifyingKey>> | undefined;
  const read = () =>
    (reading ??= (async () => {
      try {
        const answer = await fetchKeys(url, { headers: { accept: 'application/jwk-set+json, application/json' } });
        if (!answer.ok) throw new Error(`the key directory ${url} answered ${answer.status}`);
        const keys = verifyingKeys(((await answer.json()) as { keys?: JsonWebKey[] }).keys ?? []);
        cached = { at: Date.now(), keys };
        return keys;
      } finally {
        reading = undefined;
      }
    })());
  return async (keyid) => {
    const age = cached ? Date.now() - cached.at : Infinity;
    if (age >= cacheMs) return (await read()).get(keyid) ?? null;
    const keys = cached!.keys;
    // An unknown keyid in a set read a while ago: perhaps a rotation, so read the set again.
    if (!keys.has(keyid) && age >= 30_000) return (await read()).get(keyid) ?? null;
    return keys.get(keyid) ?? null;
  };
}

function verifyingKeys(jwks: readonly JsonWebKey[]): Map<string, VerifyingKey> {
  const keys = new Map<string, VerifyingKey>();
  for (const jwk of jwks) {
    const kid = (jwk as { kid?: unknown }).kid;
    const alg = algorithmOf(jwk);
    if (typeof kid !== 'string' || alg === undefined) continue;
    keys.set(kid, { id: kid, algs: [alg], verify: createVerifier(createPublicKey({ key: jwk, format: 'jwk' }), alg) });
  }
  return keys;
}

/** The RFC 9421 algorithm of a Koerier key: Ed25519 (OKP) or P-256 (EC). */
function algorithmOf(jwk: JsonWebKey): Algorithm | undefined {
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return 'ed25519';
  if (jwk.kty === 'EC' && jwk.crv === 'P-256') return 'ecdsa-p256-sha256';
  return undefined;
}
