/**
 * What the lean AWS clients (./dynamodb-requests.ts, ./sqs-requests.ts, ./s3-requests.ts,
 * ./kms-requests.ts) share in place of the SDK's runtime: signing and sending with the standard
 * retry mode, the hash the SigV4 signer asks for, and the shape of the per-operation wrapper the
 * X-Ray tracing puts around them (./tracing.ts). One copy of each in every bundle.
 */
import { createHash, createHmac } from 'node:crypto';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider, HttpRequest as SignableRequest, SourceData } from '@smithy/types';
import { isBrokenConnection, NodeTransport, type AwsHttpRequest, type AwsHttpResponse, type AwsTransport } from './aws-http-transport.js';

export type { AwsHttpRequest, AwsHttpResponse, AwsTransport } from './aws-http-transport.js';

export type OperationWrapper = <T>(operation: string, send: () => Promise<T>) => Promise<T>;

/** One request sent, each retry its own (what S3 and KMS bill); `responseBytes` is absent when no answer came. */
export interface LeanAttempt {
  readonly operation: string;
  readonly requestBytes: number;
  readonly responseBytes?: number;
}

/** How a lean client sends: its signer, its transport, how many attempts, who is told of each. */
export interface SignedSending {
  /** The SDK's signer: S3's requests and presigned URLs, and any request a client does not sign itself. */
  readonly signer: SignatureV4;
  /** The headers `request` goes out with, signed. */
  readonly sign: (request: AwsHttpRequest) => Promise<Record<string, string>>;
  readonly transport: AwsTransport;
  readonly maxAttempts: number;
  /** The client's retry quota: shared by all its operations, as the SDK's retry strategy is by its client's. */
  readonly retryQuota: RetryQuota;
  readonly observers: ((attempt: LeanAttempt) => void)[];
}

export interface LeanClientOptions {
  /** Default: AWS_REGION. */
  readonly region?: string;
  /** Default: the SDK's credential chain (in the bundles: the environment, functions/aws/lambda-credentials.ts). */
  readonly credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  /** Default: 3, as the SDK's standard retry mode. */
  readonly maxAttempts?: number;
  /** Default: node:http(s) with keep-alive. Tests capture requests here. */
  readonly transport?: AwsTransport;
}

/**
 * What every lean client is: a SigV4 signer for one service, a transport, the SDK's standard
 * retries, a trace wrapper around each operation and observers of each attempt. The clients add
 * their operations and how their service answers.
 */
export abstract class LeanAwsClient {
  /** What X-Ray names its subsegments (./tracing.ts), as it names the SDK client's. */
  abstract readonly serviceName: string;
  protected readonly region: string;
  protected readonly credentials: AwsCredentialIdentity | AwsCredentialIdentityProvider;
  protected readonly sending: SignedSending;
  private readonly nodeTransport: NodeTransport | undefined;
  private around: OperationWrapper = (_, send) => send();

  protected constructor(options: LeanClientOptions, signing: { readonly service: string; readonly uriEscapePath?: boolean; readonly applyChecksum?: boolean }) {
    this.region = options.region ?? process.env['AWS_REGION'] ?? process.env['AWS_DEFAULT_REGION'] ?? 'us-east-1';
    this.nodeTransport = options.transport ? undefined : new NodeTransport();
    this.credentials = options.credentials ?? defaultProvider();
    this.sending = {
      signer: new SignatureV4({ credentials: this.credentials, region: this.region, sha256: NodeSha256, ...signing }),
      sign: (request) => this.signedHeaders(request),
      transport: options.transport ?? ((request) => this.nodeTransport!.send(request)),
      maxAttempts: options.maxAttempts ?? 3,
      retryQuota: new RetryQuota(),
      observers: [],
    };
  }

  /**
   * Runs every later operation (all its attempts) inside `wrap`: the X-Ray subsegment per request in
   * Lambda (./tracing.ts), which captures the SDK clients through their middleware stack instead.
   */
  traceWith(wrap: OperationWrapper): void {
    this.around = wrap;
  }

  /** Tells `observer` of every request sent, retries included, as AWS bills them: the benchmarks count with it (bench/support/aws-usage.ts). */
  observeAttempts(observer: (attempt: LeanAttempt) => void): void {
    this.sending.observers.push(observer);
  }

  /** Closes the kept-alive connections. */
  destroy(): void {
    this.nodeTransport?.destroy();
  }

  /** The headers `request` goes out with, signed by the SDK's signer; a client whose requests all have one simple shape may sign them itself. */
  protected async signedHeaders(request: AwsHttpRequest): Promise<Record<string, string>> {
    return ((await this.sending.signer.sign(request as SignableRequest)) as unknown as AwsHttpRequest).headers;
  }

  /** Runs one operation inside the trace wrapper. */
  protected traced<T>(operation: string, send: () => Promise<T>): Promise<T> {
    return this.around(operation, send);
  }
}

/**
 * Signs and sends `request`, again after a broken connection or an answer `retryOf` classes as
 * retryable, up to `maxAttempts` in all and while the client's retry quota lasts; returns the last
 * answer, whatever its status.
 */
