/**
 * One builder per member of `KoerierDependencies` (./composition.ts): the adapter it is in AWS and
 * on the laptop (the same code; the laptop's clients point at its emulators). Each is a separate
 * export so that a function's bundle holds only the adapters its handler lists; a builder another
 * builder reuses keeps its value in the composition (`composition.once(itself, …)`), so both read
 * the same instance. The data contracts' builder, which brings Ajv, is in ./data-contracts-adapter.ts:
 * its module runs code when loaded, which keeps it (and Ajv) in any bundle that imports it.
 */
import { readFileSync } from 'node:fs';
import { authenticator, tokenVerification } from '../app/authentication.js';
import { clientCertificateSource } from '../aws/client-certificate.js';
import { DynamoDbZgwStore } from '../aws/dynamodb-zgw-store.js';
import { credentialCipherFor } from '../aws/credential-cipher.js';
import { deliveryMetricsRecord } from '../aws/delivery-metrics.js';
import { DynamoDbContractStore } from '../aws/dynamodb-contract-store.js';
import { DynamoDbDeliveryState } from '../aws/dynamodb-delivery-state.js';
import { DynamoDbIdempotencyStore } from '../aws/dynamodb-idempotency-store.js';
import { DynamoDbPartnerStore } from '../aws/dynamodb-partner-store.js';
import { DynamoDbPayloadLedger } from '../aws/dynamodb-payload-ledger.js';
import { DynamoDbPollLeases } from '../aws/dynamodb-poll-leases.js';
import { DynamoDbHoldLedger, DynamoDbUsageWindow } from '../aws/dynamodb-quota-ledgers.js';
import { DynamoDbRateWindow } from '../aws/dynamodb-rate-window.js';
import { DynamoDbRejectionMarks } from '../aws/dynamodb-rejection-marks.js';
import { DynamoDbGivenUpLocks } from '../aws/dynamodb-given-up-locks.js';
import { DynamoDbReplayStore } from '../aws/dynamodb-replay-store.js';
import { DynamoDbRouteIndex } from '../aws/dynamodb-route-index.js';
import { DynamoDbRoutedEventLedger } from '../aws/dynamodb-routed-event-ledger.js';
import { DynamoDbRoutedEventRecords } from '../aws/dynamodb-routed-event-records.js';
import { DynamoDbEventDeliveries } from '../aws/dynamodb-event-deliveries.js';
import { DynamoDbSubscriptionStore } from '../aws/dynamodb-subscription-store.js';
import { InboundQueueOperationalEvents } from '../aws/inbound-queue-operational-events.js';
import { lockTokenKeySource } from '../aws/lock-token-key.js';
import { EmfMetrics } from '../aws/emf-metrics.js';
import { S3ClaimCheckStore } from '../aws/s3-claim-check-store.js';
import { S3ContractDocuments } from '../aws/s3-contract-documents.js';
import { S3EventArchive } from '../aws/s3-event-archive.js';
import { signingKeysFor } from '../aws/signing-keys.js';
import { moveDeadLetterQueueBack, postponeMessages } from '../aws/sqs-delivery-queue.js';
import { SqsMessageQueue } from '../aws/sqs-message-queue.js';
import { SqsPullQueues } from '../aws/sqs-pull-queues.js';
import { SqsReplayQueue } from '../aws/sqs-replay-queue.js';
import { queueOutbox } from '../core/delivery-message/outbox.js';
import { orderedOutbox } from '../core/delivery-message/ordered-outbox.js';
import { DynamoDbOrderedLanesWithRuns } from '../aws/dynamodb-lane-runs.js';
import { DynamoDbLaneSweepIndex } from '../aws/dynamodb-lane-sweep-index.js';
import { contractDeprecatedNotices, tell } from '../core/operations/operational-events.js';
import { PartnerDirectory } from '../core/partners/partner-directory.js';
import { SubscriptionMatcher } from '../core/routing/matcher.js';
import { cachedSubscriptions } from '../core/subscriptions/subscription-cache.js';
import { cachedOrderingKeyRequirements } from '../core/ingest/ordering-key-requirements.js';
import { noMetrics } from '../core/ports/metrics.js';
import { createSafeHttpClient, type SafeHttpClientOptions } from '../net/safe-http-client.js';
import { alertWebhookPost } from '../net/alert-webhook.js';
import { dynamodbClient, kmsClient, s3Client, sqsClient } from './client-kinds.js';
import type { Composition, Member } from './composition.js';

