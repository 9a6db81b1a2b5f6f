/**
 * SDK middleware that tells observers what an AWS SDK v3 client sends: each call once (its input,
 * which an observer may amend, and its output), and each HTTP attempt, retries included, which is
 * what AWS bills and what a throttled service answers. The throttling metric
 * (functions/composition/) and the benchmarks' request counts (bench/support/aws-usage.ts) read the
 * attempts; the permissions test (test/infra/function-permissions.test.ts) reads the calls of every
 * function to hold its IAM grants to what it does.
 */
import { isThrottlingError } from '@smithy/service-error-classification';
import type {
  DeserializeMiddleware,
  HandlerExecutionContext,
  InitializeMiddleware,
  MiddlewareStack,
} from '@smithy/types';
import type { Metrics } from '../core/ports/metrics.js';

/** One HTTP request an SDK client sent, or tried to send. */
export interface AwsAttempt {
  /** The SDK's service id: `DynamoDB`, `SQS`, `S3`, `KMS`. */
  readonly service: string;
  /** The operation, without the SDK's `Command` suffix: `PutItem`. */
  readonly operation: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly requestBytes: number;
  /** Absent when no answer came (a broken connection). */
  readonly statusCode?: number;
  /** The answer's Content-Length, where it named one. */
  readonly responseBytes?: number;
  /** The service refused it as throttling (429, or a throttling error code): the SDK backs off and may retry. */
  readonly throttled: boolean;
}

export interface AwsCallObserver {
  /** Before the call is serialised; what it returns is sent in place of `input`. */
  beforeCall?(operation: string, input: Record<string, unknown>): Record<string, unknown> | void;
  /** After the call succeeded, retries included. */
  afterCall?(operation: string, input: Record<string, unknown>, output: Record<string, unknown>): void;
}

/** Any SDK v3 client: the two members the middleware needs. */
export interface ObservableClient {
  // The stack's input and output types differ per client; the middleware reads only what every client has.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly middlewareStack: MiddlewareStack<any, any>;
  readonly config: { readonly serviceId: string };
}

/** Each observer's middleware needs a name of its own: the stack refuses a second under the same name. */
let observerCount = 0;

function operationOf(context: HandlerExecutionContext): string {
  return String(context['commandName'] ?? 'Unknown').replace(/Command$/, '');
}

function byteLength(body: unknown, headers: Record<string, string | undefined>): number {
  if (typeof body === 'string') return Buffer.byteLength(body, 'utf8');
  if (ArrayBuffer.isView(body)) return body.byteLength;
  return Number(headers['content-length'] ?? headers['Content-Length'] ?? 0);
}

/** Tells `observer` of every HTTP attempt `client` makes, retries included, after its answer (or failure) is read. */
export function observeAttempts(client: ObservableClient, observer: (attempt: AwsAttempt) => void): void {
  const service = client.config.serviceId;
  const middleware: DeserializeMiddleware<object, object> = (next, context) => async (args) => {
    const request = args.request as { body?: unknown; headers?: Record<string, string> };
    const base = {
      service,
      operation: operationOf(context),
      input: args.input as Record<string, unknown>,
      requestBytes: byteLength(request.body, request.headers ?? {}),
    };
    try {
      const result = await next(args);
      const response = result.response as { statusCode?: number; headers?: Record<string, string> };
      const length = response.headers?.['content-length'];
      observer({
        ...base,
        ...(response.statusCode === undefined ? {} : { statusCode: response.statusCode }),
        ...(length === undefined ? {} : { responseBytes: Number(length) }),
        throttled: false,
      });
      return result;
    } catch (error) {
      const statusCode = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      observer({
        ...base,
        ...(statusCode === undefined ? {} : { statusCode }),
        throttled: isThrottlingError(error as never),
      });
      throw error;
    }
  };
  // The deserialize step runs inside the retry loop (the finalize step), once per attempt; at high
  // priority it wraps the deserializer, so a failed answer arrives as the SDK's named error.
  client.middlewareStack.add(middleware, {
    step: 'deserialize',
    priority: 'high',
    name: `koerierObserveAttempts${observerCount++}`,
  });
}

/** Tells `observer` of every call `client` makes, once, before it is serialised and after it succeeded. */
export function observeCalls(client: ObservableClient, observer: AwsCallObserver): void {
  const name = `koerierObserveCalls${observerCount++}`;
  const middleware: InitializeMiddleware<object, object> = (next, context) => async (args) => {
    const operation = operationOf(context);
    const input = (observer.beforeCall?.(operation, args.input as Record<string, unknown>) ?? args.input) as Record<
      string,
      unknown
    >;
    const result = await next({ ...args, input });
    observer.afterCall?.(operation, input, result.output as Record<string, unknown>);
    return result;
  };
  client.middlewareStack.add(middleware, { step: 'initialize', name });
}

/**
 * Counts each attempt of `client` that its service refused as throttling in `metrics` (asked for
 * at the first one, so a function that is never throttled builds nothing): the SDK's standard
 * retry mode backs off and tries again, so throttling shows first as latency, and only this count
 * says why (issue 27).
 */
export function countThrottledRequests<T extends ObservableClient>(client: T, metrics: () => Metrics): T {
  observeAttempts(client, ({ throttled, service, operation }) => {
    if (throttled) metrics().awsRequestThrottled(service, operation);
  });
  return client;
}