export async function sendWithStandardRetries(
  operation: string,
  request: AwsHttpRequest,
  sending: SignedSending,
  retryOf: (response: AwsHttpResponse) => StandardRetry | undefined,
): Promise<AwsHttpResponse> {
  const requestBytes = request.body?.byteLength ?? 0;
  const observe = (attempt: LeanAttempt) => sending.observers.forEach((observer) => observer(attempt));
  // What the retry that led to the current attempt took from the quota; undefined on the first attempt.
  let retryCost: number | undefined;
  for (let attempt = 1; ; attempt++) {
    let response: AwsHttpResponse;
    try {
      // Signed again on each attempt: the date moves on.
      response = await sending.transport({ ...request, headers: await sending.sign(request) });
      observe({ operation, requestBytes, responseBytes: response.body.byteLength });
    } catch (error) {
      observe({ operation, requestBytes });
      // The SDK takes a broken connection for a transient error.
      if (attempt < sending.maxAttempts && isBrokenConnection(error) && (retryCost = sending.retryQuota.take('transient')) !== undefined) {
        await standardBackoff(attempt);
        continue;
      }
      throw error;
    }
    if (response.statusCode >= 200 && response.statusCode < 300) {
      sending.retryQuota.giveBack(retryCost);
      return response;
    }
    const retry = retryOf(response);
    if (retry === undefined || attempt >= sending.maxAttempts) return response;
    retryCost = sending.retryQuota.take(retry.kind);
    if (retryCost === undefined) return response;
    await standardBackoff(attempt, retry.firstCeilingMs);
  }
}

/**
 * The SDK's retry quota (standard mode, @smithy/core's `StandardRetryStrategy` with the lockfile's
 * 2026 costs): a client holds 500 tokens, each retry after a transient error takes 14 and after
 * throttling 5, and a retry is not made when too few are left. A success gives back what its last
 * retry took, or 1 when it needed none. So while a service fails most requests, a client stops
 * multiplying its load by the retries: after about 35 transient retries its requests go out once
 * each until successes earn the tokens back (issue 15: the lean clients keep the SDK's behaviour).
 */
export class RetryQuota {
  static readonly CAPACITY = 500;
  static readonly COST: Readonly<Record<StandardRetry['kind'], number>> = { transient: 14, throttling: 5 };
  private tokens = RetryQuota.CAPACITY;

  /** Takes a retry's cost and returns it, or undefined (taking nothing) when the quota cannot pay it. */
  take(kind: StandardRetry['kind']): number | undefined {
    const cost = RetryQuota.COST[kind];
    if (this.tokens < cost) return undefined;
    this.tokens -= cost;
    return cost;
  }

  /** After a success: back what its retry took, or 1 for a success at the first attempt. */
  giveBack(retryCost: number | undefined): void {
    this.tokens = Math.min(RetryQuota.CAPACITY, this.tokens + (retryCost ?? 1));
  }

  get available(): number {
    return this.tokens;
  }
}

// The SDK's standard retry mode (@smithy/core's retry: error classification), for both services.
const THROTTLING_CODES = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);
const TRANSIENT_CODES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);
/** The first retry's backoff ceilings (ms) after a transient and after a throttling answer; each later retry doubles them. */
export interface RetryCeilings {
  readonly transientMs: number;
  readonly throttlingMs: number;
}

/** The SDK's standard mode as the lockfile's release has it (@smithy/core retry, `Retry.delay()` and `Retry.throttlingDelay()`). */
const STANDARD_RETRY_CEILINGS: RetryCeilings = { transientMs: 50, throttlingMs: 1_000 };
const MAX_RETRY_CEILING_MS = 20_000;

/** A retryable error answer: its kind, which sets the retry's cost, and the first retry's backoff ceiling (ms). */
export interface StandardRetry {
  readonly kind: 'transient' | 'throttling';
  readonly firstCeilingMs: number;
}

/**
 * How the SDK's standard mode takes an error answer, or undefined for one it does not retry:
 * throttling (429 or a throttling code) with the longer first backoff, transient answers (500,
 * 502, 503, 504 or a timeout code) with the shorter; any other 4xx or 5xx (501, for one) fails at
 * once. A service's SDK client may set its own `ceilings` (DynamoDB's).
 */
export function standardRetry(statusCode: number, code: string, ceilings: RetryCeilings = STANDARD_RETRY_CEILINGS): StandardRetry | undefined {
  if (statusCode === 429 || THROTTLING_CODES.has(code)) return { kind: 'throttling', firstCeilingMs: ceilings.throttlingMs };
  if (TRANSIENT_STATUSES.has(statusCode) || TRANSIENT_CODES.has(code)) return { kind: 'transient', firstCeilingMs: ceilings.transientMs };
  return undefined;
}

/** Full jitter under a ceiling that starts at `firstCeiling` ms and doubles with each retry, at most 20 s: the SDK's standard mode. */
export function standardBackoff(attempt: number, firstCeiling = STANDARD_RETRY_CEILINGS.transientMs): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_RETRY_CEILING_MS, firstCeiling * 2 ** (attempt - 1))));
}

/** The signer's hash: SHA-256, or HMAC-SHA-256 when given a secret. node:crypto, not the SDK's JavaScript one. */
export class NodeSha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: SourceData): void {
    this.hash.update(toBuffer(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
}

function toBuffer(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}
