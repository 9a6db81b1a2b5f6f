/**
 * The one description of Koerier's resources: tables, queues, buckets, keys, functions with
 * their triggers, routes and grants. The CDK constructs (lib/) and the laptop host (local/) both
 * read it, so what runs on a laptop cannot drift from what is deployed.
 *
 * Plain data only: no aws-cdk-lib import here, the laptop host loads this file too.
 */

import { API_BASE_PATH } from '../core/http/api-version.js';

export { API_BASE_PATH };

export type AttributeType = 'S' | 'N';

export interface KeySpec {
  readonly name: string;
  readonly type: AttributeType;
}

export interface TableSpec {
  readonly partitionKey: KeySpec;
  readonly sortKey?: KeySpec;
  /** Attribute holding an epoch-seconds expiry. DynamoDB TTL in AWS; code treats expired items as absent. */
  readonly ttlAttribute?: string;
  readonly globalIndexes?: readonly {
    readonly name: string;
    readonly partitionKey: KeySpec;
    readonly sortKey?: KeySpec;
  }[];
}

export interface QueueSpec {
  readonly visibilityTimeoutSeconds: number;
  readonly retentionSeconds: number;
  /** Messages received this many times without being deleted move to `<name>-dlq`. */
  readonly maxReceiveCount: number;
}

export interface RouteSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
  /** API Gateway HTTP API path, `{name}` for a path parameter. */
  readonly path: string;
}

export interface FunctionSpec {
  /** Path of the handler module, relative to the repository root. Its export is `handler`. */
  readonly entry: string;
  readonly memoryMb: number;
  readonly timeoutSeconds: number;
  readonly routes?: readonly RouteSpec[];
  /** Receives every request no route matches (API Gateway's `$default`), to answer 404/405 as problems. */
  readonly defaultRoute?: boolean;
  readonly queueTrigger?: {
    readonly queue: QueueName;
    readonly batchSize: number;
    readonly maxBatchingWindowSeconds: number;
  };
  /**
   * Calls partners over the internet (deliveries, token fetches, the validation handshake): with
   * `koerier:fixedEgressAddresses` it runs in the VPC whose NAT gateways give those requests fixed
   * public addresses (lib/constructs/fixed-egress.ts). The laptop host ignores it.
   */
  readonly outbound?: boolean;
  /** What the function may touch; each grant also puts the resource's name in its environment. */
  readonly tables?: Partial<Record<TableName, 'read' | 'readwrite'>>;
  readonly queues?: Partial<Record<QueueName, 'send' | 'consume' | 'send+consume'>>;
  readonly deadLetterQueues?: Partial<Record<QueueName, 'consume'>>;
  /** `list+read`: read objects and list the bucket (the replay worker reads the archive by prefix). */
  readonly buckets?: Partial<Record<BucketName, 'read' | 'list+read' | 'readwrite'>>;
  readonly keys?: Partial<Record<KeyName, 'encrypt' | 'decrypt' | 'encrypt+decrypt'>>;
  /**
   * Trust on the wire (issue 12; lib/trust-config.ts): `sign` with the current signing key
   * (kms:Sign), read every signing key's `public-keys` (kms:GetPublicKey), present the mTLS
   * `client-certificate` (the secret, through the Parameters and Secrets extension).
   */
  readonly trust?: readonly ('sign' | 'public-keys' | 'client-certificate')[];
  /**
   * The pull subscriptions' queues, `<prefix>-pull-*` (docs/PULL.md), made at run time: `manage`
   * creates, changes and deletes them, `send` writes to them, `consume` receives and settles.
   */
  readonly pullQueues?: readonly PullQueueAccess[];
}

export type PullQueueAccess = 'manage' | 'send' | 'consume';

