/**
 * What an attempt settles, decided without touching anything (WH-2, WH-6, EDU-10, EDU-18,
 * EDU-IDEM-12): from the attempt, the delivery's progress so far, the policy, the time and a
 * random number comes the record for the history, the progress to keep, the next step for the
 * queue message (done; retry after a delay; a dead letter with its reason) and how the attempt
 * moves the target's health. The dispatcher applies the steps; this module only decides them, so
 * its rules are tested as tables (test/unit/delivery/settle-attempt.test.ts).
 */
import { lineageOf } from '../delivery-message/delivery-message.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { FailureCode, Verdict } from './attempt-outcome.js';
import type { ReceiverAnswer } from './receiver-answer.js';
import { eventReferences } from './delivery-views.js';
import {
  KEPT_ATTEMPTS,
  withKeptAttempt,
  type AttemptRecord,
  type DeadLetter,
  type DeadLetterReason,
  type DeliveryProgress,
  type DeliveryRendering,
} from './delivery-records.js';
import type { DeliveryPolicy, QueuedDelivery } from './dispatch-ports.js';
import { keyDeadline, nextAttemptAt, nominalDelayMs, retryDeadline } from './retry-schedule.js';
import { effectiveRatePerMinute, type TargetState } from './target-health.js';

/** How soon a delivery that did not fit in the batch's time budget comes back. */
export const OUT_OF_TIME_RETRY_MS = 3_000;

/** SQS's longest visibility timeout, less a margin: a longer wait is served in several hops. */
export const MAX_DELAY_SECONDS = 43_200 - 60;

export const LAST_RECEIVE = 'the delivery could not be attempted again before the queue would have set it aside';

export type SettlePolicy = Pick<
  DeliveryPolicy,
  'retry' | 'keyTtlSeconds' | 'maxReceiveCount' | 'deadLetterRetentionSeconds'
>;

/** How an attempt went, as the sending stage reports it. */
export type AttemptReport =
  /** Not attempted: it might not have ended before the batch's deadline. */
  | { readonly outOfTime: true }
  | {
      /** Epoch ms when the request went out. */
      readonly at: number;
      readonly latencyMs: number;
      readonly status?: number;
      /** What the receiver answered, as the record keeps it (issue 30 item 2). */
      readonly answer?: ReceiverAnswer;
      readonly verdict: Verdict;
      /** A 401 to a token now refreshed: try again with it, in a rate slot of its own. */
      readonly freshToken?: true;
      /** How the request was rendered: kept with the progress, so a retry sends the same body (EDU-IDEM-11). */
      readonly rendering?: DeliveryRendering;
    };

/** One attempt with what its settling depends on. */
export interface SettleableAttempt {
  readonly delivery: QueuedDelivery;
  readonly subscription: Pick<Subscription, 'allowedRatePerMinute' | 'retryWindowSeconds'>;
  /** The target state the attempt was admitted on. */
  readonly target: TargetState;
  readonly report: AttemptReport;
}

/** Not tried again: kept as a dead letter until `expiresAt` (epoch seconds), then let go. */
export interface DeadLetterStep {
  readonly kind: 'dead-letter';
  readonly deadLetter: DeadLetter;
  readonly expiresAt: number;
}

/** What becomes of the queue message. */
export type NextStep =
  | { readonly kind: 'done' }
  /** Back in the queue, shown again after `delaySeconds` (SQS's whole seconds). */
  | { readonly kind: 'retry'; readonly delaySeconds: number }
  | DeadLetterStep;

/** How one attempt moves its target's health. */
export interface HealthEffect {
  /** `failed` counts against the target (breaker, suspension); `retired` ends the counting (410). */
  readonly kind: 'delivered' | 'failed' | 'retired' | 'none';
  /** For `failed`: what went wrong, for the suspension's reason. */
  readonly detail?: string;
  /** A 429: no request to the target before this (epoch ms). */
  readonly throttledUntil?: number;
}

export interface Settlement {
  /** The attempt for the history; none when nothing was attempted. */
  readonly record?: AttemptRecord;
  /** The delivery's progress to keep before the next step is taken, and its expiry (epoch seconds). */
  readonly progress?: { readonly progress: DeliveryProgress; readonly expiresAt: number };
  readonly next: NextStep;
  readonly health: HealthEffect;
  /** A 410: the subscription is retired, for this reason. */
  readonly retireSubscription?: string;
}

const NO_CHANGE: HealthEffect = { kind: 'none' };
const DONE: NextStep = { kind: 'done' };

