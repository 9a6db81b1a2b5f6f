/**
 * The lean clients' retry quota (functions/aws/lean-client-support.ts), the SDK's standard mode as
 * the lockfile's @smithy/core has it: what each kind of retry costs and what successes give back.
 * dynamodb-requests-answers.test.ts compares a whole failing spell with the SDK's client.
 */
import { describe, expect, it } from 'vitest';
import { RetryQuota } from '../../../functions/aws/lean-client-support.js';

describe('issue 15: the lean clients’ retry quota', () => {
  it('issue 15: 500 tokens pay for 100 throttled retries at 5 each, or 35 transient ones at 14, and none past that', () => {
    const throttled = new RetryQuota();
    const throttlingCosts = Array.from({ length: 101 }, () => throttled.take('throttling'));
    expect(throttlingCosts.slice(0, 100).every((cost) => cost === 5)).toBe(true);
    expect(throttlingCosts[100]).toBeUndefined();
    const transient = new RetryQuota();
    const transientCosts = Array.from({ length: 36 }, () => transient.take('transient'));
    expect(transientCosts.filter((cost) => cost === 14)).toHaveLength(35);
    expect(transientCosts[35]).toBeUndefined();
    // A refusal takes nothing: the 10 tokens left still pay for two throttled retries.
    expect([transient.available, transient.take('throttling'), transient.take('throttling'), transient.take('throttling')]).toEqual([10, 5, 5, undefined]);
  });

  it('issue 15: a success gives back what its retry took, or 1 without a retry, never above 500', () => {
    const quota = new RetryQuota();
    const cost = quota.take('transient');
    quota.giveBack(undefined);
    expect(quota.available).toBe(487);
    quota.giveBack(cost);
    expect(quota.available).toBe(500);
    quota.giveBack(undefined);
    expect(quota.available).toBe(500);
  });
});