export const tables = {
  /** Idempotency keys per client and operation (EDU-IDEM), and the router's source+id duplicates. */
  idempotency: { partitionKey: { name: 'pk', type: 'S' }, ttlAttribute: 'expiresAt' },
  /** Subscriptions, one item each, with an owner index for listing. */
  subscriptions: {
    partitionKey: { name: 'id', type: 'S' },
    globalIndexes: [
      { name: 'byOwner', partitionKey: { name: 'owner', type: 'S' }, sortKey: { name: 'createdAt', type: 'S' } },
    ],
  },
  /** Routing index: one item per (match key, subscription), so the router reads only candidates. */
  routes: { partitionKey: { name: 'routeKey', type: 'S' }, sortKey: { name: 'subscriptionId', type: 'S' } },
  /** Delivery state: attempt history, dead letters, target health (rate, circuit breaker). */
  deliveries: {
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    ttlAttribute: 'expiresAt',
  },
  /**
   * The partner directory (issue 12, item 3): clients with their publish grants and entitlements,
   * one document read whole (functions/aws/dynamodb-partner-store.ts).
   */
  partners: { partitionKey: { name: 'pk', type: 'S' } },
  /**
   * The contract register (issue 14): contracts, their versions' metadata and the event type
   * bindings, one JSON record per item (functions/aws/dynamodb-contract-store.ts).
   */
  contracts: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } },
} as const satisfies Record<string, TableSpec>;

const FOURTEEN_DAYS = 14 * 24 * 3600;

export const queues = {
  /** Accepted events, written before the 202 goes out. */
  inbound: { visibilityTimeoutSeconds: 60, retentionSeconds: FOURTEEN_DAYS, maxReceiveCount: 5 },
  /** One message per (event, subscription); retries move its visibility forward. */
  /**
   * One message per (event or batch, subscription). A retry's backoff is its message's visibility
   * timeout, and rate or circuit-breaker waits put it back too, so one delivery is received many
   * times: up to 1000 (SQS's maximum) before the redrive policy takes it. The delivery function
   * dead-letters a delivery itself on its last receive, so only what crashes the function reaches
   * the DLQ. Visibility: six times the delivery function's timeout, as AWS advises for SQS triggers.
   */
  deliveries: { visibilityTimeoutSeconds: 180, retentionSeconds: FOURTEEN_DAYS, maxReceiveCount: 1000 },
  /**
   * One message per running replay: its next chunk (docs/REPLAY.md). A chunk that fails comes
   * back; on its fifth receive the worker ends the replay as failed rather than throw, so the
   * dead-letter queue only catches what crashes the function. Visibility: six times its timeout.
   */
  replays: { visibilityTimeoutSeconds: 360, retentionSeconds: FOURTEEN_DAYS, maxReceiveCount: 5 },
} as const satisfies Record<string, QueueSpec>;

export interface BucketSpec {
  /** Objects expire this long after they are written (S3 lifecycle rule; the fetch answers 410 after it). Kept for good without it. */
  readonly objectRetentionSeconds?: number;
}

const DAY_SECONDS = 24 * 3600;
/** `koerier:archiveRetentionDays` when it is not set (functions/config.ts reads the setting with it). */
export const DEFAULT_ARCHIVE_RETENTION_DAYS = 30;
/** What a live event's claim-check object needs: a day longer than any queue keeps a message (SQS's maximum, 14 days). */
export const CLAIM_CHECK_LIVE_SECONDS =
  Math.max(...Object.values(queues).map((queue) => queue.retentionSeconds)) + DAY_SECONDS;

/**
 * How long claim-check objects are kept, from the archive's retention: a replay may send again
 * an event as old as the archive keeps, with its `dataref`, and its deliveries need the data for as
 * long as a live event's do (NL GOV §3.4.7: data behind a `dataref` stays available long enough;
 * issue 36, item 8). The bucket's lifecycle rule (lib/koerier-stack.ts) and each object's
 * `objectExpiresAt` in the payload ledger (functions/app) are both computed here from the same
 * setting, so the two cannot drift apart; the ledger record outlives its object by its own margin.
 */
export function claimCheckRetentionSeconds(archiveRetentionDays: number): number {
  return archiveRetentionDays * DAY_SECONDS + CLAIM_CHECK_LIVE_SECONDS;
}

