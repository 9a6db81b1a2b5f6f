/**
 * What the lean clients of AWS's JSON protocols share (KMS speaks JSON 1.1; DynamoDB and SQS speak
 * JSON 1.0): `POST /` to the service's endpoint with `X-Amz-Target: <prefix>.<Operation>` and the
 * input as a JSON body, the answer as JSON, and an error named by `x-amzn-errortype`, `code` or
 * `__type`. Each client says how it names its service and which error it throws.
 *
 * Endpoint as the SDK finds it: AWS_ENDPOINT_URL_<SERVICE> (how tests and the laptop point the same
 * code at the emulators), else AWS_ENDPOINT_URL, else `https://<endpoint prefix>.<region>.amazonaws.com`.
 */
import {
  LeanAwsClient,
  sendWithStandardRetries,
  standardRetry,
  type AwsHttpRequest,
  type AwsHttpResponse,
  type LeanClientOptions,
  type RetryCeilings,
} from './lean-client-support.js';
import { JsonRequestSigner } from './json-request-signer.js';

export interface LeanJsonClientOptions extends LeanClientOptions {
  /** Default: AWS_ENDPOINT_URL_<SERVICE>, else AWS_ENDPOINT_URL, else the service's regional endpoint. */
  readonly endpoint?: string;
}

export interface JsonProtocol {
  /** The signing name, which is also the regional endpoint's first label: `kms`, `dynamodb`, `sqs`. */
  readonly service: string;
  /** `AWS_ENDPOINT_URL_<this>`: `KMS`, `DYNAMODB`, `SQS`. */
  readonly endpointVariable: string;
  readonly version: '1.0' | '1.1';
  readonly targetPrefix: string;
  /** Sent with every request besides the protocol's own (SQS asks for its query-compatible error codes). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The code of a 5xx answer that names none. */
  readonly serverErrorCode: string;
  /** Where the service's SDK client sets its own first backoff ceilings (DynamoDB's). Default: the standard mode's (./lean-client-support.ts). */
  readonly retryCeilings?: RetryCeilings;
}

/** A non-2xx answer as the protocol reads it: the code, the status, and the parsed body (members beyond the code, such as DynamoDB's `Item`). */
export interface JsonFailure {
  readonly operation: string;
  readonly code: string;
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly answer: Readonly<Record<string, unknown>>;
}

/**
 * One operation with its input, as the SDK's commands carry them (each client names its commands as
 * the SDK does, so an adapter changes only its import line); `Output` only types what `send` answers.
 */
export abstract class JsonCommand<Input extends object, Output> {
  abstract readonly operation: string;
  declare readonly output?: Output;
  constructor(readonly input: Input) {}
}

/**
 * Sees each operation (not each attempt: `observeAttempts` counts those) with its input and its
 * answer. The benchmarks count batch items and DynamoDB's consumed capacity with it
 * (bench/support/aws-usage.ts).
 */
export interface JsonCallObserver {
  /** Before the input is written: the input to send in its place (the cost bench asks DynamoDB for the capacity it bills). */
  readonly beforeCall?: (operation: string, input: Readonly<Record<string, unknown>>) => Record<string, unknown>;
  readonly afterCall?: (operation: string, input: Readonly<Record<string, unknown>>, output: Readonly<Record<string, unknown>>) => void;
}

export abstract class LeanJsonClient extends LeanAwsClient {
  private readonly callObservers: JsonCallObserver[] = [];
  /** Where every request goes unless `callJson` is given another origin (SQS's queue URLs). */
  protected readonly endpoint: URL;
  private readonly fixedHeaders: Readonly<Record<string, string>>;
  /** Every request here is a POST to `/`: signed without the SDK's signer, about half the CPU. */
  private readonly requestSigner: JsonRequestSigner;

