/**
 * What the delivery function's dispatcher is handed (`dispatcher.ts`): the queue's messages, the
 * policy, and the ports it works through. Each stage takes only the part it uses, so a test fakes
 * only that part.
 */
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { Metrics } from '../ports/metrics.js';
import type { SinkCredentialPolicy } from '../credentials/sink-credential.js';
import type { DeliveryMessage } from '../delivery-message/delivery-message.js';
import type { Outbox } from '../delivery-message/outbox.js';
import type { OrderedLanes } from '../ordering/ordered-lanes.js';
import type { LaneRuns } from '../ordering/lane-runs.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { Subscription, SubscriptionStatus, SuspensionCause } from '../subscriptions/subscription.js';
import type { AttemptResult } from './attempt-outcome.js';
import type { EventText } from '../cloudevents/event-text.js';
import type { DeadLetterStore, DeliveryLedger, EventReference, TargetHealthStore } from './delivery-records.js';
import type { BreakerSettings } from './target-health.js';
import type { RetrySchedule } from './retry-schedule.js';
import type { WebhookRequest } from './webhook-request.js';
import type { SigningKey } from '../signatures/message-signature.js';
import type { OperationalEvents } from '../operations/operational-events.js';

export interface DeliveryPolicy {
  readonly retry: RetrySchedule;
  readonly breaker: BreakerSettings;
  readonly suspendAfterSeconds: number;
  /** The receiver's idempotency-key lifetime (EDU-IDEM-7): no attempt after it (EDU-IDEM-12). */
  readonly keyTtlSeconds: number;
  readonly historySeconds: number;
  readonly deadLetterRetentionSeconds: number;
  /** How long admitted deliveries may wait in memory for their rate slot. */
  readonly rateHorizonMs: number;
  /** The queue's redrive threshold: on this receive, a retry becomes a dead letter instead. */
  readonly maxReceiveCount: number;
  /** The longest one request to a target can take: its connect plus response timeout. */
  readonly sendTimeoutMs: number;
  /** The longest fetching an OAuth2 access token can take. */
  readonly tokenTimeoutMs: number;
  /** Which sink credentials the deployment accepts (WH-3, EDU-4): a subscription without one is suspended. */
  readonly sinkCredentials: SinkCredentialPolicy;
}

/** The batch's time budget. */
export interface DispatchOptions {
  /**
   * Epoch ms by which every attempt must be over, so the decisions can still be applied before
   * the function times out (a timeout applies none of them). An attempt that might not end by
   * then is not started.
   */
  readonly deadline?: number;
}

/** A message as the queue handed it over. */
export interface DeliveryTask {
  readonly messageId: string;
  readonly body: string;
  /** SQS ApproximateReceiveCount: 1 on the first receive. */
  readonly receiveCount: number;
}

/** A queue message read as a delivery. */
export interface QueuedDelivery {
  readonly messageId: string;
  readonly receiveCount: number;
  readonly message: DeliveryMessage;
  /** Its events by name, as decoding the message read them; absent, the attempt record reads them from the events. */
  readonly eventReferences?: readonly EventReference[];
  /** Its events as decoding read them, attributes parsed once (issue 29, item 4); absent, each reader reads them from the text. */
  readonly events?: readonly EventText[];
}

/** What becomes of one queue message. */
export type DeliveryDecision =
  | { readonly messageId: string; readonly action: 'done' }
  /** Leave the message in the queue and show it again after `delaySeconds`. */
  | { readonly messageId: string; readonly action: 'retry'; readonly delaySeconds: number };

/** What a batch came to: a decision per message, and its figures for metrics. */
export interface BatchOutcome {
  readonly decisions: readonly DeliveryDecision[];
  /** Requests sent to targets. */
  readonly attempts: number;
  /** Of those, the ones not answered with a 2xx. */
  readonly failedAttempts: number;
  /** Deliveries that became dead letters (with or without an attempt in this batch). */
  readonly deadLettered: number;
  /** Subscriptions suspended because their target kept failing. */
  readonly suspended: number;
}

export class CredentialUnavailableError extends Error {
  override name = 'CredentialUnavailableError';
}

/** The subscriptions as the dispatcher reads and changes them. */
export interface DispatchSubscriptions {
  /** May answer from a short-lived cache unless `fresh`. */
  get(id: string, options?: { fresh?: boolean }): Promise<Subscription | undefined>;
  updateStatus(id: string, status: SubscriptionStatus, reason: string, suspendedFor?: SuspensionCause): Promise<void>;
}

/** The parts of the delivery state ports the dispatcher uses: all of target health but `resetTarget` (a resume's). */
export type DispatchTargets = Omit<TargetHealthStore, 'resetTarget'>;
export type DispatchLedger = Pick<DeliveryLedger, 'getProgress' | 'putProgress' | 'recordAttempts'>;
/** `listDeadLetters`: to tell that the subscription's dead letters are no longer empty (operational events). */
export type DispatchDeadLetters = Pick<DeadLetterStore, 'putDeadLetter'> &
  Partial<Pick<DeadLetterStore, 'listDeadLetters'>>;

export interface DispatcherDependencies {
  readonly targets: DispatchTargets;
  readonly ledger: DispatchLedger;
  readonly deadLetters: DispatchDeadLetters;
  readonly subscriptions: DispatchSubscriptions;
  /**
   * The bearer token for the subscription's sink (WH-3); only called for a subscription with a credential.
   * `refresh` asks for a new one (after a 401). Throws CredentialUnavailableError.
   */
  accessToken(subscription: Subscription, options?: { refresh?: boolean }): Promise<string | undefined>;
  send(request: WebhookRequest): Promise<AttemptResult>;
  /** The key that signs deliveries of subscriptions with `signDeliveries` (issue 12, item 6); throws when it cannot be had. */
  signingKey?(): Promise<SigningKey>;
  /**
   * The events as they go to `subscription` (the claim check, EDU-1: data inline again when it
   * fits the subscription's `maxInlineBytes`, else by reference with its owner recorded as a
   * reader). Throws when the claim check is unavailable; the attempt then fails without a send.
   * Absent: the events go out as queued.
   */
  outgoingEvents?(subscription: Subscription, events: readonly string[]): Promise<readonly string[]>;
  /**
   * The owners' entitlements as configured now (EDU-7): every attempt re-checks them, and the
   * subscription's current filters, before anything is sent (issue 28, item 9). Absent: no check.
   */
  entitlements?(): Promise<Entitlements>;
  /** Where a batch split into single events goes: the outbox the router, replays and redrives use (issue 29, item 3). */
  readonly outbox: Pick<Outbox, 'enqueue'>;
  /** The lanes of ordered subscriptions (issue 33, core/ordering); absent: every delivery goes unordered. */
  readonly lanes?: OrderedLanes & LaneRuns;
  /** How long after its acceptance an ordered event is appended to its lane (docs/ORDERING.md); default 1,000 ms. */
  readonly orderingSettlingMs?: number;
  readonly policy: DeliveryPolicy;
  /** Koerier's own events about suspensions, retirements and dead letters (core/operations); absent: none told. */
  readonly operations?: OperationalEvents;
  /** `WebHook-Request-Origin`. */
  readonly origin: string;
  readonly log: Log;
  /** Attempts by outcome and latency, dead letters by reason (issue 13). */
  readonly metrics?: Metrics;
  readonly clock?: Clock;
  readonly random?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}
