/**
 * The router: SQS event source on the inbound queue, partial batch failures on. Drops duplicate
 * events, finds the matching subscriptions through the route index and queues one delivery per
 * match (see functions/core/routing/route-events.ts).
 */
import { archiveBatch } from '../core/replay/archive-writer.js';
import { routeInboundEvents, type RouterDependencies } from '../core/routing/route-events.js';
import { isCorrelationId } from '../core/ids/correlation-id.js';
import { inboundMessageAttributes } from '../core/ingest/index.js';
import { parseAcceptancePosition } from '../core/ordering/acceptance-position.js';
import { QUEUE_MESSAGE_MARGIN_BYTES, SQS_MESSAGE_LIMIT_BYTES } from '../config.js';
import { functions } from '../config/resources.js';
import type { KoerierDependencies } from './dependencies.js';
import { describeError } from './logger.js';
import type { QueueApp } from './queue-app.js';

/** What the app reads: its handler (functions/handlers/router.ts) must compose a builder for each. */
export type RouterAppDependencies = Pick<
  KoerierDependencies,
  | 'config'
  | 'log'
  | 'clock'
  | 'subscriptionMatcher'
  | 'routedEvents'
  | 'partners'
  | 'outbox'
  | 'eventArchive'
  | 'metrics'
>;

export function routerApp(deps: RouterAppDependencies): QueueApp {
  const { config, log } = deps;
  const router: Omit<RouterDependencies, 'entitlements'> = {
    matcher: deps.subscriptionMatcher,
    ledger: deps.routedEvents,
    outbox: deps.outbox,
    now: deps.clock,
    // A crashed invocation's claims free up before SQS shows its messages again.
    lockMs: functions.router.timeoutSeconds * 1000,
    ttlSeconds: config.idempotency.ttlSeconds,
    maxMessageBytes: SQS_MESSAGE_LIMIT_BYTES - QUEUE_MESSAGE_MARGIN_BYTES,
    // One object per batch (docs/REPLAY.md).
    archive: async (events) => void (await archiveBatch(deps.eventArchive, events)),
    log,
  };
  return async (batch) => {
    const records = batch.records.map((record) => {
      const correlationId = record.attributes?.[inboundMessageAttributes.correlationId];
      return {
        recordId: record.messageId,
        body: record.body,
        ...acceptedAtOf(record.attributes),
        acceptedPosition: parseAcceptancePosition(record.attributes?.[inboundMessageAttributes.acceptedPosition]),
        ...(isCorrelationId(correlationId) ? { correlationId } : {}),
        // Kept on the event's marker for the trace (issue 30 item 1).
        publisher: record.attributes?.[inboundMessageAttributes.publisher],
        idempotencyKey: record.attributes?.[inboundMessageAttributes.idempotencyKey],
      };
    });
    try {
      // The partner directory's entitlements as of now (within its refresh interval): a revoked grant stops deliveries.
      const { entitlements } = await deps.partners.current();
      const report = await routeInboundEvents(records, { ...router, entitlements });
      log.info('batch routed', {
        records: records.length,
        routed: report.routed,
        duplicates: report.duplicates,
        deliveries: report.deliveries,
        failed: report.failedRecordIds.length,
      });
      deps.metrics.eventsRouted(report);
      return { failedMessageIds: report.failedRecordIds };
    } catch (error) {
      // Only what every record needs can end up here (the route index's state or the partner directory could not be read);
      // a problem of one record fails that record alone, inside routeInboundEvents. So every
      // record comes back later.
      log.error('batch not routed', { records: records.length, error: describeError(error) });
      return { failedMessageIds: records.map((record) => record.recordId) };
    }
  };
}

/** The ingest's acceptance time, from its message attribute; absent (a message from elsewhere): the router's now. */
function acceptedAtOf(attributes: Readonly<Record<string, string>> | undefined): { acceptedAt?: number } {
  const at = Date.parse(attributes?.[inboundMessageAttributes.receivedAt] ?? '');
  return Number.isNaN(at) ? {} : { acceptedAt: at };
}
