/**
 * The `SigningKeys` implementations (issue 12, item 6): the keys that sign deliveries, as the
 * setting `KOERIER_SIGNING_KEYS` lists them, newest first — the first signs, every one is
 * published at the JWKS route so a receiver still verifies what the previous key signed.
 *
 * - `local:<name>`: the laptop host's PEM file `<localKeysDir>/<name>.pem` (Ed25519 or P-256),
 *   made by the host on its first start (local/local-keys.ts).
 * - anything else is an AWS KMS key (id, ARN or alias) of key spec ECC_NIST_P256 and usage
 *   SIGN_VERIFY: the private key never leaves KMS; each signature is one `kms:Sign` call, the
 *   public key one `kms:GetPublicKey` per container.
 *
 * A key's `kid` is its RFC 7638 JWK thumbprint, so it names the key itself, on any host, and a
 * receiver can check a published key against the kid it was asked for.
 */
import { createHash, createPublicKey, sign, type KeyObject, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PublicJwk, SignatureAlgorithm, SigningKey, SigningKeys } from '../core/signatures/message-signature.js';
import { GetPublicKeyCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';

const LOCAL_PREFIX = 'local:';

export interface SigningKeysOptions {
  readonly kms?: () => KMSClient;
  readonly localKeysDir?: string;
}

/** The keys `references` name (newest first); none: a deployment that signs nothing. */
export function signingKeysFor(references: readonly string[], options: SigningKeysOptions = {}): SigningKeys {
  const keys = references.map((reference) => keyFor(reference, options));
  return {
    async current() {
      const [first] = keys;
      if (!first) throw new Error('no signing key is configured (KOERIER_SIGNING_KEYS)');
      return first();
    },
    async publicKeys() {
      return Promise.all(keys.map(async (key) => (await key()).jwk));
    },
  };
}

type LoadedKey = SigningKey & { readonly jwk: PublicJwk };

function keyFor(reference: string, options: SigningKeysOptions): () => Promise<LoadedKey> {
  let loaded: Promise<LoadedKey> | undefined;
  const load = (): Promise<LoadedKey> => {
    if (reference.startsWith(LOCAL_PREFIX)) {
      if (!options.localKeysDir)
        throw new Error(`signing key ${reference} is a laptop key, but no directory of local key files is configured`);
      return Promise.resolve(localKey(join(options.localKeysDir, `${reference.slice(LOCAL_PREFIX.length)}.pem`)));
    }
    if (!options.kms) throw new Error(`signing key ${reference} is a KMS key, but no KMS client is configured`);
    return kmsKey(options.kms(), reference);
  };
  return () => {
    loaded ??= load();
    // A failed read (KMS throttled, say) is tried again on the next delivery.
    loaded.catch(() => (loaded = undefined));
    return loaded;
  };
}

export function localKey(path: string): LoadedKey {
  const privateKey = createPrivateKey(readFileSync(path, 'utf8'));
  const algorithm = algorithmOf(privateKey);
  const jwk = publicJwk(createPublicKey(privateKey), algorithm);
  return {
    keyId: jwk['kid']!,
    algorithm,
    jwk,
    sign: async (data) =>
      algorithm === 'ed25519'
        ? sign(null, data, privateKey)
        : sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' }),
  };
}

async function kmsKey(client: KMSClient, keyId: string): Promise<LoadedKey> {
  const description = await client.send(new GetPublicKeyCommand({ KeyId: keyId }));
  if (description.KeySpec !== 'ECC_NIST_P256' || description.KeyUsage !== 'SIGN_VERIFY' || !description.PublicKey) {
    throw new Error(`KMS key ${keyId} is not an ECC_NIST_P256 SIGN_VERIFY key`);
  }
  const jwk = publicJwk(
    createPublicKey({ key: Buffer.from(description.PublicKey), format: 'der', type: 'spki' }),
    'ecdsa-p256-sha256',
  );
  return {
    keyId: jwk['kid']!,
    algorithm: 'ecdsa-p256-sha256',
    jwk,
    async sign(data) {
      const { Signature } = await client.send(
        new SignCommand({ KeyId: keyId, Message: data, MessageType: 'RAW', SigningAlgorithm: 'ECDSA_SHA_256' }),
      );
      if (!Signature) throw new Error('KMS returned no signature');
      return ecdsaDerToRaw(Buffer.from(Signature), 32);
    },
  };
}

function algorithmOf(key: KeyObject): SignatureAlgorithm {
  if (key.asymmetricKeyType === 'ed25519') return 'ed25519';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1')
    return 'ecdsa-p256-sha256';
  throw new Error(`a signing key must be Ed25519 or EC P-256, not ${key.asymmetricKeyType ?? 'unknown'}`);
}

/** The public JWK with `kid` (RFC 7638 thumbprint), `use: sig` and the JOSE `alg` of the key. */
export function publicJwk(key: KeyObject, algorithm: SignatureAlgorithm): PublicJwk {
  const jwk = key.export({ format: 'jwk' }) as Record<string, string>;
  const required = jwk['kty'] === 'OKP' ? ['crv', 'kty', 'x'] : ['crv', 'kty', 'x', 'y'];
  const canonical = JSON.stringify(Object.fromEntries(required.map((name) => [name, jwk[name]])));
  const kid = createHash('sha256').update(canonical).digest('base64url');
  return { ...jwk, kid, use: 'sig', alg: algorithm === 'ed25519' ? 'EdDSA' : 'ES256' };
}

/**
 * KMS answers an ECDSA signature DER-encoded (SEQUENCE of two INTEGERs); RFC 9421 §3.3.4 wants
 * r and s as fixed-length big-endian octets, concatenated.
 */
export function ecdsaDerToRaw(der: Buffer, size: number): Buffer {
  let offset = 0;
  const expect = (tag: number) => {
    if (der[offset++] !== tag) throw new Error('not a DER ECDSA signature');
    let length = der[offset++]!;
    if (length & 0x80) {
      const bytes = length & 0x7f;
      length = 0;
      for (let i = 0; i < bytes; i++) length = (length << 8) | der[offset++]!;
    }
    return length;
  };
  expect(0x30);
  const integer = () => {
    const length = expect(0x02);
    let value = der.subarray(offset, offset + length);
    offset += length;
    while (value.length > size && value[0] === 0) value = value.subarray(1);
    if (value.length > size) throw new Error('ECDSA integer too long');
    return Buffer.concat([Buffer.alloc(size - value.length), value]);
  };
  return Buffer.concat([integer(), integer()]);
}
