/**
 * The composition root: the one place that turns a `KoerierConfig` into the adapters the apps run
 * on (functions/app/dependencies.ts) — DynamoDB repositories, SQS queues, the KMS or laptop-key
 * cipher, outbound HTTP with the SSRF guard, the token verifier, the per-client throttle and a
 * logger at the configured level. Each adapter is built on first use and then kept, so a set of
 * dependencies lives as long as its container (Lambda) or its host (laptop).
 *
 *   Lambda:  `awsDependencies` — the configuration from `process.env`, read once, and the
 *            container's SDK clients (endpoints from the standard AWS variables);
 *   laptop:  `buildAwsDependencies({ config, clients })` — the host's own configuration record and
 *            SDK clients pointed at its emulators (local/host.ts). Two hosts, two sets.
 *
 * The SDK clients are built here too, never at module level: a set of dependencies built without
 * `clients` makes its own (functions/aws/clients.ts), so two sets never share a client, its
 * middleware or its connections.
 */
import { InboundQueueOperationalEvents } from '../aws/inbound-queue-operational-events.js';
import { readFileSync } from 'node:fs';
import type { KMSClient } from '@aws-sdk/client-kms';
import { authenticator, tokenVerification } from '../app/authentication.js';
import { clientAdmission } from '../app/client-throttling.js';
import type { KoerierDependencies } from '../app/dependencies.js';
import { createLogger, type Logger } from '../app/logger.js';
import { createAwsClients, createKmsClient, type AwsClients } from '../aws/clients.js';
import { clientCertificateSource } from '../aws/client-certificate.js';
import { credentialCipherFor } from '../aws/credential-cipher.js';
import { deliveryMetricsRecord } from '../aws/delivery-metrics.js';
import { PowertoolsMetrics } from '../aws/powertools-metrics.js';
import { noMetrics, type Metrics } from '../core/ports/metrics.js';
import { DynamoDbDeliveryState } from '../aws/dynamodb-delivery-state.js';
import { DynamoDbIdempotencyStore } from '../aws/dynamodb-idempotency-store.js';
import { DynamoDbPartnerStore } from '../aws/dynamodb-partner-store.js';
import { DynamoDbPayloadLedger } from '../aws/dynamodb-payload-ledger.js';
import { PartnerDirectory } from '../core/partners/partner-directory.js';
import { DynamoDbRateWindow } from '../aws/dynamodb-rate-window.js';
import { DynamoDbPollLeases } from '../aws/dynamodb-poll-leases.js';
import { DynamoDbRejectionMarks } from '../aws/dynamodb-rejection-marks.js';
import { lockTokenKeySource } from '../aws/lock-token-key.js';
import { DynamoDbRouteIndex } from '../aws/dynamodb-route-index.js';
import { DynamoDbRoutedEventLedger } from '../aws/dynamodb-routed-event-ledger.js';
import { DynamoDbSubscriptionStore } from '../aws/dynamodb-subscription-store.js';
import { signingKeysFor } from '../aws/signing-keys.js';
import { moveDeadLetterQueueBack, postponeMessages } from '../aws/sqs-delivery-queue.js';
import { SqsMessageQueue } from '../aws/sqs-message-queue.js';
import { S3ClaimCheckStore } from '../aws/s3-claim-check-store.js';
import { S3EventArchive } from '../aws/s3-event-archive.js';
import { DynamoDbReplayStore } from '../aws/dynamodb-replay-store.js';
import { SqsReplayQueue } from '../aws/sqs-replay-queue.js';
import { SqsPullQueues } from '../aws/sqs-pull-queues.js';
import { tracedClients } from '../aws/tracing.js';
import { loadConfig, type KoerierConfig } from '../config.js';
import { createSafeHttpClient, type SafeHttpClientOptions } from '../net/safe-http-client.js';

export type { AwsClients } from '../aws/clients.js';