const table = (c: Composition, name: Parameters<Composition['config']['resources']['table']>[0]) =>
  c.config.resources.table(name);
/** The KMS client, asked for only when a key is a KMS key; and the laptop's key files instead, where configured. */
const keyOptions = (c: Composition) => ({
  kms: () => c.client(kmsClient),
  ...(c.config.localKeysDir ? { localKeysDir: c.config.localKeysDir } : {}),
});

export const authenticate: Member<'authenticate'> = (c) => authenticator(tokenVerification(c.config.auth), c.admission);

export const idempotency: Member<'idempotency'> = (c) =>
  new DynamoDbIdempotencyStore(c.client(dynamodbClient), table(c, 'idempotency'));

export const publishRateWindow: Member<'publishRateWindow'> = (c) =>
  new DynamoDbRateWindow(c.client(dynamodbClient), table(c, 'idempotency'), {
    onRefused: (client, until) => c.admission.rememberPublishRefusal(client, until),
  });

export const inboundQueue = (c: Composition): SqsMessageQueue =>
  c.once(inboundQueue, () => new SqsMessageQueue(c.client(sqsClient), c.config.resources.queueUrl('inbound')));

export const operationalEvents = (c: Composition): InboundQueueOperationalEvents =>
  c.once(operationalEvents, () => new InboundQueueOperationalEvents(inboundQueue(c), c.config.operationsSource));

export const deliveryQueue: Member<'deliveryQueue'> = (c) =>
  c.once(deliveryQueue, () => {
    const { resources } = c.config;
    const sqs = c.client(sqsClient);
    const queue = new SqsMessageQueue(sqs, resources.queueUrl('deliveries'));
    return {
      send: (bodies, delaySeconds) =>
        queue.send(bodies.map((body) => (delaySeconds === undefined ? { body } : { body, delaySeconds }))),
      postpone: (postponements) => postponeMessages(sqs, resources.queueUrl('deliveries'), postponements),
      redriveDeadLetterQueue: (limit) =>
        moveDeadLetterQueueBack(
          sqs,
          resources.deadLetterQueueUrl('deliveries'),
          resources.queueUrl('deliveries'),
          limit,
        ),
    };
  });

export const routeIndex = (c: Composition): DynamoDbRouteIndex =>
  c.once(routeIndex, () => new DynamoDbRouteIndex(c.client(dynamodbClient), table(c, 'routes')));

export const subscriptions = (c: Composition): DynamoDbSubscriptionStore =>
  c.once(
    subscriptions,
    () => new DynamoDbSubscriptionStore(c.client(dynamodbClient), table(c, 'subscriptions'), routeIndex(c), c.clock),
  );

// Owner and delivery never change, so a cached record answers every receive and settle but the first;
// a deleted subscription shows up as its missing queue (PullQueueGone), and the pull app reads through then.
// A PATCH of `maxdeliverycount` or `maxinlinebytes` made elsewhere takes effect within this.
const PULL_SUBSCRIPTION_CACHE_MS = 10_000;

export const pullSubscriptions: Member<'pullSubscriptions'> = (c) =>
  cachedSubscriptions(subscriptions(c), PULL_SUBSCRIPTION_CACHE_MS, c.clock);

// Issue 33, ORD-1: the ingest reads which ordered subscriptions refuse events without their key at
// most once per this per container (one Query of the route index); a subscription switched to or from
// `refuse` elsewhere takes effect at the ingest within it (docs/ORDERING.md). The delivery function's
// subscription cache's time (delivery-builders.ts).
const ORDERING_KEY_REQUIREMENTS_CACHE_MS = 5_000;

export const orderingKeyRequirements: Member<'orderingKeyRequirements'> = (c) =>
  cachedOrderingKeyRequirements(routeIndex(c), ORDERING_KEY_REQUIREMENTS_CACHE_MS, c.clock);

// Lives as long as the composition: its cache is checked against the index generation once per batch.
export const subscriptionMatcher: Member<'subscriptionMatcher'> = (c) => new SubscriptionMatcher(routeIndex(c));

