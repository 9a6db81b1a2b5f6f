/**
 * The stores of Koerier's resource description (./resources.ts): tables, queues, buckets and keys,
 * with the shapes a function's spec refers to them by. Plain data, read by the CDK app and the laptop host.
 */
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
    /** The other attributes the index carries (INCLUDE); absent: all of them (ALL). Same on AWS and the laptop. */
    readonly include?: readonly string[];
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
  /** Run on a schedule (an EventBridge rule on AWS, a timer on the laptop), every so many minutes. */
  readonly schedule?: { readonly everyMinutes: number };
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
  /** Sends e-mail through SES (out-of-band alerts): `ses:SendEmail` on the deployment's sending identity only. */
  readonly email?: boolean;
  /** What the function may touch; each grant also puts the resource's name in its environment. */
  readonly tables?: Partial<Record<TableName, 'read' | 'readwrite'>>;
  readonly queues?: Partial<Record<QueueName, 'send' | 'consume' | 'send+consume'>>;
  readonly deadLetterQueues?: Partial<Record<QueueName, 'consume'>>;
  /**
   * `list+read`: read objects and list the bucket (the replay worker reads the archive by prefix);
   * `list+readwrite`: also write and delete them (the erasure worker rewrites archive objects).
   */
  readonly buckets?: Partial<Record<BucketName, 'read' | 'list+read' | 'readwrite' | 'list+readwrite'>>;
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
    // The lane sweeper's sparse index (issue 33, docs/ORDERING.md "Sweeper"; functions/aws/dynamodb-lane-sweep-index.ts):
    // only ordered lanes' staged events and lane states carry `sweepShard`, the rest of the table is not in it.
    globalIndexes: [
      {
        name: 'laneSweep',
        partitionKey: { name: 'sweepShard', type: 'S' },
        sortKey: { name: 'sweepSince', type: 'N' },
        include: ['key'],
      },
    ],
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
  /** The ZGW Notificaties API adapter (issue 34): kanalen and abonnementen, one JSON record per item (functions/aws/dynamodb-zgw-store.ts). */
  zgw: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } },
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
  /**
   * One message per running erasure: its next chunk, with the selector (personal data), so kept
   * 4 days, not 14: an erasure whose worker failed that long is started again (issue 31 item 4).
   * Visibility: six times the worker's timeout.
   */
  erasures: { visibilityTimeoutSeconds: 1800, retentionSeconds: 4 * 24 * 3600, maxReceiveCount: 5 },
  /**
   * Out-of-band alerts (issue 30 item 3, core/alerts): one message per alert signal the delivery
   * function raises; the alerts function gathers them for its batching window and sends one message
   * per contact. Visibility: six times its timeout plus the window, as AWS advises for SQS triggers.
   */
  alerts: { visibilityTimeoutSeconds: 210, retentionSeconds: FOURTEEN_DAYS, maxReceiveCount: 5 },
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
 * so the two cannot drift apart. Dead letters are not here: every one, push or pull, is counted once
 * through the `Metrics` port (`DeadLetters`, `SubscriptionDeadLetters`; issue 29, item 3).
 */
export const deliveryMetrics = {
  namespace: 'Koerier',
  stackDimension: 'Stack',
  attempts: 'DeliveryAttempts',
  /** Attempts not answered with a 2xx. */
  failures: 'DeliveryFailures',
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