export const buckets = {
  /**
   * Claim check: event data too large for a message, referenced by `dataref`. Kept while a queued
   * message or a replay can still refer to it (`claimCheckRetentionSeconds`; the stack sets the
   * lifecycle rule from `koerier:archiveRetentionDays`, this is its default); nothing is deleted on
   * acknowledge, since other subscribers may still need it.
   */
  payloads: { objectRetentionSeconds: claimCheckRetentionSeconds(DEFAULT_ARCHIVE_RETENTION_DAYS) },
  /**
   * The event archive (docs/REPLAY.md): every routed event, one gzip JSON Lines object per router
   * batch, under `archive/YYYY/MM/DD/HH/`. Retention: `koerier:archiveRetentionDays` (the stack
   * sets the lifecycle rule from it; this is its default), and replays skip older events themselves.
   */
  archive: { objectRetentionSeconds: DEFAULT_ARCHIVE_RETENTION_DAYS * DAY_SECONDS },
  /** The contract register's documents and their message schemas (issue 14): immutable, kept for good. */
  contracts: {},
} as const satisfies Record<string, BucketSpec>;

export const keys = {
  /** Encrypts subscriber credentials at rest. */
  credentials: {},
  /** Wraps the key that seals pull lock tokens (functions/aws/lock-token-key.ts). */
  lockTokens: {},
} as const;

/**
 * The figures the delivery function writes per batch as CloudWatch Embedded Metric Format records
 * (functions/aws/delivery-metrics.ts), under one dimension naming the stack so the alarms of two
 * stacks in one account each watch their own (lib/constructs/operator-alarms.ts). One definition,
 * so the two cannot drift apart.
 */
export const deliveryMetrics = {
  namespace: 'Koerier',
  stackDimension: 'Stack',
  attempts: 'DeliveryAttempts',
  /** Attempts not answered with a 2xx. */
  failures: 'DeliveryFailures',
  deadLettered: 'DeliveriesDeadLettered',
  /** Subscriptions suspended because their target kept failing: the operator's alarm on suspensions in bulk. */
  suspended: 'SubscriptionsSuspended',
} as const;

/**
 * The gateway's own figures (issue 13, item 4), written through the `Metrics` port: EMF records in
 * namespace `Koerier` with the `service` and `Stack` dimensions in AWS (functions/aws/emf-metrics.ts),
 * the same counters at `GET /metrics` on the laptop. The dashboard (lib/constructs/dashboard.ts)
 * reads these names. What each means: docs/OPERATIONS.md, "Metrics".
 */
export const observability = {
  namespace: 'Koerier',
  service: 'koerier',
  metrics: {
    eventsAccepted: 'EventsAccepted',
    publishRejected: 'PublishRejected',
    eventsRouted: 'EventsRouted',
    duplicatesDropped: 'DuplicatesDropped',
    deliveriesQueued: 'DeliveriesQueued',
    deliveryOutcomes: 'DeliveryOutcomes',
    attemptLatency: 'AttemptLatency',
    deadLetters: 'DeadLetters',
    subscriptionDeliveries: 'SubscriptionDeliveries',
    subscriptionDeadLetters: 'SubscriptionDeadLetters',
    replayScanned: 'ReplayEventsScanned',
    replayMatched: 'ReplayEventsMatched',
    replaySent: 'ReplayEventsSent',
    replayFailed: 'ReplayEventsFailed',
    /** Requests an AWS service refused as throttling, by service and operation (functions/composition/composition.ts). */
    awsRequestsThrottled: 'AwsRequestsThrottled',
  },
} as const;

export type TableName = keyof typeof tables;
export type QueueName = keyof typeof queues;
export type BucketName = keyof typeof buckets;
export type KeyName = keyof typeof keys;

/**
 * The subscription store is built with the route index (functions/composition/adapters.ts,
 * `subscriptions`), which reads the routes table's name when it is built, though only the store's
 * writes use it: a function that only reads subscriptions still needs the name, or its first read
 * of a subscription fails (test/infra/function-settings.test.ts). Read access is the least that
 * carries the name; once the store takes its route index lazily, these grants can go.
 */
