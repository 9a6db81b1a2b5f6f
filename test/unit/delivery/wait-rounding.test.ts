/**
 * How a wait becomes a queue delay in whole seconds. A wait that is a minimum — a Retry-After, a
 * rate slot, a cool-down, a wait already promised in the delivery's progress — is rounded up, so
 * the delivery never comes back early; a jittered backoff is approximate anyway and is rounded to
 * the nearest second. Written where `npm run mutate` showed the rounding mode unpinned
 * (docs/MUTATION.md); harness in dispatcher-harness.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../../functions/core/delivery/attempt-outcome.js';
import type { QueuedDelivery } from '../../../functions/core/delivery/dispatch-ports.js';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import {
  settleAttempt,
  type AttemptReport,
  type SettlePolicy,
} from '../../../functions/core/delivery/settle-attempt.js';
import { HEALTHY } from '../../../functions/core/delivery/target-health.js';
import { DAY, setup, SUB, T0, task } from './dispatcher-harness.js';

const policy: SettlePolicy = {
  retry: { initialDelaySeconds: 30, maxDelaySeconds: 3600, windowSeconds: DAY },
  keyTtlSeconds: 7 * DAY,
  maxReceiveCount: 50,
  deadLetterRetentionSeconds: DAY,
};

const delivery: QueuedDelivery = {
  messageId: 'm-1',
  receiveCount: 1,
  message: {
    version: 1,
    deliveryId: '0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d',
    subscriptionId: SUB,
    events: ['{"id":"1"}'],
    createdAt: T0,
  },
};

function settle(report: AttemptReport, options: { allowedRatePerMinute?: number; random?: () => number } = {}) {
  const subscription =
    options.allowedRatePerMinute === undefined ? {} : { allowedRatePerMinute: options.allowedRatePerMinute };
  return settleAttempt(
    { delivery, subscription, target: HEALTHY, report },
    undefined,
    policy,
    T0,
    options.random ?? (() => 0.5),
  ).next;
}

const answered = (verdict: Verdict, extra: Partial<Extract<AttemptReport, { at: number }>> = {}): AttemptReport => ({
  at: T0,
  latencyMs: 12,
  status: 500,
  verdict,
  ...extra,
});

describe('a wait in whole seconds', () => {
  it('WH-2: a Retry-After of one second (plus its 5 % spread: 1.05 s) comes back after 2 s, never after 1', () => {
    const next = settle(answered({ kind: 'throttled', retryAfterMs: 1000 }, { status: 429 }));
    expect(next).toEqual({ kind: 'retry', delaySeconds: 2 });
  });

  it('WH-2: a jittered backoff (30 s × 1.004 = 30.12 s) is rounded to the nearest second, 30 s', () => {
    const next = settle(answered({ kind: 'failed', code: 'server-error', detail: 'the target answered 500' }), {
      random: () => 0.51,
    });
    expect(next).toEqual({ kind: 'retry', delaySeconds: 30 });
  });

  it('WH-6: a try with a fresh token under 11 requests a minute waits for the next slot (5.45 s), rounded up to 6 s', () => {
    const next = settle(
      answered({ kind: 'rejected', code: 'rejected', detail: '401' }, { status: 401, freshToken: true }),
      { allowedRatePerMinute: 11 },
    );
    expect(next).toEqual({ kind: 'retry', delaySeconds: 6 });
  });

  it('WH-2: a delivery received 5.4 s before the wait its progress promised goes back for 6 s, not 5', async () => {
    const { deps, store, sent } = setup();
    const early = task({}, 2);
    const { deliveryId } = JSON.parse(early.body) as { deliveryId: string };
    await store.putProgress(SUB, { deliveryId, failedAttempts: 1, lastAttempts: [], nextAttemptAt: T0 + 5_400 }, 0);
    const outcome = await dispatchBatch([early], deps);
    expect(sent).toEqual([]);
    expect(outcome.decisions).toEqual([{ messageId: early.messageId, action: 'retry', delaySeconds: 6 }]);
  });

  it('EDU-12: with 40.3 s of cool-down left (plus 2.015 s of spread) a delivery goes back for 43 s, not 42', async () => {
    const { deps, store, sent } = setup();
    store.target = { consecutiveFailures: 5, lastFailureAt: T0 - 19_700 };
    const deferred = task();
    const outcome = await dispatchBatch([deferred], deps);
    expect(sent).toEqual([]);
    expect(outcome.decisions).toEqual([{ messageId: deferred.messageId, action: 'retry', delaySeconds: 43 }]);
  });
});
