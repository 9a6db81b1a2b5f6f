/**
 * The few S3 requests Koerier sends (PutObject, GetObject, HeadObject, ListObjectsV2, presigned
 * GET and PUT), signed with SigV4 and sent over node:http(s), in place of @aws-sdk/client-s3: the
 * SDK client and the @smithy/@aws-sdk pieces only it pulls in were about 160 KB minified of every
 * function that reaches S3 (issue 15, item 4; bench/results/bundles.json).
 * test/unit/aws/s3-requests-signing.test.ts signs the same requests with the SDK and with this
 * and compares them.
 *
 * Addressing as the SDK does it: AWS_ENDPOINT_URL_S3 (the laptop's s3rver) path-style, else
 * virtual-hosted `https://<bucket>.s3.<region>.amazonaws.com`. Retries as the SDK's standard mode:
 * 3 attempts, exponential backoff with full jitter, on 5xx, throttling and broken connections.
 */
import { createHash } from 'node:crypto';
import type { HttpRequest as SignableRequest } from '@smithy/types';
import {
  LeanAwsClient,
  sendWithStandardRetries,
  standardRetry,
  type AwsHttpRequest,
  type AwsHttpResponse,
  type LeanClientOptions,
} from './lean-client-support.js';
import { errorCode, listPageOf, type S3ListPage } from './s3-xml.js';

export type { S3ListPage } from './s3-xml.js';

export interface S3RequestsOptions extends LeanClientOptions {
  /** Default: AWS_ENDPOINT_URL_S3; addressed path-style. Without it, virtual-hosted AWS endpoints. */
  readonly endpoint?: string;
}

export interface S3Object {
  readonly body: Buffer;
  readonly contentType: string | undefined;
  /** `x-amz-meta-*`, without the prefix. */
  readonly metadata: Record<string, string>;
}

export interface S3ObjectHead {
  readonly contentLength: number;
  readonly checksumSHA256: string | undefined;
  readonly checksumType: string | undefined;
}

/** A non-2xx answer other than "no such object": S3's error `Code` and the status, never the URL or credentials. */
export class S3RequestError extends Error {
  constructor(
    readonly operation: string,
    readonly code: string,
    readonly statusCode: number,
  ) {
    super(`S3 ${operation} failed: ${code} (HTTP ${statusCode})`);
    this.name = code;
  }
}

const EMPTY_SHA256 = createHash('sha256').digest('hex');
const BUCKET_AS_HOST = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;

export class S3Requests extends LeanAwsClient {
  readonly serviceName = 'S3';
  private readonly endpoint: URL | undefined;

  constructor(options: S3RequestsOptions = {}) {
    // S3 signs the path as sent, without the second escaping other services use.
    super(options, { service: 's3', uriEscapePath: false, applyChecksum: false });
    const endpoint = options.endpoint ?? process.env['AWS_ENDPOINT_URL_S3'] ?? process.env['AWS_ENDPOINT_URL'];
    this.endpoint = endpoint ? new URL(endpoint) : undefined;
  }

  async putObject(input: { bucket: string; key: string; body: Buffer; contentType: string; metadata?: Record<string, string> }): Promise<void> {
    const headers: Record<string, string> = {
      'content-type': input.contentType,
      'content-length': String(input.body.length),
      // S3 refuses the object if its bytes do not hash to this: end-to-end integrity, as the SDK's default checksum gives.
      'x-amz-checksum-sha256': createHash('sha256').update(input.body).digest('base64'),
      'x-amz-sdk-checksum-algorithm': 'SHA256',
    };
    for (const [name, value] of Object.entries(input.metadata ?? {})) headers[`x-amz-meta-${name.toLowerCase()}`] = value;
    await this.send('PutObject', this.request('PUT', input.bucket, input.key, { 'x-id': 'PutObject' }, headers, input.body));
  }

