/**
 * Which of Koerier's operational notices (core/operations) call for an out-of-band alert to the
 * subscription's contacts (issue 30 item 3, SELF-3), and the decorator that raises them: the
 * delivery function tells its notices as before, and each one that is an alert also goes to the
 * alerts queue, where the alerts function (send-alerts.ts) rate-limits, digests and sends them.
 *
 * - `suspended`: the target kept failing (or the subscription lacks an acceptable credential, then
 *   `credentials-failing`).
 * - `consent-lost`: the target answered 410 Gone, which withdraws its consent (WH-4): retired.
 * - `credentials-failing`: suspended for want of an acceptable credential, or a delivery
 *   dead-lettered because the target answered 401 or 403 (the token Koerier sends is refused).
 * - `entitlement-lost`: a delivery withheld because the owner may no longer receive its events
 *   (EDU-7); not told as an event, so the delivery function raises it with `alertOnly`.
 * - `dead-lettering`: every told dead letter is a signal; the alerts function counts them per
 *   subscription and alerts only above the subscription's threshold.
 */
import { createHash } from 'node:crypto';
import { uuidFromHash } from '../ids/stable-uuid.js';
import type { Log } from '../ports/log.js';
import {
  operationalEventTypes,
  type OperationalEvents,
  type OperationalNotice,
} from '../operations/operational-events.js';

export const ALERT_KINDS = [
  'suspended',
  'dead-lettering',
  'consent-lost',
  'entitlement-lost',
  'credentials-failing',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** One occurrence that may call for an alert, as it travels on the alerts queue (JSON). */
export interface AlertSignal {
  /** Derived from the notice's own occurrence: a retried telling raises the same signal. */
  readonly id: string;
  readonly kind: AlertKind;
  readonly subscriptionId: string;
  readonly owner: string;
  /** ISO 8601. */
  readonly at: string;
  /** In words for the subscriber (the status reason, the dead letter's detail); never event data. */
  readonly detail: string;
}

/** The port: puts signals on the alerts queue. Resolves once they are stored. */
export interface AlertQueue {
  raise(signals: readonly AlertSignal[]): Promise<void>;
}

const CREDENTIAL_REFUSED = /\banswered 40[13]\b/;

export function alertSignalsOf(notices: readonly OperationalNotice[]): AlertSignal[] {
  return notices.flatMap((notice) => {
    const kind = alertKindOf(notice);
    if (kind === undefined) return [];
    const data = notice.data;
    const detail = String(data['reason'] ?? '') + (data['detail'] === undefined ? '' : `: ${String(data['detail'])}`);
    return [
      {
        id: uuidFromHash(
          createHash('sha256').update(
            JSON.stringify(['alert', notice.type, notice.subscription.id, ...notice.occurrence]),
          ),
        ),
        kind,
        subscriptionId: notice.subscription.id,
        owner: notice.subscription.owner,
        at: new Date(notice.time).toISOString(),
        detail: detail.slice(0, 1000),
      },
    ];
  });
}

function alertKindOf(notice: OperationalNotice): AlertKind | undefined {
  switch (notice.type) {
    case operationalEventTypes.subscriptionSuspended:
      return notice.data['suspendedFor'] === 'credential-required' ? 'credentials-failing' : 'suspended';
    case operationalEventTypes.subscriptionRetired:
      return 'consent-lost';
    case operationalEventTypes.deliveryDeadLettered:
      if (notice.data['reason'] === 'not-entitled') return 'entitlement-lost';
      return notice.data['reason'] === 'rejected' && CREDENTIAL_REFUSED.test(String(notice.data['detail'] ?? ''))
        ? 'credentials-failing'
        : 'dead-lettering';
    // Nothing went wrong, or the owner did it: no alert.
    case operationalEventTypes.deadLettersNotEmpty:
    case operationalEventTypes.subscriptionResumed:
    case operationalEventTypes.replayFinished:
    case operationalEventTypes.contractDeprecated:
      return undefined;
  }
}

/**
 * The operational events port that also raises the alerts among the notices, after they are on
 * Koerier's own pipeline. Raising is told like the notices are: a failure is logged, never thrown,
 * so the suspension or dead letter it reports stands (core/operations `tell`).
 */
export function alertingOperations(operations: OperationalEvents, alerts: AlertQueue, log: Log): OperationalEvents {
  const raise = async (notices: readonly OperationalNotice[]) => {
    const signals = alertSignalsOf(notices);
    if (signals.length === 0) return;
    try {
      await alerts.raise(signals);
    } catch (error) {
      log.error('alerts not raised', {
        kinds: signals.map((signal) => signal.kind),
        subscriptionIds: signals.map((signal) => signal.subscriptionId),
        error: error instanceof Error ? error.message : String(error),
      });
    }
  };
  return {
    async publish(notices) {
      try {
        await operations.publish(notices);
      } finally {
        await raise(notices);
      }
    },
    alertOnly: raise,
  };
}
