/**
 * What the operator sees of each delivery attempt (issue 13, item 4): one log line, with the
 * ingest request's correlation id, and the attempt's outcome and latency as figures. Identifiers
 * and the target's status only: never the events, the sink's answer or a token (CE-16).
 */
import type { AttemptRecord } from './delivery-records.js';
import type { DispatcherDependencies, QueuedDelivery } from './dispatch-ports.js';

export function observeAttempt(
  deps: Pick<DispatcherDependencies, 'log' | 'metrics'>,
  delivery: QueuedDelivery,
  record: AttemptRecord,
): void {
  const { subscriptionId, deliveryId, attempt, outcome, status, latencyMs } = record;
  const { correlationId } = delivery.message;
  deps.log.info('delivery attempted', {
    subscriptionId,
    deliveryId,
    attempt,
    outcome,
    ...(status === undefined ? {} : { status }),
    latencyMs,
    ...(record.error ? { code: record.error.code } : {}),
    ...(correlationId === undefined ? {} : { correlationId }),
  });
  deps.metrics?.deliveryAttempted({ subscriptionId, outcome, latencyMs });
}
