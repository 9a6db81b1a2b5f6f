/**
 * Signed deliveries (issue 12, item 6): HTTP Message Signatures (RFC 9421) over a delivery's
 * method, target URI, `Idempotency-Key`, `Content-Digest` (RFC 9530, sha-256), `Content-Type` and
 * every `ce-` header (issue 28, item 11), with `created`, `keyid` and `alg` as signature parameters. This module is pure: it builds the digest, the
 * signature base and the two header fields; the private key sits behind `SigningKeys`, a port whose
 * adapters sign with AWS KMS or, on the laptop, a local key file (functions/aws/signing-keys.ts).
 *
 * Only what RFC 9421 needs for Koerier's own requests is implemented: derived components
 * `@method`, `@target-uri`, `@authority`, `@path`, `@query` and plain header fields (no `;sf`,
 * `;bs`, `;key` or `;req` parameters). Receivers verify with any RFC 9421 library (README).
 */
import { createHash } from 'node:crypto';

/** The RFC 9421 algorithms Koerier signs with (HTTP Signature Algorithms registry names). */
export type SignatureAlgorithm = 'ed25519' | 'ecdsa-p256-sha256';

/** One private key, able to sign; `keyId` is what `keyid` carries and the JWKS's `kid`. */
export interface SigningKey {
  readonly keyId: string;
  readonly algorithm: SignatureAlgorithm;
  /** The raw signature over `data` as RFC 9421 §3.3 defines it for `algorithm` (ECDSA: r‖s, 64 bytes). */
  sign(data: Uint8Array): Promise<Uint8Array>;
}

/** A public key as a JWK (RFC 7517), with `kid`, `alg` and `use`. */
export type PublicJwk = Readonly<Record<string, string>>;

/** The port: the key that signs now, and every key a receiver may meet (current first). */
export interface SigningKeys {
  current(): Promise<SigningKey>;
  /** The current key and the previous ones still published (rotation), as JWKs. */
  publicKeys(): Promise<readonly PublicJwk[]>;
}

/** The signature's label in `Signature-Input` and `Signature`. */
export const SIGNATURE_LABEL = 'koerier';

/** What every signed delivery covers first, in this order; `deliveryComponents` adds the event's headers. */
export const DELIVERY_COMPONENTS = ['@method', '@target-uri', 'idempotency-key', 'content-digest'] as const;

/**
 * What a delivery's signature covers: DELIVERY_COMPONENTS, then `content-type` and each `ce-`
 * header the request has, the `ce-` ones in name order (issue 28, item 11). In binary mode the
 * event's attributes travel in those headers, not in the body, so the digest alone would leave an
 * event's id, source and type open to change; a structured or batch delivery has no `ce-` header,
 * and its Content-Type still says how the body is to be read. Header names are taken lower-case,
 * as RFC 9421 §2.1 names components.
 */
export function deliveryComponents(headers: Readonly<Record<string, string>>): string[] {
  const names = Object.keys(headers).map((name) => name.toLowerCase());
  const cloudEvent = names.filter((name) => name.startsWith('ce-')).sort();
  return [...DELIVERY_COMPONENTS, ...(names.includes('content-type') ? ['content-type'] : []), ...cloudEvent];
}

/** The request as the signature sees it: header names in any case; each header one value. */
export interface SignableRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface SignatureParameters {
  /** Epoch seconds. */
  readonly created: number;
  readonly expires?: number;
  readonly keyid: string;
  readonly alg?: SignatureAlgorithm;
  readonly nonce?: string;
  readonly tag?: string;
}

/** RFC 9530 `Content-Digest` with sha-256: `sha-256=:<base64>:`. */
export function contentDigest(body: Uint8Array | string): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`;
}

/**
 * RFC 9421 §2.3: the `@signature-params` value, an inner list of the covered component names
 * followed by the parameters in this order: created, expires, nonce, keyid, alg, tag (only those
 * given). The same text goes into `Signature-Input` after the label.
 */
export function signatureParams(components: readonly string[], parameters: SignatureParameters): string {
  const list = `(${components.map((name) => sfString(name)).join(' ')})`;
  const parts: string[] = [list, `created=${integer(parameters.created)}`];
  if (parameters.expires !== undefined) parts.push(`expires=${integer(parameters.expires)}`);
  if (parameters.nonce !== undefined) parts.push(`nonce=${sfString(parameters.nonce)}`);
  parts.push(`keyid=${sfString(parameters.keyid)}`);
  if (parameters.alg !== undefined) parts.push(`alg=${sfString(parameters.alg)}`);
  if (parameters.tag !== undefined) parts.push(`tag=${sfString(parameters.tag)}`);
  return parts.join(';');
}

/**
 * RFC 9421 §2.5: one line per covered component, `"<name>": <value>`, then the
 * `"@signature-params"` line, joined by LF without a trailing one. Throws when a covered header
 * is absent (§2.5: the signer must not sign what is not there).
 */
export function signatureBase(
  request: SignableRequest,
  components: readonly string[],
  parameters: SignatureParameters,
): string {
  const lines = components.map((name) => `${sfString(name)}: ${componentValue(request, name)}`);
  lines.push(`"@signature-params": ${signatureParams(components, parameters)}`);
  return lines.join('\n');
}

/** RFC 9421 §2.1 and §2.2: a header's value trimmed, or a derived component. */
export function componentValue(request: SignableRequest, name: string): string {
  switch (name) {
    case '@method':
      return request.method.toUpperCase();
    case '@target-uri':
      return request.url;
    case '@authority':
      return new URL(request.url).host.toLowerCase();
    case '@path':
      return new URL(request.url).pathname || '/';
    case '@query':
      return new URL(request.url).search || '?';
    default: {
      if (name.startsWith('@')) throw new Error(`the derived component ${name} is not supported`);
      const wanted = name.toLowerCase();
      const entry = Object.entries(request.headers).find(([header]) => header.toLowerCase() === wanted);
      if (!entry) throw new Error(`the covered header ${name} is not in the request`);
      return entry[1].trim();
    }
  }
}

/**
 * The headers that sign a delivery: `Content-Digest` of `body`, then `Signature-Input` and
 * `Signature` over `deliveryComponents` of its headers with `key`, created at `now`.
 */
export async function deliverySignatureHeaders(
  request: SignableRequest & { readonly body: Uint8Array | string },
  key: SigningKey,
  now: Date,
): Promise<Record<string, string>> {
  const digest = contentDigest(request.body);
  const signable = { ...request, headers: { ...request.headers, 'content-digest': digest } };
  const parameters: SignatureParameters = {
    created: Math.floor(now.getTime() / 1000),
    keyid: key.keyId,
    alg: key.algorithm,
  };
  const components = deliveryComponents(signable.headers);
  const base = signatureBase(signable, components, parameters);
  const signature = await key.sign(Buffer.from(base, 'utf8'));
  return {
    'content-digest': digest,
    'signature-input': `${SIGNATURE_LABEL}=${signatureParams(components, parameters)}`,
    signature: `${SIGNATURE_LABEL}=:${Buffer.from(signature).toString('base64')}:`,
  };
}

/** RFC 8941 §4.1.6 sf-string: printable ASCII, `"` and `\` escaped. */
function sfString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) throw new Error('a signature parameter or component name must be printable ASCII');
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function integer(value: number): string {
  if (!Number.isInteger(value) || Math.abs(value) > 999_999_999_999_999)
    throw new Error('a signature timestamp must be an integer');
  return String(value);
}
