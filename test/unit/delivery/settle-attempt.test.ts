/**
 * What an attempt settles, as tables: the pure decision of the delivery function (WH-2, WH-6,
 * EDU-10, EDU-12, EDU-18, EDU-IDEM-12), with no store, no queue and no target. The dispatcher that
 * applies these steps: dispatcher.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../../functions/core/delivery/attempt-outcome.js';
import type { AttemptRecord, DeliveryProgress } from '../../../functions/core/delivery/delivery-records.js';
import type { QueuedDelivery } from '../../../functions/core/delivery/dispatch-ports.js';
import {
  deadLetterStep,
  LAST_RECEIVE,
  MAX_DELAY_SECONDS,
  OUT_OF_TIME_RETRY_MS,
  retryStep,
  settleAttempt,
  type AttemptReport,
  type SettlePolicy,
} from '../../../functions/core/delivery/settle-attempt.js';
import { HEALTHY, type TargetState } from '../../../functions/core/delivery/target-health.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const DAY = 86_400;
const policy: SettlePolicy = {
  retry: { initialDelaySeconds: 30, maxDelaySeconds: 3600, windowSeconds: DAY },
  keyTtlSeconds: 7 * DAY,
  maxReceiveCount: 50,
  deadLetterRetentionSeconds: DAY,
};
const half = () => 0.5;

function delivery(receiveCount = 1, createdAt = T0): QueuedDelivery {
  return {
    messageId: 'm-1',
    receiveCount,
    message: {
      version: 1,
      deliveryId: '0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d',
      subscriptionId: 'sub-1',
      events: ['{"id":"1"}'],
      createdAt,
    },
  };
}

function answered(verdict: Verdict, extra: Partial<Extract<AttemptReport, { at: number }>> = {}): AttemptReport {
  return { at: T0, latencyMs: 12, status: 200, verdict, ...extra };
}

function settle(
  report: AttemptReport,
  options: {
    receiveCount?: number;
    createdAt?: number;
    progress?: DeliveryProgress;
    allowedRatePerMinute?: number;
    target?: TargetState;
    policy?: Partial<SettlePolicy>;
  } = {},
) {
  const subscription =
    options.allowedRatePerMinute === undefined ? {} : { allowedRatePerMinute: options.allowedRatePerMinute };
  return settleAttempt(
    {
      delivery: delivery(options.receiveCount, options.createdAt),
      subscription,
      target: options.target ?? HEALTHY,
      report,
    },
    options.progress,
    { ...policy, ...options.policy },
    T0,
    half,
  );
}

const failed = (detail = 'the target answered 500', retryAfterMs?: number): Verdict => ({
  kind: 'failed',
  code: 'server-error',
  detail,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});
const LAST = policy.maxReceiveCount;

describe('settleAttempt: the next step of the queue message (WH-2, WH-3, WH-6, EDU-10, EDU-18, CARD-5)', () => {
  it.each([
    ['WH-2: a 2xx is delivered', answered({ kind: 'delivered' }), {}, { kind: 'done' }, 'delivered', 'delivered'],
    [
      'WH-2: a 410 retires the subscription and dead-letters the delivery',
      answered({ kind: 'gone' }),
      {},
      { kind: 'dead-letter', deadLetter: expect.objectContaining({ reason: 'gone', attempts: 1 }) },
      'retired',
      'retired',
    ],
    [
      'WH-2: a 415 is a dead letter at once',
      answered({ kind: 'rejected', code: 'unsupported-media-type', detail: 'the target answered 415' }),
      {},
      { kind: 'dead-letter', deadLetter: expect.objectContaining({ reason: 'unsupported-media-type' }) },
      'dead-lettered',
      'none',
    ],
    [
      'WH-2, EDU-18: a 5xx is retried after the backoff (30 s, jitter at its middle)',
      answered(failed()),
      {},
      { kind: 'retry', delaySeconds: 30 },
      'retrying',
      'failed',
    ],
    [
      'WH-2: a 503 Retry-After is the earliest next attempt (plus up to 10% spread)',
      answered(failed('the target answered 503', 600_000)),
      {},
      { kind: 'retry', delaySeconds: 630 },
      'retrying',
      'failed',
    ],
    [
      "WH-3: a credential failure is retried and is not the target's failure",
      answered({ kind: 'failed', code: 'credential', detail: 'no token' }),
      {},
      { kind: 'retry', delaySeconds: 30 },
      'retrying',
      'none',
    ],
    [
      "WH-2, EDU-10: a 429 without Retry-After waits the schedule's delay",
      answered({ kind: 'throttled' }),
      {},
      { kind: 'retry', delaySeconds: 30 },
      'retrying',
      'none',
    ],
    [
      'WH-2: a 429 with Retry-After waits at least that long',
      answered({ kind: 'throttled', retryAfterMs: 120_000 }),
      {},
      { kind: 'retry', delaySeconds: 126 },
      'retrying',
      'none',
    ],
    [
      'EDU-18: a transient failure on the last receive is a dead letter: retries are over',
      answered(failed()),
      { receiveCount: LAST },
      {
        kind: 'dead-letter',
        deadLetter: expect.objectContaining({
          reason: 'exhausted',
          detail: 'retries are over (1 attempts); last: the target answered 500',
        }),
      },
      'dead-lettered',
      'failed',
    ],
    [
      'EDU-18: a transient failure after the retry window is a dead letter',
      answered(failed()),
      { createdAt: T0 - DAY * 1000 },
      { kind: 'dead-letter', deadLetter: expect.objectContaining({ reason: 'exhausted' }) },
      'dead-lettered',
      'failed',
    ],
    [
      'WH-6, WH-3: a 401 answered with a fresh token waits for the next rate slot (1/min: 60 s)',
      answered({ kind: 'rejected', code: 'rejected', detail: '401' }, { status: 401, freshToken: true }),
      { allowedRatePerMinute: 1 },
      { kind: 'retry', delaySeconds: 60 },
      'retrying',
      'none',
    ],
    [
      'WH-3: a 401 answered with a fresh token, without a rate, waits a second',
      answered({ kind: 'rejected', code: 'rejected', detail: '401' }, { status: 401, freshToken: true }),
      {},
      { kind: 'retry', delaySeconds: 1 },
      'retrying',
      'none',
    ],
    [
      'EDU-18: a 401 answered with a fresh token on the last receive is a dead letter',
      answered({ kind: 'rejected', code: 'rejected', detail: '401' }, { status: 401, freshToken: true }),
      { receiveCount: LAST },
      {
        kind: 'dead-letter',
        deadLetter: expect.objectContaining({ reason: 'exhausted', detail: LAST_RECEIVE, attempts: 1 }),
      },
      'retrying',
      'none',
    ],
  ] as const)('%s', (_title, report, options, next, recordOutcome, health) => {
    const settlement = settle(report, options);
    expect(settlement.next).toMatchObject(next);
    expect(settlement.record?.outcome).toBe(recordOutcome);
    expect(settlement.health.kind).toBe(health);
  });

  it.each([
    [
      'CARD-5: not attempted for want of time: back shortly, not counted',
      1,
      { kind: 'retry', delaySeconds: OUT_OF_TIME_RETRY_MS / 1000 },
    ],
    [
      'EDU-18: not attempted for want of time on the last receive: a dead letter',
      LAST,
      {
        kind: 'dead-letter',
        deadLetter: expect.objectContaining({ reason: 'exhausted', detail: LAST_RECEIVE, attempts: 0 }),
      },
    ],
  ] as const)('%s', (_title, receiveCount, next) => {
    const settlement = settle({ outOfTime: true }, { receiveCount });
    expect(settlement.next).toMatchObject(next);
    expect(settlement).toMatchObject({ health: { kind: 'none' } });
    expect(settlement.record).toBeUndefined();
  });
});

describe('settleAttempt: the record, the progress and the health effect', () => {
  it('EDU-18: a retried attempt is kept in the progress (at most 10) until the key expires; the record says when the next is due', () => {
    const earlier: AttemptRecord[] = Array.from({ length: 10 }, (_, index) => ({
      subscriptionId: 'sub-1',
      deliveryId: 'd',
      attempt: index + 1,
      at: 'x',
      outcome: 'retrying',
      latencyMs: 1,
    }));
    const settlement = settle(answered(failed()), {
      receiveCount: 11,
      progress: { deliveryId: 'd', failedAttempts: 10, lastAttempts: earlier },
    });
    expect(settlement.record).toEqual({
      subscriptionId: 'sub-1',
      deliveryId: '0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d',
      attempt: 11,
      at: new Date(T0).toISOString(),
      latencyMs: 12,
      status: 200,
      outcome: 'retrying',
      error: { code: 'server-error', detail: 'the target answered 500' },
      nextAttemptAt: new Date(T0 + 3600_000).toISOString(),
    });
    expect(settlement.progress?.progress.failedAttempts).toBe(11);
    expect(settlement.progress?.progress.lastAttempts.map((attempt) => attempt.attempt)).toEqual([
      2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
    ]);
    expect(settlement.progress?.expiresAt).toBe((T0 + policy.keyTtlSeconds * 1000) / 1000);
  });

  it('EDU-18: a wait longer than one visibility timeout is served in hops, the progress saying when it ends', () => {
    const settlement = settle(answered(failed()), {
      policy: { retry: { initialDelaySeconds: DAY, maxDelaySeconds: DAY, windowSeconds: 7 * DAY } },
    });
    expect(settlement.next).toEqual({ kind: 'retry', delaySeconds: MAX_DELAY_SECONDS });
    expect(settlement.progress?.progress.nextAttemptAt).toBe(T0 + DAY * 1000);
  });

  it("WH-2: a 410 names when the target said so in the subscription's status", () => {
    expect(settle(answered({ kind: 'gone' }, { status: 410 })).retireSubscription).toBe(
      `The target answered 410 Gone at ${new Date(T0).toISOString()}; Koerier no longer delivers to it.`,
    );
  });

  it.each([
    [
      "WH-2, EDU-10: a 429 without Retry-After pauses the target for the schedule's wait",
      { kind: 'throttled' } as const,
      T0 + 30_000,
    ],
    [
      'WH-2: a 429 with Retry-After pauses the target until then',
      { kind: 'throttled', retryAfterMs: 120_000 } as const,
      T0 + 120_000,
    ],
    ['WH-2: a 503 with Retry-After does not throttle the target', failed('503', 600_000), undefined],
  ])('%s', (_title, verdict, throttledUntil) => {
    expect(settle(answered(verdict)).health.throttledUntil).toBe(throttledUntil);
  });
});

describe('retryStep: the visibility delay (EDU-18, EDU-IDEM-12)', () => {
  it.each([
    ['a wait is rounded up to whole seconds', 1_400, 'up', 1, T0, { kind: 'retry', delaySeconds: 2 }],
    ['a backoff is rounded to the nearest second', 1_400, 'nearest', 1, T0, { kind: 'retry', delaySeconds: 1 }],
    ['never less than a second', 10, 'up', 1, T0, { kind: 'retry', delaySeconds: 1 }],
    [
      'never more than SQS allows: a longer wait takes several hops',
      100 * DAY * 1000,
      'up',
      1,
      T0,
      { kind: 'retry', delaySeconds: MAX_DELAY_SECONDS },
    ],
    [
      'EDU-IDEM-12: never past the key deadline',
      6 * 3600_000,
      'up',
      2,
      T0 - 7 * DAY * 1000 + 3600_000,
      { kind: 'retry', delaySeconds: 3600 - 60 },
    ],
    [
      "EDU-18: on the last receive a dead letter, not the queue's dead-letter queue",
      1_000,
      'up',
      LAST,
      T0,
      { kind: 'dead-letter', deadLetter: expect.objectContaining({ reason: 'exhausted', detail: LAST_RECEIVE }) },
    ],
  ] as const)('%s', (_title, ms, rounding, receiveCount, createdAt, next) => {
    expect(retryStep(delivery(receiveCount, createdAt), ms, rounding, undefined, policy, T0)).toMatchObject(next);
  });
});

describe('deadLetterStep', () => {
  it('EDU-18: a dead letter keeps the events, every attempt counted and the last ten, until its retention ends', () => {
    const progress: DeliveryProgress = {
      deliveryId: 'd',
      failedAttempts: 12,
      lastAttempts: Array.from({ length: 10 }, (_, index) => ({
        subscriptionId: 'sub-1',
        deliveryId: 'd',
        attempt: index + 3,
        at: 'x',
        outcome: 'retrying',
        latencyMs: 1,
      })),
    };
    const last: AttemptRecord = {
      subscriptionId: 'sub-1',
      deliveryId: 'd',
      attempt: 13,
      at: 'y',
      outcome: 'dead-lettered',
      latencyMs: 1,
    };
    const step = deadLetterStep(
      { ...delivery(), message: { ...delivery().message, redriveOf: 'old' } },
      'rejected',
      'the target answered 400',
      progress,
      last,
      policy,
      T0,
    );
    expect(step.expiresAt).toBe((T0 + DAY * 1000) / 1000);
    expect(step.deadLetter).toMatchObject({
      events: ['{"id":"1"}'],
      createdAt: T0,
      deadLetteredAt: new Date(T0).toISOString(),
      reason: 'rejected',
      attempts: 13,
      redriveOf: 'old',
    });
    expect(step.deadLetter.lastAttempts.map((attempt) => attempt.attempt)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  });
});
