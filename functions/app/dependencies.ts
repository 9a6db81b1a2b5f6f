/**
 * Everything the apps need from the world, as ports. One value of this type is one Koerier: the
 * composition root (functions/composition/aws-dependencies.ts) builds it once from a
 * `KoerierConfig` — in Lambda from the function's environment, on the laptop from the host's own
 * settings. Each app (./*-app.ts) is a function of the part it reads, a `Pick` of this type named
 * after the app (`RouterAppDependencies`), and a Lambda handler composes exactly the builders
 * for that part: the compiler holds the two together (functions/composition/composition.ts).
 * Nothing here reads the environment, and nothing is a module-level singleton, so two sets of
 * dependencies live side by side in one process (two laptop hosts, say).
 *
 * Adapters that cost something to build (SDK clients, the token verifier, HTTP clients) are built
 * on first use, so a function only pays for what its app reaches, and building the dependencies
 * does no I/O.
 */
import type { Principal, Scope } from '../core/auth/access-tokens.js';
import type { ClaimCheckStore, PayloadLedger } from '../core/claim-check/ports.js';
import type { DataContracts } from '../core/contracts/data-contracts.js';
import type { ContractDocuments, ContractLifecycleHook, ContractStore } from '../core/contracts/ports.js';
import type { CredentialCipher } from '../core/credentials/sink-credential.js';
import type { DeadLetterStore, DeliveryLedger, TargetHealthStore } from '../core/delivery/delivery-records.js';
import type { Outbox } from '../core/delivery-message/outbox.js';
import type { OrderedLanes } from '../core/ordering/ordered-lanes.js';
import type { LaneRuns } from '../core/ordering/lane-runs.js';
import type { OrderingKeyRequirements } from '../core/ingest/ordering-key-requirements.js';
import type { LaneSweepIndex } from '../core/delivery-message/lane-sweep.js';
import type { HttpRequest } from '../core/http/messages.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import type { InboundQueue, RateWindow } from '../core/ingest/ports.js';
import type { OperationalEvents } from '../core/operations/operational-events.js';
import type { AlertQueue } from '../core/alerts/alert-signals.js';
import type { AlertMailer, AlertWebhookPost, AlertWindows } from '../core/alerts/send-alerts.js';
import type { PartnerDirectory } from '../core/partners/partner-directory.js';
import type { PartnerStore } from '../core/partners/ports.js';
import type { GivenUpLocks, PollLeases, PullQueues, RejectionMarks } from '../core/pull/pull-queues.js';
import type { HoldLedger } from '../core/quotas/holds.js';
import type { UsageWindow } from '../core/quotas/usage-window.js';
import type { EventArchive, ReplayQueue, ReplayStore } from '../core/replay/ports.js';
import type { ErasableStores, ErasureQueue, ErasureStore } from '../core/erasure/ports.js';
import type { RouteIndexReader, SubscriptionMatcher } from '../core/routing/matcher.js';
import type { RoutedEventLedger } from '../core/routing/routed-events.js';
import type { EventDeliveryReader } from '../core/trace/event-deliveries.js';
import type { RoutedEventReader } from '../core/trace/routed-event-records.js';
import type { SigningKeys } from '../core/signatures/message-signature.js';
import type { SubscriptionStore } from '../core/subscriptions/store.js';
import type { cachedSubscriptions } from '../core/subscriptions/subscription-cache.js';
import type { DeliveryPolicy, DispatcherDependencies, DispatchSubscriptions } from '../core/delivery/dispatch-ports.js';
import type { KoerierConfig } from '../config.js';
import type { SafeHttpClient } from '../net/safe-http-client.js';
import type { ClientAdmission } from './client-throttling.js';
import type { Logger } from './logger.js';
import type { Clock } from '../core/ports/clock.js';
import type { Metrics } from '../core/ports/metrics.js';
import type { ZgwStore } from '../core/zgw/ports.js';

