/**
 * The four KMS requests Koerier sends (Encrypt, Decrypt, Sign, GetPublicKey), signed with SigV4
 * and sent over node:http(s), in place of @aws-sdk/client-kms: the SDK client was about 28 KB
 * minified of every function that reaches KMS (issue 15, item 4; bench/results/bundles.json).
 * test/unit/aws/kms-requests-signing.test.ts signs the same requests with the SDK and with this
 * and compares them.
 *
 * KMS speaks JSON 1.1 (./aws-json-protocol.ts, with the endpoint and the retries): `POST /` with
 * `X-Amz-Target: TrentService.<Operation>`, blobs in base64.
 */
import { LeanJsonClient, text, type JsonFailure, type LeanJsonClientOptions } from './aws-json-protocol.js';

export type KmsRequestsOptions = LeanJsonClientOptions;

export interface KmsPublicKey {
  readonly keySpec: string | undefined;
  readonly keyUsage: string | undefined;
  /** DER SubjectPublicKeyInfo. */
  readonly publicKey: Buffer | undefined;
}

/** A non-2xx answer: KMS's error code (`__type`) and the status; never its message, which may name the key, nor the URL or credentials. */
export class KmsRequestError extends Error {
  constructor(
    readonly operation: string,
    readonly code: string,
    readonly statusCode: number,
  ) {
    super(`KMS ${operation} failed: ${code} (HTTP ${statusCode})`);
    this.name = code;
  }
}

export class KmsRequests extends LeanJsonClient {
  readonly serviceName = 'KMS';

  constructor(options: KmsRequestsOptions = {}) {
    super(options, { service: 'kms', endpointVariable: 'KMS', version: '1.1', targetPrefix: 'TrentService', serverErrorCode: 'KMSInternalException' });
  }

  /** The ciphertext blob, bound to `encryptionContext`; undefined if KMS answered none. */
  async encrypt(input: { keyId: string; plaintext: Uint8Array; encryptionContext: Readonly<Record<string, string>> }): Promise<Buffer | undefined> {
    const output = await this.call('Encrypt', {
      KeyId: input.keyId,
      Plaintext: base64(input.plaintext),
      EncryptionContext: input.encryptionContext,
    });
    return blob(output['CiphertextBlob']);
  }

  /** The plaintext; KMS refuses (InvalidCiphertextException) a blob made under another context. */
  async decrypt(input: { keyId: string; ciphertextBlob: Uint8Array; encryptionContext: Readonly<Record<string, string>> }): Promise<Buffer | undefined> {
    const output = await this.call('Decrypt', {
      CiphertextBlob: base64(input.ciphertextBlob),
      EncryptionContext: input.encryptionContext,
      KeyId: input.keyId,
    });
    return blob(output['Plaintext']);
  }

  /** The DER signature of `message`, hashed by KMS (MessageType RAW). */
  async sign(input: { keyId: string; message: Uint8Array; signingAlgorithm: string }): Promise<Buffer | undefined> {
    const output = await this.call('Sign', {
      KeyId: input.keyId,
      Message: base64(input.message),
      SigningAlgorithm: input.signingAlgorithm,
      MessageType: 'RAW',
    });
    return blob(output['Signature']);
  }

  async getPublicKey(keyId: string): Promise<KmsPublicKey> {
    const output = await this.call('GetPublicKey', { KeyId: keyId });
    return { keySpec: text(output['KeySpec']), keyUsage: text(output['KeyUsage']), publicKey: blob(output['PublicKey']) };
  }

  /**
   * `input`'s members go in the order the SDK writes them, KMS's model order (Encrypt: KeyId,
   * Plaintext, EncryptionContext), so that both sign the same bytes; KMS itself reads any order.
   */
  private call(operation: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.callJson(operation, input);
  }

  protected failure({ operation, code, statusCode }: JsonFailure): Error {
    return new KmsRequestError(operation, code, statusCode);
  }
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function blob(value: unknown): Buffer | undefined {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : undefined;
}