export interface AwsDependenciesOptions {
  readonly config: KoerierConfig;
  /** Default: clients of its own, built on first use (functions/aws/clients.ts). */
  readonly clients?: () => AwsClients;
  /** Only asked for when the credentials key is a KMS key. Default: a client of its own, built on first use. */
  readonly kms?: () => KMSClient;
  /** Default: a logger at `config.logLevel`. */
  readonly log?: Logger;
  /** The gateway's figures. Default: Powertools EMF records in Lambda (`config.delivery.emitMetrics`), none elsewhere. */
  readonly metrics?: Metrics;
  /** Where the EMF metric records go. Default: standard output, where CloudWatch reads them. */
  readonly writeMetricRecord?: (record: string) => void;
  /** Capture the SDK clients with Powertools Tracer (X-Ray subsegments; functions/aws/tracing.ts). Lambda only. */
  readonly traceClients?: boolean;
  /** The Lambda session token the Parameters and Secrets extension asks for (the mTLS client certificate). */
  readonly sessionToken?: () => string | undefined;
}

export function buildAwsDependencies(options: AwsDependenciesOptions): KoerierDependencies {
  const { config } = options;
  const resources = config.resources;
  const log = options.log ?? createLogger(config.logLevel);
  const clients = once(() => {
    const built = (options.clients ?? createAwsClients)();
    return options.traceClients ? tracedClients(built, log) : built;
  });
  const kms = once(() => {
    const built = (options.kms ?? createKmsClient)();
    return options.traceClients ? tracedClients({ kms: built }, log).kms : built;
  });
  const admission = clientAdmission(config, log);
  const verification = once(() => tokenVerification(config.auth));
  // One load per set of dependencies, shared by the delivery and the handshake clients (issue 12, item 5).
  const clientCertificateReference = config.delivery.clientCertificate;
  const clientCertificate =
    clientCertificateReference === undefined
      ? undefined
      : onceUnlessRejected(clientCertificateSource(clientCertificateReference, { ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}) }));
  const outboundHttp = (timeouts: Pick<SafeHttpClientOptions, 'connectTimeoutMs' | 'responseTimeoutMs' | 'maxResponseBytes'>) =>
    createSafeHttpClient({
      allowLoopback: config.allowLoopbackSinks,
      allowedPorts: config.outboundPorts,
      ...timeouts,
      ...(clientCertificate ? { clientCertificate } : {}),
      ...(config.delivery.outboundCaFile ? { extraCaCertificates: [readFileSync(config.delivery.outboundCaFile, 'utf8')] } : {}),
    });
  const routeIndex = once(() => new DynamoDbRouteIndex(clients().dynamodb, resources.table('routes')));
  const partnerStore = once(() => new DynamoDbPartnerStore(clients().dynamodb, resources.table('partners')));
  const inboundQueue = once(() => new SqsMessageQueue(clients().sqs, resources.queueUrl('inbound')));
  const deliveriesQueue = once(() => new SqsMessageQueue(clients().sqs, resources.queueUrl('deliveries')));

  return lazily<KoerierDependencies>(
    { config, log, admission },
    {
      authenticate: () => authenticator(verification(), admission),
      idempotency: () => new DynamoDbIdempotencyStore(clients().dynamodb, resources.table('idempotency')),
      publishRateWindow: () =>
        new DynamoDbRateWindow(clients().dynamodb, resources.table('idempotency'), {
          onRefused: (client, until) => admission.rememberPublishRefusal(client, until),
        }),
      inboundQueue,
      operationalEvents: () => new InboundQueueOperationalEvents(inboundQueue(), config.operationsSource),
      deliveryQueue: () => ({
        send: (bodies) => deliveriesQueue().send(bodies.map((body) => ({ body }))),
        postpone: (postponements) => postponeMessages(clients().sqs, resources.queueUrl('deliveries'), postponements),
        redriveDeadLetterQueue: (limit) =>
          moveDeadLetterQueueBack(clients().sqs, resources.deadLetterQueueUrl('deliveries'), resources.queueUrl('deliveries'), limit),
      }),
      subscriptions: () => new DynamoDbSubscriptionStore(clients().dynamodb, resources.table('subscriptions'), routeIndex()),
      routeIndex,
      partnerStore,
      partners: () =>
        new PartnerDirectory({
          store: partnerStore(),
          seed: { publishGrants: config.publishGrants, entitlements: config.entitlements },
          refreshMs: config.partnersRefreshSeconds * 1000,
          clock: () => Date.now(),
          log,
        }),
      routedEvents: () => new DynamoDbRoutedEventLedger(clients().dynamodb, resources.table('idempotency')),
      deliveryState: () => new DynamoDbDeliveryState(clients().dynamodb, resources.table('deliveries')),
      claimCheckStore: () => new S3ClaimCheckStore(clients().s3, resources.bucket('payloads')),
      payloadLedger: () => new DynamoDbPayloadLedger(clients().dynamodb, resources.table('idempotency')),
      pullQueues: () => new SqsPullQueues(clients().sqs, resources.pullQueuePrefix()),
      eventArchive: () => new S3EventArchive(clients().s3, resources.bucket('archive')),
      replayStore: () => new DynamoDbReplayStore(clients().dynamodb, resources.table('deliveries')),
      replayQueue: () => new SqsReplayQueue(clients().sqs, resources.queueUrl('replays')),
      rejectionMarks: () => new DynamoDbRejectionMarks(clients().dynamodb, resources.table('deliveries')),
      pollLeases: () => new DynamoDbPollLeases(clients().dynamodb, resources.table('deliveries')),
      lockTokenKey: () =>
        lockTokenKeySource(resources.key('lockTokens'), {
          kms,
          ...(config.localKeysDir ? { localKeysDir: config.localKeysDir } : {}),
          dynamodb: () => clients().dynamodb,
          tableName: () => resources.table('deliveries'),
        }),
      credentialCipher: () => credentialCipherFor(resources.key('credentials'), { kms, ...(config.localKeysDir ? { localKeysDir: config.localKeysDir } : {}) }),
      signingKeys: () => signingKeysFor(config.delivery.signingKeys, { kms, ...(config.localKeysDir ? { localKeysDir: config.localKeysDir } : {}) }),
      deliveryHttp: () =>
        outboundHttp({
          connectTimeoutMs: config.delivery.connectTimeoutMs,
          responseTimeoutMs: config.delivery.responseTimeoutMs,
          maxResponseBytes: config.delivery.maxResponseBytes,
        }),
      handshakeHttp: () =>
        outboundHttp({ connectTimeoutMs: config.handshake.timeoutSeconds * 1000, responseTimeoutMs: config.handshake.timeoutSeconds * 1000 }),
      metrics: () => options.metrics ?? (config.delivery.emitMetrics ? new PowertoolsMetrics(config.stackName) : noMetrics),
      recordDeliveryMetrics: () => {
        const write = options.writeMetricRecord ?? ((record: string) => process.stdout.write(record));
        return (figures) => write(deliveryMetricsRecord(figures, Date.now(), config.stackName));
      },
    },
  );
}

