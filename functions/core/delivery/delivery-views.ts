/**
 * Attempts and dead letters as the delivery-admin API shows them (EDU-18): what the subscriber may
 * read of its deliveries, and nothing that helps a port scan or reveals event data.
 */
import { readStoredEvent } from '../cloudevents/index.js';
import type { AttemptRecord, DeadLetter, EventReference } from './delivery-records.js';

/** The events of a delivery message by `source`, `id` and `type`; one that does not read is left out. */
export function eventReferences(events: readonly string[]): EventReference[] {
  return events.flatMap((json) => {
    try {
      const { source, id, type } = readStoredEvent(json);
      return typeof source === 'string' && typeof id === 'string' && typeof type === 'string'
        ? [{ source, id, type }]
        : [];
    } catch {
      return [];
    }
  });
}

/**
 * An attempt as the API shows it. Without an answer from the target, its latency is left out: how
 * long a failure took tells a closed port from a filtered one (review item 19); the operator log
 * keeps it.
 */
export function attemptView({ subscriptionId: _s, ...attempt }: AttemptRecord): Record<string, unknown> {
  if (attempt.status !== undefined) return attempt;
  const { latencyMs: _latency, ...withoutLatency } = attempt;
  return withoutLatency;
}

/** A dead letter as the API shows it: the events by their context attributes, never their data. */
export function deadLetterView(deadLetter: DeadLetter): Record<string, unknown> {
  return {
    deliveryId: deadLetter.deliveryId,
    createdAt: new Date(deadLetter.createdAt).toISOString(),
    deadLetteredAt: deadLetter.deadLetteredAt,
    reason: deadLetter.reason,
    detail: deadLetter.detail,
    attempts: deadLetter.attempts,
    lastAttempts: deadLetter.lastAttempts.map(attemptView),
    events: deadLetter.events.map((json) => {
      const { id, source, type, attributes } = readStoredEvent(json);
      return {
        id,
        source,
        type,
        ...(typeof attributes['subject'] === 'string' ? { subject: attributes['subject'] } : {}),
      };
    }),
    ...(deadLetter.redriveOf ? { redriveOf: deadLetter.redriveOf } : {}),
    ...(deadLetter.correlationId ? { correlationId: deadLetter.correlationId } : {}),
  };
}
