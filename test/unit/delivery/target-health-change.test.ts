/**
 * What a subscription group's attempts come to for its target (WH-2, EDU-10, EDU-12), as a table:
 * pure, no store. The dispatcher that writes it: dispatcher-paths.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { HealthEffect } from '../../../functions/core/delivery/settle-attempt.js';
import { targetHealthChange } from '../../../functions/core/delivery/target-health-change.js';
import { HEALTHY, type TargetState } from '../../../functions/core/delivery/target-health.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');

describe("targetHealthChange: what a group's attempts do to the target (WH-2, EDU-10, EDU-12)", () => {
  const failing: TargetState = { consecutiveFailures: 3, lastFailureAt: T0 - 1000, failingSince: T0 - 60_000 };
  const effect = (kind: HealthEffect['kind'], extra: Partial<HealthEffect> = {}): HealthEffect => ({ kind, ...extra });
  it.each([
    [
      'EDU-12: a success closes the breaker of a failing target',
      [effect('failed', { detail: 'a' }), effect('delivered')],
      failing,
      false,
      { record: { kind: 'success' } },
    ],
    [
      'EDU-12: a success at a healthy target writes nothing',
      [effect('delivered')],
      HEALTHY,
      false,
      { record: { kind: 'none' } },
    ],
    [
      'EDU-12: transient failures are counted, the last one named',
      [effect('failed', { detail: 'a' }), effect('failed', { detail: 'b' })],
      HEALTHY,
      true,
      { record: { kind: 'failures', count: 2, lastFailure: 'b', probe: true } },
    ],
    [
      'WH-2: after a 410 the failures are not counted',
      [effect('failed', { detail: 'a' }), effect('retired')],
      HEALTHY,
      false,
      { record: { kind: 'none' } },
    ],
    [
      "review #8: what is not the target's fault counts neither way",
      [effect('none')],
      failing,
      false,
      { record: { kind: 'none' } },
    ],
    [
      'WH-2, EDU-10: the latest 429 pause wins and the rate halves',
      [effect('none', { throttledUntil: T0 + 5_000 }), effect('none', { throttledUntil: T0 + 9_000 })],
      HEALTHY,
      false,
      { throttle: { pauseUntil: T0 + 9_000, throttle: { ratePerMinute: 60, since: T0 } }, record: { kind: 'none' } },
    ],
  ] as const)('%s', (_title, effects, target, probe, change) => {
    expect(targetHealthChange(effects, { target, probe }, undefined, T0)).toEqual(change);
  });

  it('EDU-12: a probe that told nothing about the target (not sent, a 429) ends its lease; one that failed or succeeded leaves that to its outcome', () => {
    const probe = { target: failing, probe: true, probeUntil: T0 + 25_000 };
    expect(targetHealthChange([effect('none')], probe, undefined, T0)).toEqual({
      record: { kind: 'release-probe', until: T0 + 25_000 },
    });
    expect(targetHealthChange([effect('none', { throttledUntil: T0 + 5_000 })], probe, undefined, T0).record).toEqual({
      kind: 'release-probe',
      until: T0 + 25_000,
    });
    expect(targetHealthChange([effect('failed', { detail: 'a' })], probe, undefined, T0).record).toMatchObject({
      kind: 'failures',
      probe: true,
    });
    expect(targetHealthChange([effect('delivered')], probe, undefined, T0).record).toEqual({ kind: 'success' });
  });
});