export const partnerStore = (c: Composition): DynamoDbPartnerStore =>
  c.once(partnerStore, () => new DynamoDbPartnerStore(c.client(dynamodbClient), table(c, 'partners')));

export const partners: Member<'partners'> = (c) =>
  new PartnerDirectory({
    store: partnerStore(c),
    seed: { publishGrants: c.config.publishGrants, entitlements: c.config.entitlements },
    refreshMs: c.config.partnersRefreshSeconds * 1000,
    clock: c.clock,
    log: c.log,
  });

export const routedEvents: Member<'routedEvents'> = (c) =>
  new DynamoDbRoutedEventLedger(c.client(dynamodbClient), table(c, 'idempotency'));

export const routedEventRecords: Member<'routedEventRecords'> = (c) =>
  new DynamoDbRoutedEventRecords(c.client(dynamodbClient), table(c, 'idempotency'));

export const eventDeliveries: Member<'eventDeliveries'> = (c) =>
  new DynamoDbEventDeliveries(c.client(dynamodbClient), table(c, 'deliveries'));

export const deliveryState: Member<'deliveryState'> = (c) =>
  new DynamoDbDeliveryState(c.client(dynamodbClient), table(c, 'deliveries'), c.clock);

export const claimCheckStore: Member<'claimCheckStore'> = (c) =>
  new S3ClaimCheckStore(c.client(s3Client), c.config.resources.bucket('payloads'));

export const payloadLedger: Member<'payloadLedger'> = (c) =>
  new DynamoDbPayloadLedger(c.client(dynamodbClient), table(c, 'idempotency'));

export const pullQueues: Member<'pullQueues'> = (c) =>
  c.once(pullQueues, () => new SqsPullQueues(c.client(sqsClient), c.config.resources.pullQueuePrefix()));

/**
 * The one outbox (issue 29, item 3), over the same queue adapters the set's other members read. Each
 * queue is built when it is first sent to: the delivery function's outbox only ever sends a split to
 * the deliveries queue, and it has no grant (nor the name) of the pull queues.
 */
export const outbox: Member<'outbox'> = (c) =>
  // Ordered subscriptions' events go through their lanes (issue 33); the lanes are built on the first such event.
  orderedOutbox(
    queueOutbox({
      get deliveryQueue() {
        return deliveryQueue(c);
      },
      get pullQueues() {
        return pullQueues(c);
      },
    }),
    () => orderedLanes(c),
    { settlingWindowMs: c.config.orderingSettlingMs },
  );

/** The lanes of ordered delivery per key (issue 33), in the deliveries table; one for the composition, which the outbox shares. */
export const orderedLanes: Member<'orderedLanes'> = (c) =>
  c.once(
    orderedLanes,
    () => new DynamoDbOrderedLanesWithRuns(c.client(dynamodbClient), table(c, 'deliveries'), c.clock),
  );

/** The lane sweeper's index on the deliveries table's `laneSweep` index (issue 33). */
export const laneSweepIndex: Member<'laneSweepIndex'> = (c) =>
  new DynamoDbLaneSweepIndex(c.client(dynamodbClient), table(c, 'deliveries'));

export const eventArchive: Member<'eventArchive'> = (c) =>
  new S3EventArchive(c.client(s3Client), c.config.resources.bucket('archive'));

export const replayStore: Member<'replayStore'> = (c) =>
  new DynamoDbReplayStore(c.client(dynamodbClient), table(c, 'deliveries'));

export const replayQueue: Member<'replayQueue'> = (c) =>
  new SqsReplayQueue(c.client(sqsClient), c.config.resources.queueUrl('replays'));

export const rejectionMarks: Member<'rejectionMarks'> = (c) =>
  new DynamoDbRejectionMarks(c.client(dynamodbClient), table(c, 'deliveries'));

export const givenUpLocks: Member<'givenUpLocks'> = (c) =>
  new DynamoDbGivenUpLocks(c.client(dynamodbClient), table(c, 'deliveries'));

export const pollLeases: Member<'pollLeases'> = (c) =>
  new DynamoDbPollLeases(c.client(dynamodbClient), table(c, 'deliveries'));

export const quotaHolds: Member<'quotaHolds'> = (c) =>
  new DynamoDbHoldLedger(c.client(dynamodbClient), table(c, 'idempotency'));

