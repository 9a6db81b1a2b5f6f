/**
 * A Lambda container's dependencies: the configuration from `process.env`, read once, the
 * container's SDK clients (endpoints from the standard AWS variables, captured by the X-Ray
 * Tracer), and only the adapters the handler lists. A handler's bundle holds what its list
 * reaches and nothing more (issue 15, item 4); the list is typed (`Composed`), so a list that
 * lacks what the handler's app reads does not compile (test/unit/composition/handler-lists.type-test.ts).
 */
import { clientAdmission } from '../app/client-throttling.js';
import { createLogger } from '../app/logger.js';
import type { AwsClients } from '../aws/clients.js';
import { countThrottledRequests } from '../aws/aws-request-observer.js';
import { tracedClients } from '../aws/tracing.js';
import { loadConfig } from '../config.js';
import { systemClock } from '../core/ports/clock.js';
import type { Log } from '../core/ports/log.js';
import { metrics } from './adapters.js';
import { dynamodbClient, s3Client, sqsClient } from './client-kinds.js';
import {
  composeDependencies,
  createComposition,
  type Builders,
  type ClientKind,
  type ClientName,
  type ClientTypes,
  type Composed,
  type Composition,
  type LazyMember,
} from './composition.js';

const made = new Map<ClientName, unknown>();

/** This container's client of that kind, made on first use; the same one for every handler in the process. */
function containerClient<N extends ClientName>(kind: ClientKind<N>): ClientTypes[N] {
  if (!made.has(kind.name)) made.set(kind.name, kind.create());
  return made.get(kind.name) as ClientTypes[N];
}

/**
 * The SDK clients this container's dependencies send with, each made on first use; tests that
 * watch or fault what the Lambda handlers send add their middleware here.
 */
export function containerClients(): AwsClients {
  return {
    get dynamodb() {
      return containerClient(dynamodbClient);
    },
    get sqs() {
      return containerClient(sqsClient);
    },
    get s3() {
      return containerClient(s3Client);
    },
  };
}

let container: Composition | undefined;

/**
 * What every function of this container is built from, made on the first invocation (not at
 * import: a cold start does no I/O and reads no settings it does not use). The one place the
 * functions read `process.env`.
 */
function containerComposition(): Composition {
  if (container === undefined) {
    const config = loadConfig(process.env);
    const log = createLogger(config.logLevel);
    // Each client is captured when first made; without the Powertools layer that is said once per container, not once per client.
    let toldUntraced = false;
    const tracingLog: Log = {
      info: (message, fields) => {
        if (toldUntraced) return;
        toldUntraced = true;
        log.info(message, fields);
      },
      warn: (message, fields) => log.warn(message, fields),
      error: (message, fields) => log.error(message, fields),
    };
    container = createComposition({
      config,
      log,
      admission: clientAdmission(config, log),
      clock: systemClock,
      options: { sessionToken: () => process.env['AWS_SESSION_TOKEN'] },
      clients: containerClient,
      prepareClient: (client, composition) =>
        tracedClients(
          { client: countThrottledRequests(client, () => composition.once(metrics, () => metrics(composition))) },
          tracingLog,
        ).client,
    });
  }
  return container;
}

/**
 * `lambdaDependencies({ subscriptionMatcher, … })`: the dependencies a handler runs on, built on
 * first use. Every member is built once per container, whichever handlers of the process ask.
 */
export function lambdaDependencies<K extends LazyMember>(builders: Pick<Builders, K>): () => Composed<K> {
  let dependencies: Composed<K> | undefined;
  return () => (dependencies ??= composeDependencies(containerComposition(), builders));
}