export function settleAttempt(
  attempt: SettleableAttempt,
  progress: DeliveryProgress | undefined,
  policy: SettlePolicy,
  now: number,
  random: () => number,
): Settlement {
  const { delivery, report } = attempt;
  // Not an attempt, so not a failure: it comes back soon, in a batch with time to send it.
  if ('outOfTime' in report)
    return { next: retryStep(delivery, OUT_OF_TIME_RETRY_MS, 'up', progress, policy, now), health: NO_CHANGE };
  const { at, latencyMs, status, answer, verdict } = report;
  const number = (progress?.failedAttempts ?? 0) + 1;
  const base = {
    subscriptionId: delivery.message.subscriptionId,
    deliveryId: delivery.message.deliveryId,
    attempt: number,
    at: new Date(at).toISOString(),
    latencyMs,
    ...(status === undefined ? {} : { status }),
    ...(answer === undefined ? {} : { answer }),
    ...eventsOf(delivery),
    ...(delivery.message.redriveOf ? { redriveOf: delivery.message.redriveOf } : {}),
  };
  if (report.freshToken) {
    // The try with the fresh token takes a rate slot of its own: the next one the rate allows,
    // and not in this second. Not the target's failure: its health is untouched.
    const rate = effectiveRatePerMinute(attempt.subscription.allowedRatePerMinute, attempt.target, now);
    const wait = Math.max(1000, rate === undefined ? 0 : 60_000 / rate);
    const record: AttemptRecord = {
      ...base,
      outcome: 'retrying',
      error: { code: 'rejected', detail: 'the target answered 401; trying again with a fresh access token' },
      nextAttemptAt: new Date(now + wait).toISOString(),
    };
    const saved = progressAfter(delivery, progress, record, report.rendering, policy);
    return {
      record,
      progress: saved,
      next: retryStep(delivery, wait, 'up', saved.progress, policy, now),
      health: NO_CHANGE,
    };
  }
  switch (verdict.kind) {
    case 'delivered':
      return { record: { ...base, outcome: 'delivered' }, next: DONE, health: { kind: 'delivered' } };
    case 'gone': {
      const record: AttemptRecord = {
        ...base,
        outcome: 'retired',
        error: { code: 'gone', detail: 'the target answered 410 Gone' },
      };
      return {
        record,
        next: deadLetterStep(
          delivery,
          'gone',
          'the target answered 410 Gone: the subscription is retired',
          progress,
          record,
          policy,
          now,
        ),
        health: { kind: 'retired' },
        retireSubscription: `The target answered 410 Gone at ${base.at}; Koerier no longer delivers to it.`,
      };
    }
    case 'rejected': {
      const record: AttemptRecord = {
        ...base,
        outcome: 'dead-lettered',
        error: { code: verdict.code, detail: verdict.detail },
      };
      return {
        record,
        next: deadLetterStep(delivery, verdict.code, verdict.detail, progress, record, policy, now),
        health: NO_CHANGE,
      };
    }
    case 'failed':
    case 'throttled': {
      const error: { code: FailureCode; detail: string } =
        verdict.kind === 'failed'
          ? { code: verdict.code, detail: verdict.detail }
          : { code: 'throttled', detail: 'the target answered 429 Too Many Requests' };
      const retryAfterMs = verdict.retryAfterMs;
      // Every 429 slows the subscription down (WH-2, EDU-10); without a Retry-After the pause is
      // the schedule's wait for this attempt. A credential or claim-check failure is not the target's.
      const health: HealthEffect =
        verdict.kind === 'throttled'
          ? { kind: 'none', throttledUntil: now + (retryAfterMs ?? nominalDelayMs(number, policy.retry)) }
          : verdict.code === 'credential' || verdict.code === 'claim-check'
            ? NO_CHANGE
            : { kind: 'failed', detail: verdict.detail };
      const deadline = retryDeadline(
        delivery.message.createdAt,
        policy.retry,
        policy.keyTtlSeconds,
        attempt.subscription.retryWindowSeconds,
      );
      const next =
        delivery.receiveCount >= policy.maxReceiveCount
          ? undefined
          : nextAttemptAt({
              attempt: number,
              now,
              deadline,
              schedule: policy.retry,
              random,
              ...(retryAfterMs === undefined ? {} : { notBefore: now + retryAfterMs }),
            });
      if (next === undefined) {
        const record: AttemptRecord = { ...base, outcome: 'dead-lettered', error };
        return {
          record,
          next: deadLetterStep(
            delivery,
            'exhausted',
            `retries are over (${number} attempts); last: ${error.detail}`,
            progress,
            record,
            policy,
            now,
          ),
          health,
        };
      }
      const record: AttemptRecord = {
        ...base,
        outcome: 'retrying',
        error,
        nextAttemptAt: new Date(next).toISOString(),
      };
      // A wait longer than one visibility timeout is served in hops: the progress says when it ends.
      const saved = progressAfter(
        delivery,
        progress,
        record,
        report.rendering,
        policy,
        next - now > MAX_DELAY_SECONDS * 1000 ? next : undefined,
      );
      // A Retry-After is a minimum; a backoff is approximate anyway (it carries jitter).
      return {
        record,
        progress: saved,
        next: retryStep(
          delivery,
          next - now,
          retryAfterMs === undefined ? 'nearest' : 'up',
          saved.progress,
          policy,
          now,
        ),
        health,
      };
    }
  }
}