const SUBSCRIPTION_STORE_ROUTES = { routes: 'read' } as const;

export const functions = {
  ingest: {
    entry: 'functions/handlers/ingest.ts',
    memoryMb: 512,
    timeoutSeconds: 15,
    routes: [
      { method: 'POST', path: '/events' },
      { method: 'OPTIONS', path: '/events' },
    ],
    // Partners: the publish grants (EDU-IN); readwrite because the first read after a deploy seeds the directory.
    // Contracts: the event type bindings and their message schemas, checked against `data` (issue 14 item 3).
    tables: { idempotency: 'readwrite', partners: 'readwrite', contracts: 'read' },
    queues: { inbound: 'send' },
    // Writes the claim check's objects (EDU-1); reads an uploaded object to check it before the 202.
    buckets: { payloads: 'readwrite', contracts: 'read' },
  },
  subscriptions: {
    entry: 'functions/handlers/subscriptions.ts',
    memoryMb: 512,
    // Room for the validation request to a slow target (KOERIER_VALIDATION_TIMEOUT_SECONDS, at most 20 s).
    timeoutSeconds: 30,
    // The validation handshake (WH-4) goes to the partner's target.
    outbound: true,
    routes: [
      { method: 'POST', path: '/subscriptions' },
      { method: 'GET', path: '/subscriptions' },
      { method: 'GET', path: '/subscriptions/{id}' },
      { method: 'PATCH', path: '/subscriptions/{id}' },
      { method: 'DELETE', path: '/subscriptions/{id}' },
      { method: 'GET', path: '/subscriptions/{id}/validation' },
      { method: 'POST', path: '/subscriptions/{id}/validation' },
      { method: 'POST', path: '/subscriptions/{id}/revalidate' },
    ],
    // Partners: the entitlements (EDU-7), seeded on the first read after a deploy.
    tables: { subscriptions: 'readwrite', routes: 'readwrite', idempotency: 'readwrite', partners: 'readwrite' },
    // Sealing only: the API never reads a credential back.
    keys: { credentials: 'encrypt' },
    // The validation handshake reaches targets that demand a client certificate.
    trust: ['client-certificate'],
    // A pull subscription's queues are made with it and deleted with it.
    pullQueues: ['manage'],
  },
  router: {
    entry: 'functions/handlers/router.ts',
    memoryMb: 512,
    timeoutSeconds: 10,
    queueTrigger: { queue: 'inbound', batchSize: 10, maxBatchingWindowSeconds: 1 },
    // Partners: the entitlements every match is checked against (EDU-7), seeded on the first read after a deploy.
    tables: { routes: 'read', idempotency: 'readwrite', partners: 'readwrite' },
    queues: { inbound: 'consume', deliveries: 'send' },
    pullQueues: ['send'],
    // Writes one archive object per batch (docs/REPLAY.md).
    buckets: { archive: 'readwrite' },
  },
  delivery: {
    entry: 'functions/handlers/delivery.ts',
    memoryMb: 512,
    // A batch's attempts run side by side: connect (5 s) + response (10 s) + a token fetch (5 s) + rate waits (2 s).
    timeoutSeconds: 30,
    queueTrigger: { queue: 'deliveries', batchSize: 10, maxBatchingWindowSeconds: 0 },
    // Deliveries and the sink credentials' token requests go to partners.
    outbound: true,
    // Subscriptions and routes: retiring (410) and suspending a subscription keep the route index in step.
    // Idempotency: the claim check's readers (the owners an event went to by reference).
    // Partners: the entitlements every attempt is checked against again (EDU-7, issue 28), seeded on the first read after a deploy.
    tables: {
      deliveries: 'readwrite',
      subscriptions: 'readwrite',
      routes: 'readwrite',
      idempotency: 'readwrite',
      partners: 'readwrite',
    },
    // Reads claim-check objects to put data inline again for subscriptions that take it (EDU-1).
    buckets: { payloads: 'read' },
    // Send: a multi-event delivery for a target without batches is split into single ones (JSON-3).
    // Inbound: Koerier's own operational events (suspended, retired, dead-lettered) take the ingest's path.
    queues: { deliveries: 'send+consume', inbound: 'send' },
    keys: { credentials: 'decrypt' },
    trust: ['sign', 'public-keys', 'client-certificate'],
  },
  deliveryAdmin: {
    entry: 'functions/handlers/delivery-admin.ts',
    memoryMb: 256,
    timeoutSeconds: 30,
    routes: [
      { method: 'GET', path: '/subscriptions/{id}/deliveries' },
      { method: 'GET', path: '/subscriptions/{id}/health' },
      { method: 'GET', path: '/subscriptions/{id}/dead-letters' },
      { method: 'POST', path: '/subscriptions/{id}/dead-letters/redrive' },
      { method: 'POST', path: '/subscriptions/{id}/resume' },
      { method: 'POST', path: '/subscriptions/{id}/pause' },
      { method: 'POST', path: '/deliveries/dead-letter-queue/redrive' },
    ],
    // Partners: a redrive withholds dead letters the owner is no longer entitled to (EDU-7).
    tables: {
      deliveries: 'readwrite',
      subscriptions: 'readwrite',
      routes: 'readwrite',
      idempotency: 'readwrite',
      partners: 'readwrite',
    },
    // Inbound: the operational event of a resume.
    queues: { deliveries: 'send', inbound: 'send' },
    deadLetterQueues: { deliveries: 'consume' },
    // A pull subscription's dead letters are redriven into its own queue.
    pullQueues: ['send'],
  },
  pull: {
    entry: 'functions/handlers/pull.ts',
    // Light work (at most a 6 MB answer); a long poll is mostly waiting, and duration is billed per GB-s (docs/PULL.md, idle cost).
    memoryMb: 256,
    // A 20 s long poll, the short polls that fill up and the settling after it, inside API Gateway's 30 s.
    timeoutSeconds: 28,
    routes: [
      { method: 'POST', path: '/subscriptions/{id}/events/receive' },
      { method: 'POST', path: '/subscriptions/{id}/events/acknowledge' },
      { method: 'POST', path: '/subscriptions/{id}/events/release' },
      { method: 'POST', path: '/subscriptions/{id}/events/renew-lock' },
      { method: 'POST', path: '/subscriptions/{id}/events/reject' },
    ],
    // Subscriptions: the caller's own pull subscription; deliveries: dead letters, reject marks, the wrapped lock token key.
    // Idempotency: the claim check's readers, as for the delivery function. Routes: see SUBSCRIPTION_STORE_ROUTES.
    // Partners: the entitlements every receive is checked against again (EDU-7, issue 28), seeded on the first read after a deploy.
    tables: {
      subscriptions: 'read',
      deliveries: 'readwrite',
      idempotency: 'readwrite',
      partners: 'readwrite',
      ...SUBSCRIPTION_STORE_ROUTES,
    },
    // Reads claim-check objects to put data inline again within a subscription's maxinlinebytes (EDU-1).
    buckets: { payloads: 'read' },
    keys: { lockTokens: 'encrypt+decrypt' },
    pullQueues: ['consume'],
  },
  // Replays (issue 13, item 2; docs/REPLAY.md): the API starts, reads and cancels; the worker does the work, a chunk per message.
  replays: {
    entry: 'functions/handlers/replays.ts',
    memoryMb: 256,
    timeoutSeconds: 10,
    routes: [
      { method: 'POST', path: '/subscriptions/{id}/replays' },
      { method: 'GET', path: '/subscriptions/{id}/replays' },
      { method: 'GET', path: '/subscriptions/{id}/replays/{replayId}' },
      { method: 'POST', path: '/subscriptions/{id}/replays/{replayId}/cancel' },
    ],
    // Deliveries: the replay records and each subscription's running-replay slot. Partners: the entitlements a replay stays within.
    tables: {
      subscriptions: 'read',
      deliveries: 'readwrite',
      idempotency: 'readwrite',
      partners: 'readwrite',
      ...SUBSCRIPTION_STORE_ROUTES,
    },
    queues: { replays: 'send' },
  },
  replayWorker: {
    entry: 'functions/handlers/replay-worker.ts',
    memoryMb: 512,
    // A chunk reads at most a few thousand archived events and queues at most 500.
    timeoutSeconds: 60,
    queueTrigger: { queue: 'replays', batchSize: 1, maxBatchingWindowSeconds: 0 },
    tables: { subscriptions: 'read', deliveries: 'readwrite', partners: 'readwrite', ...SUBSCRIPTION_STORE_ROUTES },
    buckets: { archive: 'list+read' },
    // Replayed events go the subscription's normal way: the deliveries queue, or a pull subscription's own.
    // Inbound: the operational event that tells the owner a replay finished.
    queues: { replays: 'send+consume', deliveries: 'send', inbound: 'send' },
    pullQueues: ['send'],
  },
  signingKeys: {
    entry: 'functions/handlers/signing-keys.ts',
    memoryMb: 256,
    timeoutSeconds: 10,
    routes: [{ method: 'GET', path: '/.well-known/http-message-signatures-directory' }],
    trust: ['public-keys'],
  },
  payloads: {
    entry: 'functions/handlers/payloads.ts',
    memoryMb: 512,
    timeoutSeconds: 15,
    routes: [
      { method: 'GET', path: '/payloads/{id}' },
      { method: 'POST', path: '/payloads' },
    ],
    // The ledger of who may fetch, uploads granted and their bytes per client and hour (the upload quota), and the upload's idempotency key.
    // Partners: each client's own upload quota (issue 28 item 13), seeded on the first read after a deploy.
    tables: { idempotency: 'readwrite', partners: 'readwrite' },
    // Reads objects, presigns GETs for large ones and PUTs for uploads (a presigned URL carries the role's rights).
    buckets: { payloads: 'readwrite' },
  },
  // Partners at run time (issue 12, item 3): the admin API for clients, their publish grants and entitlements.
  partners: {
    entry: 'functions/handlers/partners.ts',
    memoryMb: 256,
    timeoutSeconds: 10,
    routes: [
      { method: 'GET', path: '/clients' },
      { method: 'GET', path: '/clients/{clientId}' },
      { method: 'PUT', path: '/clients/{clientId}' },
      { method: 'DELETE', path: '/clients/{clientId}' },
    ],
    tables: { partners: 'readwrite', idempotency: 'readwrite' },
  },
  // The contract register (issue 14, EDU-6, EDU-21, EDU-22); the OpenAPI and AsyncAPI parsers are bundled into this function only.
  contracts: {
    entry: 'functions/handlers/contracts.ts',
    // The parsers (AsyncAPI's runs Spectral) want memory and CPU on the first document.
    memoryMb: 1024,
    timeoutSeconds: 20,
    routes: [
      { method: 'GET', path: '/contracts' },
      { method: 'GET', path: '/contracts/{name}' },
      { method: 'PATCH', path: '/contracts/{name}' },
      { method: 'GET', path: '/contracts/{name}/versions' },
      { method: 'GET', path: '/contracts/{name}/versions/{version}' },
      { method: 'PUT', path: '/contracts/{name}/versions/{version}' },
      { method: 'PATCH', path: '/contracts/{name}/versions/{version}' },
      { method: 'GET', path: '/contracts/{name}/versions/{version}/document' },
      { method: 'GET', path: '/contract-bindings' },
      { method: 'GET', path: '/contract-bindings/{type}' },
      { method: 'PUT', path: '/contract-bindings/{type}' },
      { method: 'DELETE', path: '/contract-bindings/{type}' },
    ],
    // Subscriptions: who consumes a contract (the subscriptions naming its event types).
    // Partners: the publish grants that say who may bind a type for its events (issue 28), seeded on the first read after a deploy.
    tables: {
      contracts: 'readwrite',
      idempotency: 'readwrite',
      subscriptions: 'read',
      partners: 'readwrite',
      ...SUBSCRIPTION_STORE_ROUTES,
    },
    buckets: { contracts: 'readwrite' },
    // Deprecating a contract tells its consumers through Koerier's own operational events, written to the inbound queue.
    queues: { inbound: 'send' },
  },
  apiDescription: {
    entry: 'functions/handlers/api-description.ts',
    memoryMb: 256,
    timeoutSeconds: 5,
    routes: [
      { method: 'GET', path: '/openapi.json' },
      // A page for each problem type (functions/core/http/problem-types.ts).
      { method: 'GET', path: '/problems/{type}' },
    ],
    defaultRoute: true,
  },
} as const satisfies Record<string, FunctionSpec>;

