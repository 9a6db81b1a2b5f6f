/**
 * The router: SQS event source on the inbound queue, partial batch failures on. Drops duplicate
 * events, finds the matching subscriptions through the route index and queues one delivery per
 * match (see functions/core/routing/route-events.ts).
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { SubscriptionMatcher } from '../core/routing/matcher.js';
import { routeInboundEvents, type RouterDependencies } from '../core/routing/route-events.js';
import { entitledToEvent, parseEntitlements } from '../core/subscriptions/entitlements.js';
import { dynamoDbClient, sqsClient } from '../aws/clients.js';
import { DynamoDbRoutedEventLedger, RouteIndexRepository } from '../aws/route-index-repository.js';
import { SqsEventQueue } from '../aws/sqs-event-queue.js';
import { QUEUE_MESSAGE_MARGIN_BYTES, resourceNames, SQS_MESSAGE_LIMIT_BYTES } from '../config.js';
import { functions } from '../../lib/resources.js';
import { describeError } from './shared/api-gateway.js';
import { logger } from './shared/logger.js';
import { runtimeConfig } from './shared/runtime.js';

let dependencies: RouterDependencies | undefined;

function routerDependencies(): RouterDependencies {
  if (dependencies) return dependencies;
  const config = runtimeConfig();
  const client = dynamoDbClient();
  const deliveries = new SqsEventQueue(sqsClient(), resourceNames.queueUrl('deliveries'));
  const entitlements = parseEntitlements(config.entitlementsJson);
  dependencies = {
    // Lives as long as the container: its cache is checked against the index generation per batch.
    matcher: new SubscriptionMatcher(new RouteIndexRepository(client, resourceNames.table('routes'))),
    ledger: new DynamoDbRoutedEventLedger(client, resourceNames.table('idempotency')),
    isEntitled: (owner, event) => entitledToEvent(owner, event, entitlements),
    sendDeliveries: (bodies) => deliveries.send(bodies.map((body) => ({ body }))),
    now: () => Date.now(),
    // A crashed invocation's claims free up before SQS shows its messages again.
    lockMs: functions.router.timeoutSeconds * 1000,
    ttlSeconds: config.idempotency.ttlSeconds,
    maxMessageBytes: SQS_MESSAGE_LIMIT_BYTES - QUEUE_MESSAGE_MARGIN_BYTES,
    log: (message, fields) => logger.info(message, fields),
  };
  return dependencies;
}

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const records = event.Records.map((record) => ({ recordId: record.messageId, body: record.body }));
  try {
    const report = await routeInboundEvents(records, routerDependencies());
    logger.info('batch routed', { records: records.length, routed: report.routed, duplicates: report.duplicates, deliveries: report.deliveries, failed: report.failedRecordIds.length });
    return { batchItemFailures: report.failedRecordIds.map((itemIdentifier) => ({ itemIdentifier })) };
  } catch (error) {
    // Only what every record needs can end up here (the route index's state could not be read);
    // a problem of one record fails that record alone, inside routeInboundEvents. So every
    // record comes back later.
    logger.error('batch not routed', { records: records.length, error: describeError(error) });
    return { batchItemFailures: records.map((record) => ({ itemIdentifier: record.recordId })) };
  }
}