/**
 * Back in the queue after `ms`. SQS delays are whole seconds: rounded `up` unless told otherwise,
 * so a wait is never cut short. Never past the key deadline: the message then comes back to be
 * dead-lettered, not hours later. On the message's last receive it is not put back: the queue
 * would move it to its dead-letter queue, where the subscriber never sees it; it becomes one of
 * the app's dead letters (EDU-18).
 */
export function retryStep(
  delivery: QueuedDelivery,
  ms: number,
  rounding: 'up' | 'nearest',
  progress: DeliveryProgress | undefined,
  policy: SettlePolicy,
  now: number,
): NextStep {
  if (delivery.receiveCount >= policy.maxReceiveCount)
    return deadLetterStep(delivery, 'exhausted', LAST_RECEIVE, progress, undefined, policy, now);
  const untilDeadline = keyDeadline(delivery.message.createdAt, policy.keyTtlSeconds) - now;
  const toSeconds = rounding === 'up' ? Math.ceil : Math.round;
  return {
    kind: 'retry',
    delaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(1, toSeconds(Math.min(ms, untilDeadline) / 1000))),
  };
}

/** The delivery as a dead letter: its events, its attempts so far (with `last`, the one just made) and why. */
export function deadLetterStep(
  delivery: QueuedDelivery,
  reason: DeadLetterReason,
  detail: string,
  progress: DeliveryProgress | undefined,
  last: AttemptRecord | undefined,
  policy: Pick<DeliveryPolicy, 'deadLetterRetentionSeconds'>,
  now: number,
): DeadLetterStep {
  const { message } = delivery;
  const deadLetter: DeadLetter = {
    subscriptionId: message.subscriptionId,
    deliveryId: message.deliveryId,
    events: message.events,
    createdAt: message.createdAt,
    deadLetteredAt: new Date(now).toISOString(),
    reason,
    detail,
    attempts: (progress?.failedAttempts ?? 0) + (last ? 1 : 0),
    lastAttempts: last
      ? withKeptAttempt(progress?.lastAttempts ?? [], last)
      : (progress?.lastAttempts ?? []).slice(-KEPT_ATTEMPTS),
    ...lineageOf(message),
  };
  return { kind: 'dead-letter', deadLetter, expiresAt: epochSeconds(now + policy.deadLetterRetentionSeconds * 1000) };
}

/** The progress after a failed attempt, with the rendering first kept (EDU-IDEM-11); it lives as long as the delivery's key. */
function progressAfter(
  delivery: QueuedDelivery,
  progress: DeliveryProgress | undefined,
  record: AttemptRecord,
  attempted: DeliveryRendering | undefined,
  policy: SettlePolicy,
  nextAttemptAt?: number,
): { progress: DeliveryProgress; expiresAt: number } {
  const rendering = progress?.rendering ?? attempted;
  const saved: DeliveryProgress = {
    deliveryId: delivery.message.deliveryId,
    failedAttempts: record.attempt,
    lastAttempts: withKeptAttempt(progress?.lastAttempts ?? [], record),
    ...(nextAttemptAt === undefined ? {} : { nextAttemptAt }),
    ...(rendering === undefined ? {} : { rendering }),
  };
  return { progress: saved, expiresAt: epochSeconds(delivery.message.createdAt + policy.keyTtlSeconds * 1000) };
}

/** The status reason of a subscription suspended because its target keeps failing (EDU-12). */
export function targetFailingReason(subscriptionId: string, failingSince: number, lastFailure: string): string {
  const since = new Date(failingSince).toISOString();
  return `No delivery has succeeded since ${since}; the last attempt failed: ${lastFailure}. Fix the target, then resume the subscription (POST /subscriptions/${subscriptionId}/resume).`;
}

function eventsOf(delivery: QueuedDelivery): Pick<AttemptRecord, 'events'> {
  const references = delivery.eventReferences ?? eventReferences(delivery.message.events);
  return references.length === 0 ? {} : { events: references };
}

/** DynamoDB TTL is epoch seconds. */
function epochSeconds(epochMs: number): number {
  return Math.ceil(epochMs / 1000);
}
