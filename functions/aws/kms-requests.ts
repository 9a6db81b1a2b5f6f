/**
 * The four KMS requests Koerier sends (Encrypt, Decrypt, Sign, GetPublicKey), signed with SigV4
 * and sent over node:http(s), in place of @aws-sdk/client-kms: the SDK client was about 28 KB
 * minified of every function that reaches KMS (issue 15, item 4; bench/results/bundles.json).
 * test/unit/aws/kms-requests-signing.test.ts signs the same requests with the SDK and with this
 * and compares them.
 *
 * KMS speaks JSON 1.1: `POST /` with `X-Amz-Target: TrentService.<Operation>`, blobs in base64.
 * Endpoint as the SDK finds it: AWS_ENDPOINT_URL_KMS, else AWS_ENDPOINT_URL, else
 * `https://kms.<region>.amazonaws.com`. Retries as the SDK's standard mode: 3 attempts, full
 * jitter, on 5xx, 429, throttling codes and broken connections.
 */
import {
  LeanAwsClient,
  sendWithStandardRetries,
  standardRetryBase,
  type AwsHttpRequest,
  type AwsHttpResponse,
  type LeanClientOptions,
} from './lean-client-support.js';

export interface KmsRequestsOptions extends LeanClientOptions {
  /** Default: AWS_ENDPOINT_URL_KMS, else AWS_ENDPOINT_URL, else KMS's regional endpoint. */
  readonly endpoint?: string;
}

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

export class KmsRequests extends LeanAwsClient {
  readonly serviceName = 'KMS';
  private readonly endpoint: URL;

  constructor(options: KmsRequestsOptions = {}) {
    super(options, { service: 'kms' });
    this.endpoint = new URL(
      options.endpoint ?? process.env['AWS_ENDPOINT_URL_KMS'] ?? process.env['AWS_ENDPOINT_URL'] ?? `https://kms.${this.region}.amazonaws.com`,
    );
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
    const body = Buffer.from(JSON.stringify(input), 'utf8');
    const port = this.endpoint.port ? Number(this.endpoint.port) : undefined;
    const request: AwsHttpRequest = {
      method: 'POST',
      protocol: this.endpoint.protocol === 'http:' ? 'http:' : 'https:',
      hostname: this.endpoint.hostname,
      ...(port === undefined ? {} : { port }),
      path: this.endpoint.pathname || '/',
      query: {},
      headers: {
        'content-type': 'application/x-amz-json-1.1',
        'x-amz-target': `TrentService.${operation}`,
        'content-length': String(body.length),
        host: port === undefined ? this.endpoint.hostname : `${this.endpoint.hostname}:${port}`,
      },
      body,
    };
    return this.traced(operation, () => this.sendWithRetries(operation, request));
  }

  private async sendWithRetries(operation: string, request: AwsHttpRequest): Promise<Record<string, unknown>> {
    const response = await sendWithStandardRetries(operation, request, this.sending, (answer) =>
      standardRetryBase(answer.statusCode, errorCode(answer, parsed(answer.body))),
    );
    const answer = parsed(response.body);
    if (response.statusCode >= 200 && response.statusCode < 300) return answer;
    throw new KmsRequestError(operation, errorCode(response, answer), response.statusCode);
  }
}

function parsed(body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {};
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    // A proxy's HTML error page, say: the status still names the failure.
    return {};
  }
}

/**
 * As the SDK reads a JSON error's code: the `x-amzn-errortype` header, else `code` or `__type` of the
 * body, stripped of a `namespace#` prefix and a `:uri` suffix; without one, the status names it.
 */
function errorCode(response: AwsHttpResponse, answer: Record<string, unknown>): string {
  const raw = response.headers['x-amzn-errortype'] ?? text(answer['code']) ?? text(answer['__type']);
  const code = raw?.split(':')[0]?.split('#').at(-1);
  if (code) return code;
  return response.statusCode >= 500 ? 'KMSInternalException' : `HTTP${response.statusCode}`;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function blob(value: unknown): Buffer | undefined {
  return typeof value === 'string' ? Buffer.from(value, 'base64') : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