  protected constructor(
    options: LeanJsonClientOptions,
    private readonly protocol: JsonProtocol,
  ) {
    super(options, { service: protocol.service });
    this.endpoint = new URL(
      options.endpoint ??
        process.env[`AWS_ENDPOINT_URL_${protocol.endpointVariable}`] ??
        process.env['AWS_ENDPOINT_URL'] ??
        `https://${protocol.service}.${this.region}.amazonaws.com`,
    );
    this.fixedHeaders = { 'content-type': `application/x-amz-json-${protocol.version}`, ...protocol.headers };
    this.requestSigner = new JsonRequestSigner(this.credentials, this.region, protocol.service);
  }

  protected override async signedHeaders(request: AwsHttpRequest): Promise<Record<string, string>> {
    return (await this.requestSigner.sign(request)) ?? super.signedHeaders(request);
  }

  observeCalls(observer: JsonCallObserver): void {
    this.callObservers.push(observer);
  }

  /** The error a non-2xx answer becomes. */
  protected abstract failure(failure: JsonFailure): Error;

  /**
   * Sends `input` as `operation`, retried as the SDK's standard mode retries; the parsed answer, or
   * the client's `failure`. `write` turns the input into the body (members in the order the SDK
   * writes them, where a test compares the two clients' signatures). `endpoint`: another origin for
   * this request only (the SDK sends SQS requests to the queue URL's host).
   */
  protected async callJson(
    operation: string,
    input: Record<string, unknown>,
    write: (input: Record<string, unknown>) => string = JSON.stringify,
    endpoint: URL = this.endpoint,
  ): Promise<Record<string, unknown>> {
    let sent = input;
    for (const observer of this.callObservers) sent = observer.beforeCall?.(operation, sent) ?? sent;
    const body = Buffer.from(write(sent), 'utf8');
    const port = endpoint.port ? Number(endpoint.port) : undefined;
    const request: AwsHttpRequest = {
      method: 'POST',
      protocol: endpoint.protocol === 'http:' ? 'http:' : 'https:',
      hostname: endpoint.hostname,
      ...(port === undefined ? {} : { port }),
      path: endpoint.pathname || '/',
      query: {},
      headers: {
        ...this.fixedHeaders,
        host: port === undefined ? endpoint.hostname : `${endpoint.hostname}:${port}`,
        'x-amz-target': `${this.protocol.targetPrefix}.${operation}`,
        'content-length': String(body.length),
      },
      body,
    };
    const output = await this.traced(operation, () => this.sendWithRetries(operation, request));
    for (const observer of this.callObservers) observer.afterCall?.(operation, sent, output);
    return output;
  }

  /** The answer's JSON; a subclass reads it as its service writes it (DynamoDB's binary attributes, say). */
  protected parseAnswer(body: Buffer): Record<string, unknown> {
    return parsedJson(body);
  }

  private async sendWithRetries(operation: string, request: AwsHttpRequest): Promise<Record<string, unknown>> {
    // An error answer is parsed once for its code, whether it is retried or not.
    const errorAnswers = new WeakMap<AwsHttpResponse, Record<string, unknown>>();
    const codeOf = (response: AwsHttpResponse) => {
      const answer = parsedJson(response.body);
      errorAnswers.set(response, answer);
      return errorCode(response, answer, this.protocol.serverErrorCode);
    };
    const response = await sendWithStandardRetries(operation, request, this.sending, (answer) =>
      standardRetry(answer.statusCode, codeOf(answer), this.protocol.retryCeilings),
    );
    if (response.statusCode >= 200 && response.statusCode < 300) return this.parseAnswer(response.body);
    const answer = errorAnswers.get(response) ?? parsedJson(response.body);
    throw this.failure({
      operation,
      code: errorCode(response, answer, this.protocol.serverErrorCode),
      statusCode: response.statusCode,
      headers: response.headers,
      answer,
    });
  }
}

function parsedJson(body: Buffer): Record<string, unknown> {
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
function errorCode(response: AwsHttpResponse, answer: Record<string, unknown>, serverErrorCode: string): string {
  const raw = response.headers['x-amzn-errortype'] ?? text(answer['code']) ?? text(answer['__type']);
  const code = raw?.split(':')[0]?.split('#').at(-1);
  if (code) return code;
  return response.statusCode >= 500 ? serverErrorCode : `HTTP${response.statusCode}`;
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