export const uploadUsage: Member<'uploadUsage'> = (c) =>
  new DynamoDbUsageWindow(c.client(dynamodbClient), table(c, 'idempotency'));

export const lockTokenKey: Member<'lockTokenKey'> = (c) =>
  lockTokenKeySource(c.config.resources.key('lockTokens'), {
    ...keyOptions(c),
    dynamodb: () => c.client(dynamodbClient),
    tableName: () => table(c, 'deliveries'),
  });

export const credentialCipher: Member<'credentialCipher'> = (c) =>
  c.once(credentialCipher, () => credentialCipherFor(c.config.resources.key('credentials'), keyOptions(c)));

export const signingKeys: Member<'signingKeys'> = (c) => signingKeysFor(c.config.delivery.signingKeys, keyOptions(c));

export const deliveryHttp: Member<'deliveryHttp'> = (c) =>
  c.once(deliveryHttp, () =>
    outboundHttp(c, {
      connectTimeoutMs: c.config.delivery.connectTimeoutMs,
      responseTimeoutMs: c.config.delivery.responseTimeoutMs,
      maxResponseBytes: c.config.delivery.maxResponseBytes,
    }),
  );

export const handshakeHttp: Member<'handshakeHttp'> = (c) =>
  outboundHttp(c, {
    connectTimeoutMs: c.config.handshake.timeoutSeconds * 1000,
    responseTimeoutMs: c.config.handshake.timeoutSeconds * 1000,
  });

/** Teams/Slack-style alert webhooks (issue 30 item 3; composed with the other alert builders, ./alert-builders.ts). */
export const alertWebhook: Member<'alertWebhook'> = (c) =>
  alertWebhookPost(outboundHttp(c, { connectTimeoutMs: 5_000, responseTimeoutMs: 10_000 }));
export const zgwStore: Member<'zgwStore'> = (c) => new DynamoDbZgwStore(c.client(dynamodbClient), table(c, 'zgw'));

export const contractStore = (c: Composition): DynamoDbContractStore =>
  c.once(contractStore, () => new DynamoDbContractStore(c.client(dynamodbClient), table(c, 'contracts')));

export const contractDocuments = (c: Composition): S3ContractDocuments =>
  c.once(contractDocuments, () => new S3ContractDocuments(c.client(s3Client), c.config.resources.bucket('contracts')));

// Issue 14 item 3: a deprecation is told to every consuming subscription's owner (and operators).
export const contractLifecycle: Member<'contractLifecycle'> = (c) => ({
  contractVersionDeprecated: async (notice) => {
    c.log.info('contract version deprecated', { ...notice, consumers: notice.consumers.length });
    await tell(operationalEvents(c), contractDeprecatedNotices(notice), c.log);
  },
});

export const metrics: Member<'metrics'> = (c) =>
  c.options.metrics ?? (c.config.delivery.emitMetrics ? new EmfMetrics(c.config.stackName) : noMetrics);

export const recordDeliveryMetrics: Member<'recordDeliveryMetrics'> = (c) => {
  const write = c.options.writeMetricRecord ?? ((record: string) => process.stdout.write(record));
  return (figures) => write(deliveryMetricsRecord(figures, c.clock(), c.config.stackName));
};

/** Outbound HTTP with the SSRF guard; the delivery and the handshake clients share one load of the mTLS certificate (issue 12, item 5). */
function outboundHttp(
  c: Composition,
  timeouts: Pick<SafeHttpClientOptions, 'connectTimeoutMs' | 'responseTimeoutMs' | 'maxResponseBytes'>,
) {
  const certificate = clientCertificate(c);
  return createSafeHttpClient({
    allowLoopback: c.config.allowLoopbackSinks,
    allowedPorts: c.config.outboundPorts,
    ...timeouts,
    ...(certificate ? { clientCertificate: certificate } : {}),
    ...(c.config.delivery.outboundCaFile
      ? { extraCaCertificates: [readFileSync(c.config.delivery.outboundCaFile, 'utf8')] }
      : {}),
  });
}

function clientCertificate(c: Composition) {
  return c.once(clientCertificate, () => {
    const reference = c.config.delivery.clientCertificate;
    if (reference === undefined) return undefined;
    const sessionToken = c.options.sessionToken;
    return onceUnlessRejected(clientCertificateSource(reference, sessionToken ? { sessionToken } : {}));
  });
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
