/**
 * X-Ray subsegments for every AWS call (issue 13, item 4), with Powertools for AWS Lambda's Tracer.
 * Lambda's active tracing (the stack turns it on for every function) already traces each
 * invocation; this adds one subsegment per DynamoDB, SQS, S3 and KMS request, from the lean
 * clients' own wrapper (they have no SDK middleware stack). An SDK client handed in instead is
 * captured by the Tracer as before; the functions hand in none since issue 15.
 *
 * Not bundled: the Tracer and the X-Ray SDK under it are about 127 KB minified, a third of a
 * function's 400 KB budget, on every cold start. They are loaded with `require` at the first use,
 * which esbuild leaves alone, from the Powertools Lambda layer the stack adds with
 * `koerier:powertoolsLayerArn` (Lambda puts /opt/nodejs/node_modules on NODE_PATH). Without the
 * layer the require fails once, is logged once, and the clients stay as they are: the function
 * segments of active tracing remain.
 */
import { createRequire } from 'node:module';
import type { Log } from '../core/ports/log.js';
import type { LeanAwsClient } from './lean-client-support.js';

/** The one name the loader asks for; kept out of a static import so esbuild does not bundle it. */
const TRACER_PACKAGE = '@aws-lambda-powertools/tracer';

interface SubsegmentLike {
  addAttribute(name: string, value: unknown): void;
  addError(error: Error): void;
  close(): void;
}

interface TracerLike {
  captureAWSv3Client<T>(client: T): T;
  /** Optional here only so a test's Tracer that captures SDK clients alone need not have it; Powertools' has. */
  getSegment?(): { addNewSubsegment(name: string): SubsegmentLike } | undefined;
}

/**
 * A lean client (./lean-client-support.ts) takes a wrapper per operation, named by its `serviceName`
 * (`DynamoDB`, `SQS`, `S3`, `KMS`). Told apart by shape, not `instanceof`: importing the class would put the signer in
 * bundles that reach no AWS service.
 */
type WrappableClient = Pick<LeanAwsClient, 'serviceName' | 'traceWith'>;

const isWrappable = (client: unknown): client is WrappableClient => typeof (client as Partial<WrappableClient>).traceWith === 'function';
type TracerModule = { readonly Tracer: new (options: { serviceName: string; captureHTTPsRequests: boolean }) => TracerLike };

/** Where the Tracer comes from: the layer (or node_modules) in Lambda; tests pass their own. */
export type TracerLoader = () => TracerModule;

const fromRuntime: TracerLoader = () => createRequire(import.meta.url)(TRACER_PACKAGE) as TracerModule;

/**
 * Captures every client of `clients` with one Tracer, or returns them untouched when the Tracer
 * cannot be loaded (no layer), saying so once in `log`.
 */
export function tracedClients<T extends object>(clients: T, log: Log, load: TracerLoader = fromRuntime): T {
  let tracer: TracerLike;
  try {
    // Outbound HTTP (deliveries) goes through the SSRF-guarded client (functions/net): no global patch of node:http.
    tracer = new (load().Tracer)({ serviceName: 'koerier', captureHTTPsRequests: false });
  } catch (error) {
    log.info('SDK calls not traced: the Powertools Tracer is not available (add the Powertools layer, koerier:powertoolsLayerArn)', {
      error: error instanceof Error ? error.message : String(error),
    });
    return clients;
  }
  for (const client of Object.values(clients)) {
    if (isWrappable(client)) client.traceWith((operation, send) => inSubsegment(tracer, client.serviceName, operation, send));
    else tracer.captureAWSv3Client(client);
  }
  return clients;
}

/** One `aws` subsegment per operation of a lean client, named and annotated as the X-Ray SDK names an SDK call. */
async function inSubsegment<T>(tracer: TracerLike, service: string, operation: string, send: () => Promise<T>): Promise<T> {
  const subsegment = tracer.getSegment?.()?.addNewSubsegment(service);
  if (subsegment === undefined) return send();
  subsegment.addAttribute('namespace', 'aws');
  subsegment.addAttribute('aws', { operation });
  try {
    return await send();
  } catch (error) {
    subsegment.addError(error instanceof Error ? error : new Error(String(error)));
    throw error;
  } finally {
    subsegment.close();
  }
}