let container: KoerierDependencies | undefined;
let containerAwsClients: AwsClients | undefined;

/**
 * This Lambda container's dependencies, built on the first invocation (not at import, so a cold
 * start only pays for what the invoked function reaches). The one place the functions read
 * `process.env`.
 */
export function awsDependencies(): KoerierDependencies {
  container ??= buildAwsDependencies({
    config: loadConfig(process.env),
    clients: containerClients,
    traceClients: true,
    sessionToken: () => process.env['AWS_SESSION_TOKEN'],
  });
  return container;
}

/**
 * The SDK clients this container's dependencies send with, built on first use; tests that watch
 * or fault what the Lambda handlers send add their middleware here.
 */
export function containerClients(): AwsClients {
  containerAwsClients ??= createAwsClients();
  return containerAwsClients;
}

function once<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => (built ??= { value: build() }).value;
}

/** The promise of the first call, kept unless it fails: a secret store that was down is asked again. */
function onceUnlessRejected<T>(load: () => Promise<T>): () => Promise<T> {
  let kept: Promise<T> | undefined;
  return () => {
    kept ??= load();
    kept.catch(() => (kept = undefined));
    return kept;
  };
}

/** An object whose `lazy` members are built on first read and kept. */
function lazily<T extends object>(eager: Partial<T>, lazy: { [K in keyof T]?: () => T[K] }): T {
  const target = { ...eager } as T;
  for (const [name, build] of Object.entries(lazy) as [string, () => unknown][]) {
    const get = once(build);
    Object.defineProperty(target, name, { get, enumerable: true });
  }
  return target;
}
