/**
 * A stand-in for AWS KMS over HTTP, so the functions' KMS adapters (functions/aws/credential-cipher.ts,
 * lock-token-key.ts, signing-keys.ts) run on the laptop host as they run in AWS, through the SDK's
 * KMS client: the JSON 1.1 protocol (`X-Amz-Target: TrentService.<Operation>`, blobs in base64),
 * for the keys it is given and no others.
 *
 * - A symmetric key answers Encrypt and Decrypt: AES-256-GCM under a secret of its own, the key id
 *   and the encryption context bound as additional data, so a ciphertext opens only under the
 *   same key and context (InvalidCiphertextException otherwise), as in KMS.
 * - A signing key (ECC_NIST_P256, SIGN_VERIFY) answers Sign (ECDSA_SHA_256 over the RAW message,
 *   DER-encoded as KMS answers) and GetPublicKey (SPKI DER).
 *
 * Every call is kept in `calls`, in order. test/e2e/kms-keys.test.ts runs a host against it.
 */
import { createCipheriv, createDecipheriv, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface KmsCall {
  readonly operation: string;
  readonly keyId: string;
  readonly encryptionContext?: Readonly<Record<string, string>>;
}

export interface KmsStandIn {
  readonly endpoint: string;
  readonly calls: readonly KmsCall[];
  /** The public key of a signing key, to verify what it signed. */
  publicKey(keyArn: string): KeyObject;
  stop(): Promise<void>;
}

class KmsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startKmsStandIn(keys: {
  readonly symmetric: readonly string[];
  readonly signing: readonly string[];
}): Promise<KmsStandIn> {
  const secrets = new Map(keys.symmetric.map((arn) => [arn, randomBytes(32)]));
  const signing = new Map(keys.signing.map((arn) => [arn, generateKeyPairSync('ec', { namedCurve: 'prime256v1' })]));
  const calls: KmsCall[] = [];

  const additionalData = (keyId: string, context: Record<string, string> | undefined) =>
    Buffer.from(JSON.stringify([keyId, Object.entries(context ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))]));
  const secretOf = (keyId: string) => {
    const secret = secrets.get(keyId);
    if (!secret) throw new KmsError('NotFoundException', `Key '${keyId}' does not exist`);
    return secret;
  };
  const signingKeyOf = (keyId: string) => {
    const pair = signing.get(keyId);
    if (!pair) throw new KmsError('NotFoundException', `Key '${keyId}' does not exist`);
    return pair;
  };

  const operations: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
    Encrypt(body) {
      const keyId = String(body['KeyId']);
      const context = body['EncryptionContext'] as Record<string, string> | undefined;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', secretOf(keyId), iv);
      cipher.setAAD(additionalData(keyId, context));
      const sealed = Buffer.concat([cipher.update(Buffer.from(String(body['Plaintext']), 'base64')), cipher.final()]);
      const blob = Buffer.from(
        JSON.stringify({
          keyId,
          iv: iv.toString('base64'),
          tag: cipher.getAuthTag().toString('base64'),
          sealed: sealed.toString('base64'),
        }),
      );
      return { CiphertextBlob: blob.toString('base64'), KeyId: keyId, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
    },
    Decrypt(body) {
      let blob: { keyId: string; iv: string; tag: string; sealed: string };
      try {
        blob = JSON.parse(Buffer.from(String(body['CiphertextBlob']), 'base64').toString('utf8')) as typeof blob;
      } catch {
        throw new KmsError('InvalidCiphertextException', 'The ciphertext is not one this KMS made');
      }
      if (body['KeyId'] !== undefined && body['KeyId'] !== blob.keyId)
        throw new KmsError('IncorrectKeyException', 'The ciphertext was made with another key');
      const decipher = createDecipheriv('aes-256-gcm', secretOf(blob.keyId), Buffer.from(blob.iv, 'base64'));
      decipher.setAAD(additionalData(blob.keyId, body['EncryptionContext'] as Record<string, string> | undefined));
      decipher.setAuthTag(Buffer.from(blob.tag, 'base64'));
      try {
        const plaintext = Buffer.concat([decipher.update(Buffer.from(blob.sealed, 'base64')), decipher.final()]);
        return { Plaintext: plaintext.toString('base64'), KeyId: blob.keyId, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
      } catch {
        throw new KmsError(
          'InvalidCiphertextException',
          'The ciphertext does not open under this key and encryption context',
        );
      }
    },
    Sign(body) {
      const keyId = String(body['KeyId']);
      if (body['SigningAlgorithm'] !== 'ECDSA_SHA_256' || body['MessageType'] !== 'RAW') {
        throw new KmsError('ValidationException', 'this stand-in signs RAW messages with ECDSA_SHA_256 only');
      }
      const signature = sign('sha256', Buffer.from(String(body['Message']), 'base64'), signingKeyOf(keyId).privateKey);
      return { KeyId: keyId, Signature: signature.toString('base64'), SigningAlgorithm: 'ECDSA_SHA_256' };
    },
    GetPublicKey(body) {
      const keyId = String(body['KeyId']);
      const der = signingKeyOf(keyId).publicKey.export({ format: 'der', type: 'spki' });
      return {
        KeyId: keyId,
        PublicKey: der.toString('base64'),
        KeySpec: 'ECC_NIST_P256',
        KeyUsage: 'SIGN_VERIFY',
        SigningAlgorithms: ['ECDSA_SHA_256'],
      };
    },
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = (status: number, value: object) =>
        response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(value));
      const operation = String(request.headers['x-amz-target'] ?? '').replace(/^TrentService\./, '');
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        const handle = operations[operation];
        if (!handle) throw new KmsError('UnsupportedOperationException', `this stand-in does not answer ${operation}`);
        calls.push({
          operation,
          keyId: String(body['KeyId'] ?? ''),
          ...(body['EncryptionContext'] === undefined
            ? {}
            : { encryptionContext: body['EncryptionContext'] as Record<string, string> }),
        });
        answer(200, handle(body));
      } catch (error) {
        const type = error instanceof KmsError ? error.type : 'KMSInternalException';
        answer(400, { __type: type, message: (error as Error).message });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    publicKey: (keyArn) => signingKeyOf(keyArn).publicKey,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
