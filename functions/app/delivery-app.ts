/**
 * The delivery function (CARD-5): SQS event source on the deliveries queue with partial batch
 * responses. Sends each delivery to its subscriber's webhook (functions/core/delivery/dispatcher.ts and its stages);
 * a delivery to try again later stays in the queue as a batch item failure, with its visibility
 * timeout set to the backoff. What crashes the function anyway returns after the queue's
 * visibility timeout, and the redrive policy catches it in the dead-letter queue eventually.
 */
import type { DispatcherDependencies } from '../core/delivery/dispatch-ports.js';
import { dispatchBatch } from '../core/delivery/dispatcher.js';
import { outgoingEvents } from '../core/claim-check/outgoing-events.js';
import { webhookSender } from '../net/webhook-sender.js';
import { alertingOperations } from '../core/alerts/alert-signals.js';
import { claimCheckReading } from './claim-check-reading.js';
import type { KoerierDependencies } from './dependencies.js';
import { describeError } from './logger.js';
import type { QueueApp } from './queue-app.js';

/**
 * Time kept back from the function's timeout to apply a batch's decisions (attempt history,
 * visibility changes): attempts that might not end before it are not started.
 */
const DECISION_MARGIN_MS = 4_000;

/** What the app reads: its handler (functions/handlers/delivery.ts) must compose a builder for each. */
export type DeliveryAppDependencies = Pick<
  KoerierDependencies,
  | 'config'
  | 'log'
  | 'clock'
  | 'deliverySubscriptions'
  | 'sinkAccessTokens'
  | 'deliveryPolicy'
  | 'deliveryQueue'
  | 'outbox'
  | 'orderedLanes'
  | 'deliveryState'
  | 'deliveryHttp'
  | 'signingKeys'
  | 'claimCheckStore'
  | 'payloadLedger'
  | 'operationalEvents'
  | 'alertQueue'
  | 'partners'
  | 'metrics'
  | 'recordDeliveryMetrics'
>;

export function deliveryApp(deps: DeliveryAppDependencies): QueueApp {
  const dispatcher = dispatcherDependencies(deps);
  const { log } = deps;
  return async (batch) => {
    const deadline = deps.clock() + batch.remainingTimeMs() - DECISION_MARGIN_MS;
    const tasks = batch.records.map(({ messageId, body, receiveCount }) => ({ messageId, body, receiveCount }));
    const { decisions, attempts, failedAttempts, deadLettered, suspended } = await dispatchBatch(tasks, dispatcher, {
      deadline,
    });
    const receipts = new Map(batch.records.map((record) => [record.messageId, record.receiptHandle]));
    const retries = decisions.flatMap((decision) => (decision.action === 'retry' ? [decision] : []));
    if (retries.length > 0) {
      try {
        const failed = await deps.deliveryQueue.postpone(
          retries.map((retry) => ({
            receiptHandle: receipts.get(retry.messageId) ?? '',
            delaySeconds: retry.delaySeconds,
          })),
        );
        if (failed > 0) log.warn('some retries keep the default visibility timeout', { failed });
      } catch (error) {
        log.warn('retry delays not set; the default visibility timeout applies', {
          retries: retries.length,
          error: describeError(error),
        });
      }
    }
    log.info('delivery batch', {
      received: tasks.length,
      retrying: retries.length,
      attempts,
      failedAttempts,
      deadLettered,
    });
    // The operator's alarm on suspensions in bulk, and the dashboard, read these (CloudWatch Embedded
    // Metric Format in the log stream). A metric record, not a log line: written whatever the log
    // level, and only in Lambda.
    if (deps.config.delivery.emitMetrics) deps.recordDeliveryMetrics({ attempts, failures: failedAttempts, suspended });
    return { failedMessageIds: retries.map((retry) => retry.messageId) };
  };
}

function dispatcherDependencies(deps: DeliveryAppDependencies): DispatcherDependencies {
  const { config, log } = deps;
  const claimCheck = claimCheckReading(deps);
  const state = deps.deliveryState;
  return {
    targets: state,
    ledger: state,
    deadLetters: state,
    subscriptions: deps.deliverySubscriptions,
    accessToken: (subscription, options) => deps.sinkAccessTokens.accessToken(subscription, options),
    send: webhookSender(deps.deliveryHttp),
    signingKey: () => deps.signingKeys.current(),
    outgoingEvents: (subscription, events) => outgoingEvents(subscription, events, claimCheck),
    // Issue 28, item 9: entitlement is checked again on every attempt, not only when the router matched.
    entitlements: async () => (await deps.partners.current()).entitlements,
    outbox: deps.outbox,
    lanes: deps.orderedLanes,
    orderingSettlingMs: config.orderingSettlingMs,
    policy: deps.deliveryPolicy,
    origin: config.webhookOrigin,
    // Issue 30 item 3: suspensions, retirements and dead letters also go to the alert contacts.
    operations: alertingOperations(deps.operationalEvents, deps.alertQueue, log),
    log,
    metrics: deps.metrics,
    clock: deps.clock,
  };
}
