/**
 * What Koerier keeps about deliveries, and the three ports that keep it (one `deliveries` table
 * in AWS and on the laptop, `functions/aws/dynamodb-delivery-state.ts`): the shared health of
 * each subscription's target, the delivery ledger (per-delivery progress and attempt history), and
 * the dead letters. Each user depends on the part it uses, so a fake stubs only that.
 */
import { REJECTION_CODES, type FailureCode } from './attempt-outcome.js';
import type { TargetState } from './target-health.js';
import type { ReceiverAnswer } from './receiver-answer.js';
import type { EventName, ReplayMark } from '../delivery-message/delivery-message.js';
import type { ContentMode } from '../cloudevents/index.js';

export type AttemptOutcome = 'delivered' | 'retrying' | 'dead-lettered' | 'retired';

/** One attempt, as `GET /subscriptions/{id}/deliveries` shows it. */
export interface AttemptRecord {
  readonly subscriptionId: string;
  readonly deliveryId: string;
  /** 1-based: the how-many-th attempt of this delivery. */
  readonly attempt: number;
  /** ISO 8601, when the request went out. */
  readonly at: string;
  readonly outcome: AttemptOutcome;
  /** The target's status code, when it answered. */
  readonly status?: number;
  readonly latencyMs: number;
  /** What the receiver answered, when it answered: a body excerpt and a few headers (issue 30 item 2). */
  readonly answer?: ReceiverAnswer;
  readonly error?: { readonly code: FailureCode; readonly detail: string };
  /** ISO 8601, when the next attempt is due (outcome `retrying`). */
  readonly nextAttemptAt?: string;
  /** The events the delivery carries, by their identity (issue 13, item 5); only in the history, not in `lastAttempts`. */
  readonly events?: readonly EventReference[];
  /** The dead letter (its delivery id) this delivery redrives. */
  readonly redriveOf?: string;
}

/** An event by what names it (CE-17) and its type; never its data. Decoding a delivery message reads them (delivery-message.ts). */
export type EventReference = EventName;

/**
 * `lastAttempts` with one more failed attempt, as the progress and dead-letter items keep them:
 * at most `KEPT_ATTEMPTS`, without `events` (the delivery holds them anyway), and with the
 * receiver's answer only on the newest one. Both bound the items, which are written again on every
 * failed attempt; every attempt's answer stays in the attempt history.
 */
export function withKeptAttempt(kept: readonly AttemptRecord[], newest: AttemptRecord): AttemptRecord[] {
  const { events: _events, ...record } = newest;
  const earlier = kept.slice(-(KEPT_ATTEMPTS - 1)).map(({ answer: _answer, ...older }) => older);
  return [...earlier, record];
}

/** The failed attempts of one delivery so far (written only when an attempt fails). */
export interface DeliveryProgress {
  readonly deliveryId: string;
  readonly failedAttempts: number;
  /** The most recent failed attempts, oldest first, at most `KEPT_ATTEMPTS`. */
  readonly lastAttempts: readonly AttemptRecord[];
  /** Epoch ms: the next attempt is not due before this (a wait longer than one SQS visibility timeout). */
  readonly nextAttemptAt?: number;
  /** How the first attempt rendered the delivery; every later attempt sends it so (EDU-IDEM-11, `frozen-rendering.ts`). */
  readonly rendering?: DeliveryRendering;
}

/**
 * What an attempt's request is made from besides the events and the key: the subscription's
 * rendering settings as the first attempt found them.
 */
export interface DeliveryRendering {
  readonly format: ContentMode;
  /** The subscription's `maxInlineBytes` then; absent: it had none, and the deployment's default applies. */
  readonly maxInlineBytes?: number;
}

export const KEPT_ATTEMPTS = 10;

export const DEAD_LETTER_REASONS = [
  /** Retries ran out: the retry window passed, or the key's lifetime would have (EDU-IDEM-12). */
  'exhausted',
  /** The target answered 410 Gone; the subscription is retired. */
  'gone',
  ...REJECTION_CODES,
  'subscription-retired',
  /** Parked while the subscription was suspended; resuming sends it again. */
  'subscription-suspended',
  'subscription-not-active',
  /** Pull: the consumer rejected it (docs/PULL.md); `detail` holds its reason. */
  'rejected',
  /** Pull: received `maxdeliverycount` times without being settled. */
  'max-deliveries',
  /** Not sent: the owner is no longer entitled to an event of it (EDU-7; issue 28, item 9). */
  'not-entitled',
  /** Not sent: an event of it no longer matches the subscription's filters (issue 28, item 9). */
  'no-longer-matches',
] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