export type FunctionName = keyof typeof functions;

type RoutesOf<F> = F extends { readonly routes: readonly (infer R)[] } ? R : never;

/** API Gateway's route keys of one function, `METHOD /path`: what its app dispatches on, and its idempotency operations. */
export type RouteKey<F extends FunctionName> =
  RoutesOf<(typeof functions)[F]> extends infer R
    ? R extends RouteSpec
      ? `${R['method']} ${R['path']}`
      : never
    : never;

/** Every route of the API in the order written above: the laptop gateway and the `$default` answer match requests with it. */
export const routeTable: readonly (RouteSpec & { readonly function: FunctionName })[] = (
  Object.entries(functions) as [FunctionName, FunctionSpec][]
).flatMap(([name, fn]) => (fn.routes ?? []).map((route) => ({ ...route, function: name })));

/** RFC 8615: well-known resources live at the root of the origin, outside the versioned API. */
const WELL_KNOWN_PREFIX = '/.well-known/';

/**
 * Where a route is served: under the API's base path (`/events` at `/v1/events`, Logius API
 * Design Rules /core/uri-version), except well-known resources, at the origin's root. API Gateway
 * and the laptop gateway route these paths; the apps and the route keys above never see the base path.
 */
export function servedPath(path: string): string {
  return path.startsWith(WELL_KNOWN_PREFIX) ? path : `${API_BASE_PATH}${path}`;
}

