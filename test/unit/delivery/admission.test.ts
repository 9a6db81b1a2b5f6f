/**
 * Admission (WH-6, EDU-10, EDU-12) against a fake of only the three target-health calls it makes.
 */
import { describe, expect, it } from 'vitest';
import { admit, probeLeaseMs, type AdmissionContext } from '../../../functions/core/delivery/admission.js';
import { HEALTHY, type TargetState } from '../../../functions/core/delivery/target-health.js';

const T0 = 1_000_000;
const policy: AdmissionContext['policy'] = {
  breaker: { failureThreshold: 5, cooldownSeconds: 60 },
  rateHorizonMs: 5_000,
  sendTimeoutMs: 10_000,
  tokenTimeoutMs: 5_000,
};

function targets(options: { probe?: boolean; reservations?: boolean[]; stored?: TargetState } = {}) {
  const calls: string[] = [];
  const reservations = [...(options.reservations ?? [])];
  const fake: AdmissionContext['targets'] = {
    getTarget: async () => (calls.push('getTarget'), options.stored ?? HEALTHY),
    takeProbe: async () => (calls.push('takeProbe'), options.probe ?? true),
    releaseProbe: async (_id, until) => void calls.push(`releaseProbe ${until - T0}`),
    reserveSendSlots: async (_id, expected, next) => (
      calls.push(`reserve ${expected ?? '-'}→${next}`),
      reservations.shift() ?? true
    ),
  };
  return { fake, calls };
}

const context = (fake: AdmissionContext['targets']): AdmissionContext => ({
  targets: fake,
  policy,
  now: () => T0,
  random: () => 0.5,
});
const open: TargetState = { consecutiveFailures: 5, lastFailureAt: T0 - 30_000 };
const halfOpen: TargetState = { consecutiveFailures: 5, lastFailureAt: T0 - 60_000 };

describe('admission', () => {
  it('EDU-12: an open breaker admits nothing and puts every delivery back until its cool-down ends, spread a little', async () => {
    const { fake, calls } = targets();
    const admission = await admit('sub-1', {}, 2, open, context(fake));
    expect(admission).toEqual({
      target: open,
      probe: false,
      waits: [],
      deferMs: [30_000 + 0.5 * 3_000, 30_000 + 0.5 * 3_000],
    });
    expect(calls).toEqual([]);
  });

  it('EDU-12: half-open, the instance that takes the probe sends one delivery; the others look again when its answer is due', async () => {
    const { fake, calls } = targets({ probe: true });
    const admission = await admit('sub-1', {}, 3, halfOpen, context(fake));
    // The request's timeouts (10 s) plus 1 s, plus random 0.5 × 5 s.
    expect(admission).toMatchObject({ probe: true, probeUntil: T0 + 25_000, waits: [0], deferMs: [13_500, 13_500] });
    expect(calls).toEqual(['takeProbe']);
  });

  it('EDU-12: half-open, while another instance holds the probe, nothing goes', async () => {
    const { fake } = targets({ probe: false });
    expect(await admit('sub-1', {}, 1, halfOpen, context(fake))).toMatchObject({
      probe: false,
      waits: [],
      deferMs: [13_500],
    });
  });

  it('EDU-12: a probe whose failure is written late still holds the target: no second probe goes out until its lease, which outlives two token fetches, the request and 5 s, ends', async () => {
    // The lease as the table keeps it: taken only when there is none or it has ended.
    let leaseUntil: number | undefined;
    const lease: AdmissionContext['targets'] = {
      getTarget: async () => halfOpen,
      takeProbe: async (_id, now, until) =>
        leaseUntil === undefined || leaseUntil < now ? ((leaseUntil = until), true) : false,
      releaseProbe: async () => {
        throw new Error('no release: the probe is out');
      },
      reserveSendSlots: async () => true,
    };
    const at = (now: number) => admit('sub-1', {}, 1, halfOpen, { ...context(lease), now: () => now });
    expect((await at(T0)).probe).toBe(true);
    // The probe's request has ended (10 s) but its settle lags: the held-back deliveries come back
    // and must not probe on the old cool-down, nor at any moment of the lease.
    for (const lag of [11_000 + 5_000, 2 * 5_000 + 10_000 + 4_999])
      expect(await at(T0 + lag)).toMatchObject({ probe: false, waits: [] });
    expect(probeLeaseMs(policy)).toBe(25_000);
    // An instance that died holding it costs the target one lease.
    expect((await at(T0 + 25_001)).probe).toBe(true);
  });

  it('EDU-12, WH-6: a probe whose rate slot is beyond the horizon goes back to the queue and ends its lease, not holding the target meanwhile', async () => {
    const { fake, calls } = targets({ probe: true });
    const admission = await admit(
      'sub-1',
      { allowedRatePerMinute: 60 },
      2,
      { ...halfOpen, nextSendAt: T0 + 8_000 },
      context(fake),
    );
    expect(admission).toEqual({
      target: { ...halfOpen, nextSendAt: T0 + 8_000 },
      probe: false,
      waits: [],
      deferMs: [8_000, 13_500],
    });
    expect(calls).toEqual(['takeProbe', 'releaseProbe 25000']);
  });

  it('EDU-12, WH-6: a probe that lost its rate slot three times ends its lease', async () => {
    const { fake, calls } = targets({ probe: true, reservations: [false, false, false], stored: halfOpen });
    expect(await admit('sub-1', { allowedRatePerMinute: 60 }, 1, halfOpen, context(fake))).toMatchObject({
      probe: false,
      waits: [],
    });
    expect(calls.filter((call) => call.startsWith('takeProbe') || call.startsWith('releaseProbe'))).toEqual([
      'takeProbe',
      'releaseProbe 25000',
    ]);
  });

  it('WH-6: under a rate the slots are reserved; when another instance moved them first, admission plans again on what it wrote', async () => {
    const { fake, calls } = targets({
      reservations: [false, true],
      stored: { consecutiveFailures: 0, nextSendAt: T0 + 1_000 },
    });
    const admission = await admit('sub-1', { allowedRatePerMinute: 60 }, 2, HEALTHY, context(fake));
    expect(admission.waits).toEqual([1_000, 2_000]);
    expect(calls).toEqual([`reserve -→${T0 + 2_000}`, 'getTarget', `reserve ${T0 + 1_000}→${T0 + 3_000}`]);
  });

  it('WH-6: a race lost three times admits nothing and puts the deliveries back for a second or two, releasing no probe it never took', async () => {
    const { fake, calls } = targets({ reservations: [false, false, false], stored: HEALTHY });
    expect(await admit('sub-1', { allowedRatePerMinute: 60 }, 1, HEALTHY, context(fake))).toMatchObject({
      waits: [],
      deferMs: [2_000],
    });
    expect(calls.filter((call) => call.startsWith('releaseProbe'))).toEqual([]);
  });
});