/** A delivery Koerier stopped trying, kept with its events so it can be sent again (EDU-18). */
export interface DeadLetter {
  readonly subscriptionId: string;
  readonly deliveryId: string;
  /** The events exactly as accepted. */
  readonly events: readonly string[];
  /** Epoch ms when the delivery was created. */
  readonly createdAt: number;
  /** ISO 8601. */
  readonly deadLetteredAt: string;
  readonly reason: DeadLetterReason;
  readonly detail: string;
  readonly attempts: number;
  readonly lastAttempts: readonly AttemptRecord[];
  /** The delivery this one was a redrive of. */
  readonly redriveOf?: string;
  /** The publish request's correlation id the delivery carried; a redrive carries it on. */
  readonly correlationId?: string;
  /** The replay the delivery came from (docs/REPLAY.md); a redrive carries it on, so an ordered replay's lane is found again. */
  readonly replay?: ReplayMark;
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Opaque; pass it back to get the next page. Absent (or undefined) on the last page. */
  readonly cursor?: string | undefined;
}

export class InvalidPageCursorError extends Error {
  override name = 'InvalidPageCursorError';
}

/**
 * The shared health of each subscription's target (WH-6, EDU-10, EDU-12): its rate slot, circuit
 * breaker and 429 throttle, read and written by every delivery function instance.
 */
export interface TargetHealthStore {
  getTarget(subscriptionId: string): Promise<TargetState>;
  /** The targets of several subscriptions in one read; absent ones are healthy. */
  getTargets(subscriptionIds: readonly string[]): Promise<ReadonlyMap<string, TargetState>>;
  /** Moves `nextSendAt` from `expected` (undefined: unset) to `next`; false when another instance moved it first. */
  reserveSendSlots(subscriptionId: string, expected: number | undefined, next: number): Promise<boolean>;
  /**
   * Takes the half-open probe until `until`, for the cool-down that began at `lastFailureAt` as it
   * was read; false when another instance holds it, or when a failure was recorded since (that
   * failure started a new cool-down, and a probe on the old one would cut it short).
   */
  takeProbe(subscriptionId: string, now: number, until: number, lastFailureAt: number): Promise<boolean>;
  /** Ends the probe lease that ends at `until`, if it is still that one. */
  releaseProbe(subscriptionId: string, until: number): Promise<void>;
  /** A success: the breaker closes, failure counters and the 429 throttle clear. */
  recordTargetSuccess(subscriptionId: string): Promise<void>;
  /** `count` transient failures at `now` (`probe`: the half-open probe was one of them); returns the state after them. */
  recordTargetFailures(subscriptionId: string, count: number, now: number, probe: boolean): Promise<TargetState>;
  /** A 429: no request before `pauseUntil`, and the reduced rate. */
  recordThrottle(
    subscriptionId: string,
    pauseUntil: number,
    throttle: { ratePerMinute: number; since: number },
  ): Promise<void>;
  /** Forgets the target's failures (a resumed subscription starts with a clean slate). */
  resetTarget(subscriptionId: string): Promise<void>;
}

/** Each delivery's failed attempts so far (its progress), and the attempt history people read. */
export interface DeliveryLedger {
  getProgress(subscriptionId: string, deliveryId: string): Promise<DeliveryProgress | undefined>;
  putProgress(subscriptionId: string, progress: DeliveryProgress, expiresAt: number): Promise<void>;
  recordAttempts(records: readonly AttemptRecord[], expiresAt: number): Promise<void>;
  /** Newest first. */
  listAttempts(
    subscriptionId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<Page<AttemptRecord>>;
}

/** The deliveries Koerier stopped trying, kept for the subscriber to see and send again (EDU-18). */
export interface DeadLetterStore {
  putDeadLetter(deadLetter: DeadLetter, expiresAt: number): Promise<void>;
  /** Oldest delivery first. */
  listDeadLetters(
    subscriptionId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<Page<DeadLetter>>;
  deleteDeadLetters(
    deadLetters: readonly Pick<DeadLetter, 'subscriptionId' | 'deliveryId' | 'createdAt'>[],
  ): Promise<void>;
}
