/**
 * Admission (WH-6, EDU-10, EDU-12): how many of a subscription's ready deliveries may go now, and
 * when the others come back. The breaker decides whether anything goes (closed), nothing (open),
 * or one probe (half-open, for the instance that takes the probe lease); the rate decides when each
 * admitted one goes. Slots are reserved with a conditional write on the target's shared state, so
 * instances racing for the same target never share a slot.
 */
import type { Clock } from '../ports/clock.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { TargetHealthStore } from './delivery-records.js';
import type { DeliveryPolicy } from './dispatch-ports.js';
import { breakerOf, effectiveRatePerMinute, planSends, type TargetState } from './target-health.js';

export interface Admission {
  /** The target state the admission was decided on. */
  readonly target: TargetState;
  /** The one admitted delivery is the half-open breaker's probe. */
  readonly probe: boolean;
  /** When `probe`: the end of its lease, as written (a release names it, so it can only end its own). */
  readonly probeUntil?: number;
  /** In-memory wait before each admitted delivery (its rate slot). */
  readonly waits: readonly number[];
  /** Visibility delay of each delivery not admitted. */
  readonly deferMs: readonly number[];
}

export interface AdmissionContext {
  readonly targets: Pick<TargetHealthStore, 'getTarget' | 'takeProbe' | 'releaseProbe' | 'reserveSendSlots'>;
  readonly policy: Pick<DeliveryPolicy, 'breaker' | 'rateHorizonMs' | 'sendTimeoutMs' | 'tokenTimeoutMs'>;
  readonly now: Clock;
  readonly random: () => number;
}

/** What a probe may take after its request is over: writing its progress and the target's new state on a busy table. */
const PROBE_SETTLE_MARGIN_MS = 5_000;

/**
 * How long the half-open probe holds the target. It must outlive the probe's worst case (a token
 * fetch and a refresh after a 401, the request, then the settle's writes): a lease that ends
 * before the failed probe's outcome is written lets a second probe go out on the old cool-down,
 * and a success there closes the breaker the failure should have reopened. An instance that dies
 * holding the lease costs the target one lease of waiting.
 */
export function probeLeaseMs(policy: Pick<DeliveryPolicy, 'sendTimeoutMs' | 'tokenTimeoutMs'>): number {
  return 2 * policy.tokenTimeoutMs + policy.sendTimeoutMs + PROBE_SETTLE_MARGIN_MS;
}

/**
 * When the deliveries held back behind a probe look again: when its answer is normally known (its
 * token was fetched before admission, so its request plus a second), not when its lease ends, so
 * a successful probe is followed within seconds. A probe still out by then just holds them again.
 */
function probeComebackMs(policy: Pick<DeliveryPolicy, 'sendTimeoutMs'>, random: () => number): number {
  return policy.sendTimeoutMs + 1_000 + random() * 5_000;
}

/**
 * How many of `count` deliveries may go now — one in-memory wait each, for its rate slot — and how
 * long the others are put back: until the breaker's cool-down ends, the probe is over, or their
 * rate slot.
 */
export async function admit(
  subscriptionId: string,
  subscription: Pick<Subscription, 'allowedRatePerMinute'>,
  count: number,
  initialTarget: TargetState,
  context: AdmissionContext,
): Promise<Admission> {
  const { targets, policy, now: clock, random } = context;
  let target = initialTarget;
  let probeUntil: number | undefined;
  for (let round = 0; round < 3; round++) {
    const now = clock();
    const breaker = breakerOf(target, policy.breaker, now);
    if (breaker.state === 'open') {
      // Spread the comeback over a tenth of the cool-down (at most half a minute).
      const spread = Math.min(30_000, (breaker.until - now) / 10);
      return {
        target,
        probe: false,
        waits: [],
        deferMs: Array.from({ length: count }, () => breaker.until - now + random() * spread),
      };
    }
    let allowed = count;
    if (breaker.state === 'half-open') {
      if (probeUntil === undefined) {
        const until = now + probeLeaseMs(policy);
        if (await targets.takeProbe(subscriptionId, now, until, breaker.lastFailureAt)) probeUntil = until;
      }
      allowed = probeUntil === undefined ? 0 : 1;
    }
    const rate = effectiveRatePerMinute(subscription.allowedRatePerMinute, target, now);
    const plan = planSends({
      count: allowed,
      now,
      ratePerMinute: rate,
      nextSendAt: target.nextSendAt,
      horizonMs: policy.rateHorizonMs,
    });
    const deferMs = [
      ...plan.deferred,
      ...Array.from({ length: count - allowed }, () => probeComebackMs(policy, random)),
    ];
    if (
      plan.nextSendAt === undefined ||
      (await targets.reserveSendSlots(subscriptionId, target.nextSendAt, plan.nextSendAt))
    ) {
      if (probeUntil !== undefined && plan.admitted.length === 0) {
        // The probe's rate slot is beyond the horizon: it waits in the queue, not holding the target meanwhile.
        await targets.releaseProbe(subscriptionId, probeUntil);
        return { target, probe: false, waits: [], deferMs };
      }
      return {
        target,
        probe: probeUntil !== undefined,
        ...(probeUntil === undefined ? {} : { probeUntil }),
        waits: plan.admitted,
        deferMs,
      };
    }
    // Another instance reserved meanwhile: plan again on what it wrote.
    target = await targets.getTarget(subscriptionId);
  }
  if (probeUntil !== undefined) await targets.releaseProbe(subscriptionId, probeUntil);
  return { target, probe: false, waits: [], deferMs: Array.from({ length: count }, () => 1000 + random() * 2000) };
}