/** A message on the deliveries queue, with what SQS told about it. */
export interface DeliveryQueue {
  /** Writes every message or throws; `delaySeconds` hides them that long (SQS DelaySeconds, 0–900). */
  send(bodies: readonly string[], delaySeconds?: number): Promise<void>;
  /** Hides received messages for their backoff; answers how many could not be postponed. */
  postpone(
    postponements: readonly { readonly receiptHandle: string; readonly delaySeconds: number }[],
  ): Promise<number>;
  /** Moves at most `limit` messages from the dead-letter queue back; answers how many moved. */
  redriveDeadLetterQueue(limit: number): Promise<number>;
}

/** What every app behind authenticated routes with the Idempotency-Key guard reads. */
export type GuardedRouteMembers = 'config' | 'log' | 'authenticate' | 'idempotency';

export interface KoerierDependencies {
  readonly config: KoerierConfig;
  /** At the configuration's level. */
  readonly log: Logger;
  /** The time, for every app and every adapter the composition builds: one clock per set, so a test can set it. */
  readonly clock: Clock;
  /** Verifies the access token and admits the client past its throttle, or throws the 401/403/429 problem. */
  authenticate(request: HttpRequest, scope: Scope): Promise<Principal>;
  /** This set's per-client throttle (the publish window tells it its refusals). */
  readonly admission: ClientAdmission;
  readonly idempotency: IdempotencyStore;
  readonly publishRateWindow: RateWindow;
  readonly inboundQueue: InboundQueue;
  readonly deliveryQueue: DeliveryQueue;
  readonly subscriptions: SubscriptionStore;
  readonly routeIndex: RouteIndexReader;
  /** The router's matcher over the route index: its cache lives as long as the set, checked against the index generation per batch. */
  readonly subscriptionMatcher: SubscriptionMatcher;
  /** The subscriptions as the delivery function reads them: cached a few seconds per container. */
  readonly deliverySubscriptions: DispatchSubscriptions;
  /** The subscriptions as the pull function reads them: cached a little longer (owner and delivery never change). */
  readonly pullSubscriptions: ReturnType<typeof cachedSubscriptions>;
  /** What the delivery dispatcher's decisions follow: retries, breaker, suspension, lifetimes, timeouts (from the configuration). */
  readonly deliveryPolicy: DeliveryPolicy;
  /** The bearer token for a push subscription's sink (WH-3): its stored credential opened once per container, OAuth2 tokens fetched and kept. */
  readonly sinkAccessTokens: Pick<DispatcherDependencies, 'accessToken'>;
  /** Every partner's publish grants and entitlements as the functions decide with them: cached, read again after `partnersRefreshSeconds`. */
  readonly partners: PartnerDirectory;
  /** The partner directory itself, for the admin API. */
  readonly partnerStore: PartnerStore;
  readonly routedEvents: RoutedEventLedger;
  /** The routed-event ledger read back: one event's trace, and the ingest's `duplicate` (issue 30 item 1). */
  readonly routedEventRecords: RoutedEventReader;
  /** One event's attempts and dead letters in a subscription, for its trace (issue 30 item 1). */
  readonly eventDeliveries: EventDeliveryReader;
  readonly deliveryState: TargetHealthStore & DeliveryLedger & DeadLetterStore;
  /** The claim check (EDU-1, CARD-6): objects of data too large to travel inline, and who may read each. */
  readonly claimCheckStore: ClaimCheckStore;
  readonly payloadLedger: PayloadLedger;
  readonly credentialCipher: CredentialCipher;
  /** The keys that sign deliveries and are published as a JWKS (issue 12, item 6); none when unconfigured. */
  readonly signingKeys: SigningKeys;
  /** Each pull subscription's own queue (docs/PULL.md). */
  readonly pullQueues: PullQueues;
  /**
   * Where a delivery message goes once Koerier has decided to send it (issue 29, item 3): the router,
   * a replay, a redrive and the delivery function's split all enqueue through it, over the two queues above.
   */
  readonly outbox: Outbox;
  /** The ordered subscriptions that refuse events without their key (issue 33, ORD-1), as the ingest checks them: cached per container. */
  readonly orderingKeyRequirements: OrderingKeyRequirements;
  /** The lanes of ordered delivery per key (issue 33): the delivery function and the pull function settle their heads. */
  readonly orderedLanes: OrderedLanes & LaneRuns;
  /** The lane sweeper's index (issue 33): lanes that wait on a settle or head message, for the scheduled sweeper. */
  readonly laneSweepIndex: LaneSweepIndex;
  /** The marks a reject leaves for the next receive. */
  readonly rejectionMarks: RejectionMarks;
  /** The locks consumers gave up (release, reject): their tokens settle nothing more (issue 28 item 14e). */
  readonly givenUpLocks: GivenUpLocks;
  /** Slots of concurrent long polls, shared by every container. */
  readonly pollLeases: PollLeases;
  /** The key lock tokens are sealed with: the same in every container. */
  lockTokenKey(): Promise<Buffer>;
  /** Outbound HTTP for deliveries and token requests, with the delivery timeouts (SSRF guard on). */
  readonly deliveryHttp: SafeHttpClient;
  /** Outbound HTTP for the validation handshake, with its timeout (SSRF guard on). */
  readonly handshakeHttp: SafeHttpClient;
  /** What each client holds against its count quotas: pull subscriptions, running replays (issue 28 item 13). */
  readonly quotaHolds: HoldLedger;
  /** Upload bytes granted per client per hour, against its upload quota (issue 28 item 13). */
  readonly uploadUsage: UsageWindow;
  /** Every routed event, kept for replays (docs/REPLAY.md). */
  readonly eventArchive: EventArchive;
  /** Replays' records and each subscription's running-replay slot. */
  readonly replayStore: ReplayStore;
  /** Carries a running replay from one chunk to the next. */
  readonly replayQueue: ReplayQueue;
  /** Erasures' audit records (issue 31 item 4). */
  readonly erasureStore: ErasureStore;
  /** Carries a running erasure from one chunk to the next, with its selector. */
  readonly erasureQueue: ErasureQueue;
  /** Every store event data rests in, as the erasure worker removes from them. */
  readonly erasableStores: ErasableStores;
  /** Koerier's own events (suspended, resumed, retired, dead-lettered, …) onto its own pipeline: the inbound queue (core/operations). */
  readonly operationalEvents: OperationalEvents;
  /** Out-of-band alerts (issue 30 item 3): the queue the delivery function raises them on, the rate windows, e-mail (none where no sender is set) and webhooks. */
  readonly alertQueue: AlertQueue;
  readonly alertWindows: AlertWindows;
  readonly alertMailer: AlertMailer | undefined;
  readonly alertWebhook: AlertWebhookPost;
  /** The contract register (issue 14): metadata and bindings, and the documents with their message schemas. */
  readonly contractStore: ContractStore;
  /** The ZGW Notificaties API adapter's kanalen and abonnementen (issue 34). */
  readonly zgwStore: ZgwStore;
  readonly contractDocuments: ContractDocuments;
  /** The ingest's cached bindings and compiled message schemas (read again after `partnersRefreshSeconds`). */
  readonly dataContracts: DataContracts;
  /** Told when a contract version is deprecated. HOOK for the operational events (work/opsinsight); logs until wired. */
  readonly contractLifecycle: ContractLifecycleHook;
  /** The gateway's figures (issue 13): EMF records through Powertools in Lambda, Prometheus counters on the laptop; written by `flush()` once per invocation. */
  readonly metrics: Metrics;
  /** Records one delivery batch's figures as metrics (CloudWatch Embedded Metric Format in AWS; functions/aws/delivery-metrics.ts). */
  recordDeliveryMetrics(figures: {
    readonly attempts: number;
    readonly failures: number;
    readonly suspended: number;
  }): void;
}