/** The route key of this file (`POST /events`) for the key of a served route (`POST /v1/events`), as API Gateway reports it. */
export function routeKeyOfServed(servedRouteKey: string): string {
  const space = servedRouteKey.indexOf(' ');
  if (space < 0) return servedRouteKey; // `$default`
  const path = servedRouteKey.slice(space + 1);
  return path.startsWith(`${API_BASE_PATH}/`)
    ? `${servedRouteKey.slice(0, space)} ${path.slice(API_BASE_PATH.length)}`
    : servedRouteKey;
}

/** Environment variable names that carry resource names into the functions. */
export const resourceEnv = {
  table: (name: TableName) => `KOERIER_TABLE_${snake(name)}`,
  queueUrl: (name: QueueName) => `KOERIER_QUEUE_${snake(name)}_URL`,
  deadLetterQueueUrl: (name: QueueName) => `KOERIER_DLQ_${snake(name)}_URL`,
  bucket: (name: BucketName) => `KOERIER_BUCKET_${snake(name)}`,
  key: (name: KeyName) => `KOERIER_KEY_${snake(name)}`,
  /** Set for a function with a `pullQueues` grant. */
  pullQueuePrefix: 'KOERIER_PULL_QUEUE_PREFIX',
};

/** Physical names where Koerier chooses them (laptop host; CDK lets CloudFormation name them). */
export const localName = {
  table: (name: TableName) => `koerier-${kebab(name)}`,
  queue: (name: QueueName) => `koerier-${kebab(name)}`,
  deadLetterQueue: (name: QueueName) => `koerier-${kebab(name)}-dlq`,
  bucket: (name: BucketName) => `koerier-${kebab(name)}`,
  pullQueuePrefix: 'koerier',
};

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