  /** The object, or undefined when there is none (404 `NoSuchKey`). */
  async getObject(bucket: string, key: string): Promise<S3Object | undefined> {
    const response = await this.send('GetObject', this.request('GET', bucket, key, { 'x-id': 'GetObject' }), { absentWhen404: true });
    if (response === undefined) return undefined;
    const metadata: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) if (name.startsWith('x-amz-meta-') && value !== undefined) metadata[name.slice(11)] = value;
    return { body: response.body, contentType: response.headers['content-type'], metadata };
  }

  /** Size and S3's SHA-256 checksum (ChecksumMode ENABLED), or undefined when there is no such object. */
  async headObject(bucket: string, key: string): Promise<S3ObjectHead | undefined> {
    const response = await this.send('HeadObject', this.request('HEAD', bucket, key, {}, { 'x-amz-checksum-mode': 'ENABLED' }), { absentWhen404: true });
    if (response === undefined) return undefined;
    return {
      contentLength: Number(response.headers['content-length'] ?? 0),
      checksumSHA256: response.headers['x-amz-checksum-sha256'],
      checksumType: response.headers['x-amz-checksum-type'],
    };
  }

  async listObjectsV2(bucket: string, options: { prefix: string; continuationToken?: string | undefined }): Promise<S3ListPage> {
    const query: Record<string, string> = { 'list-type': '2', prefix: options.prefix };
    if (options.continuationToken !== undefined) query['continuation-token'] = options.continuationToken;
    const response = (await this.send('ListObjectsV2', this.request('GET', bucket, undefined, query)))!;
    return listPageOf(response.body.toString('utf8'));
  }

  /**
   * A SigV4 query-signed URL, valid `seconds`, as @aws-sdk/s3-request-presigner makes it: the
   * payload unsigned, `signedHeaders` signed and left for the caller to send (not hoisted into the query).
   */
  async presignedUrl(method: 'GET' | 'PUT', bucket: string, key: string, seconds: number, signedHeaders: Record<string, string> = {}): Promise<string> {
    const request = this.request(
      method,
      bucket,
      key,
      { 'x-id': method === 'GET' ? 'GetObject' : 'PutObject' },
      { ...signedHeaders, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    );
    const signed = await this.sending.signer.presign(request as SignableRequest, {
      expiresIn: seconds,
      unhoistableHeaders: new Set(Object.keys(signedHeaders)),
    });
    const query = Object.entries(signed.query ?? {})
      .flatMap(([name, value]) => (Array.isArray(value) ? value.map((v: string) => [name, v]) : [[name, value ?? '']]))
      .map(([name, value]) => `${encodeURIComponent(name!)}=${encodeURIComponent(value!)}`)
      .join('&');
    const port = signed.port ? `:${signed.port}` : '';
    return `${signed.protocol}//${signed.hostname}${port}${signed.path}?${query}`;
  }

  private request(
    method: string,
    bucket: string,
    key: string | undefined,
    query: Record<string, string>,
    headers: Record<string, string> = {},
    body?: Buffer,
  ): AwsHttpRequest {
    const objectPath = key === undefined ? '' : `/${encodeKey(key)}`;
    let protocol: 'http:' | 'https:' = 'https:';
    let hostname: string;
    let port: number | undefined;
    let path: string;
    if (this.endpoint) {
      protocol = this.endpoint.protocol === 'http:' ? 'http:' : 'https:';
      hostname = this.endpoint.hostname;
      port = this.endpoint.port ? Number(this.endpoint.port) : undefined;
      path = `${this.endpoint.pathname.replace(/\/$/, '')}/${bucket}${objectPath}`;
    } else if (BUCKET_AS_HOST.test(bucket)) {
      hostname = `${bucket}.s3.${this.region}.amazonaws.com`;
      path = objectPath || '/';
    } else {
      hostname = `s3.${this.region}.amazonaws.com`;
      path = `/${bucket}${objectPath}`;
    }
    const all: Record<string, string> = {
      ...headers,
      host: port === undefined ? hostname : `${hostname}:${port}`,
      'x-amz-content-sha256': headers['x-amz-content-sha256'] ?? (body ? createHash('sha256').update(body).digest('hex') : EMPTY_SHA256),
    };
    return { method, protocol, hostname, ...(port === undefined ? {} : { port }), path, query, headers: all, ...(body ? { body } : {}) };
  }

  /** Signs and sends, with the SDK's standard retries; undefined for a 404 when `absentWhen404`. */
  private send(operation: string, request: AwsHttpRequest, options: { absentWhen404?: boolean } = {}): Promise<AwsHttpResponse | undefined> {
    return this.traced(operation, () => this.sendWithRetries(operation, request, options));
  }

  private async sendWithRetries(operation: string, request: AwsHttpRequest, options: { absentWhen404?: boolean }): Promise<AwsHttpResponse | undefined> {
    const response = await sendWithStandardRetries(operation, request, this.sending, (answer) =>
      standardRetry(answer.statusCode, errorCode(answer.statusCode, answer.body.toString('utf8'))),
    );
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    const code = errorCode(response.statusCode, response.body.toString('utf8'));
    if (response.statusCode === 404 && options.absentWhen404 && (code === 'NoSuchKey' || code === 'NotFound')) return undefined;
    throw new S3RequestError(operation, code, response.statusCode);
  }
}

/** S3's rules: each segment URI-encoded (RFC 3986 unreserved kept), `/` kept. */
export function encodeKey(key: string): string {
  return key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}
