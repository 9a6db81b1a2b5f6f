/**
 * The laptop host's composition root: every adapter (./adapters.ts) on the host's own
 * configuration record and SDK clients pointed at its emulators (local/host.ts), built on first
 * use and kept, so a set of dependencies lives as long as its host. Two hosts, two sets: nothing
 * here is module-level.
 *
 * Lambda functions do not come here: each handler composes only the adapters its app reads
 * (./lambda-dependencies.ts), so its bundle carries nothing else (issue 15, item 4).
 */
import { clientAdmission } from '../app/client-throttling.js';
import type { KoerierDependencies } from '../app/dependencies.js';
import { createLogger, type Logger } from '../app/logger.js';
import { countThrottledRequests } from '../aws/aws-request-observer.js';
import { createAwsClients, createKmsClient, createSesV2Client, type AwsClients } from '../aws/clients.js';
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { KoerierConfig } from '../config.js';
import { systemClock, type Clock } from '../core/ports/clock.js';
import * as adapters from './adapters.js';
import { dataContracts } from './data-contracts-adapter.js';
import * as deliveryBuilders from './delivery-builders.js';
import * as erasureBuilders from './erasure-builders.js';
import * as alertBuilders from './alert-builders.js';
import {
  composeDependencies,
  createComposition,
  type Builders,
  type ClientTypes,
  type CompositionOptions,
} from './composition.js';

export type { AwsClients } from '../aws/clients.js';
export { containerClients } from './lambda-dependencies.js';

export interface AwsDependenciesOptions extends CompositionOptions {
  readonly config: KoerierConfig;
  /** Default: clients of its own, built on first use (functions/aws/clients.ts). */
  readonly clients?: () => AwsClients;
  /** Only asked for when a key is a KMS key. Default: a client of its own, built on first use. */
  readonly kms?: () => KMSClient;
  /** Default: a logger at `config.logLevel`. */
  readonly log?: Logger;
  /** Default: the system's (`Date.now`). */
  readonly clock?: Clock;
}

/** Every builder: the type makes the set complete. */
const everyAdapter: Builders = {
  ...adapters,
  ...deliveryBuilders,
  ...erasureBuilders,
  ...alertBuilders,
  dataContracts,
};

export function buildAwsDependencies(options: AwsDependenciesOptions): KoerierDependencies {
  const { config } = options;
  const log = options.log ?? createLogger(config.logLevel);
  let clientSet: AwsClients | undefined;
  let kms: KMSClient | undefined;
  let sesv2: SESv2Client | undefined;
  const clients: ClientTypes = {
    get dynamodb() {
      return (clientSet ??= (options.clients ?? createAwsClients)()).dynamodb;
    },
    get sqs() {
      return (clientSet ??= (options.clients ?? createAwsClients)()).sqs;
    },
    get s3() {
      return (clientSet ??= (options.clients ?? createAwsClients)()).s3;
    },
    get kms() {
      return (kms ??= (options.kms ?? createKmsClient)());
    },
    // The laptop writes alert e-mail to files; made only if a host names an SES sender and no folder.
    get sesv2() {
      return (sesv2 ??= createSesV2Client());
    },
  };
  const composition = createComposition({
    config,
    log,
    admission: clientAdmission(config, log),
    clock: options.clock ?? systemClock,
    options,
    clients: (kind) => clients[kind.name],
    prepareClient: (client, composition) =>
      countThrottledRequests(client, () => composition.once(adapters.metrics, () => adapters.metrics(composition))),
  });
  return composeDependencies(composition, everyAdapter);
}
