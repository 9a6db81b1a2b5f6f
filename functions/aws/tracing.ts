/**
 * X-Ray subsegments for every AWS call (issue 13, item 4), with Powertools for AWS Lambda's Tracer.
 * Lambda's active tracing (the stack turns it on for every function) already traces each
 * invocation; the Tracer adds one subsegment per DynamoDB, SQS, S3 and KMS request through the SDK
 * client's middleware stack (`captureAWSv3Client`).
 *
 * Not bundled: the Tracer and the X-Ray SDK under it are about 127 KB minified, on every cold
 * start. They are loaded with `require` at the first use, which esbuild leaves alone, from the
 * Powertools Lambda layer the stack adds with `koerier:powertoolsLayerArn` (Lambda puts
 * /opt/nodejs/node_modules on NODE_PATH). Without the layer the require fails once, is logged
 * once, and the clients stay as they are: the function segments of active tracing remain.
 */
import { createRequire } from 'node:module';
import type { Log } from '../core/ports/log.js';

/** The one name the loader asks for; kept out of a static import so esbuild does not bundle it. */
const TRACER_PACKAGE = '@aws-lambda-powertools/tracer';

interface TracerLike {
  captureAWSv3Client<T>(client: T): T;
}

type TracerModule = {
  readonly Tracer: new (options: { serviceName: string; captureHTTPsRequests: boolean }) => TracerLike;
};

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
    log.info(
      'SDK calls not traced: the Powertools Tracer is not available (add the Powertools layer, koerier:powertoolsLayerArn)',
      {
        error: error instanceof Error ? error.message : String(error),
      },
    );
    return clients;
  }
  for (const client of Object.values(clients)) tracer.captureAWSv3Client(client);
  return clients;
}
