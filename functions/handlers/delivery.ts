/**
 * The delivery function (CARD-5): SQS event source on the deliveries queue with partial batch
 * responses. Sends each delivery to its subscriber's webhook (functions/core/delivery/dispatcher.ts);
 * a delivery to try again later stays in the queue as a batch item failure, with its visibility
 * timeout set to the backoff. What crashes the function anyway returns after the queue's
 * visibility timeout, and the redrive policy catches it in the dead-letter queue eventually.
 */
import { readFileSync } from 'node:fs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { openSinkCredential, type SinkCredential } from '../core/credentials/sink-credential.js';
import { encodeDeliveryMessage } from '../core/delivery/delivery-message.js';
import { CredentialUnavailableError, dispatchBatch, type DispatcherDependencies } from '../core/delivery/dispatcher.js';
import { cachedSubscriptions } from '../core/delivery/subscription-cache.js';
import type { Subscription } from '../core/subscriptions/subscription.js';
import { dynamoDbClient, sqsClient } from '../aws/clients.js';
import { credentialCipherFor } from '../aws/credential-cipher.js';
import { postponeMessages } from '../aws/delivery-queue.js';
import { DeliveryStateRepository } from '../aws/delivery-state-repository.js';
import { RouteIndexRepository } from '../aws/route-index-repository.js';
import { SqsEventQueue } from '../aws/sqs-event-queue.js';
import { SubscriptionRepository } from '../aws/subscription-repository.js';
import { ClientCredentialsTokens, TOKEN_TIMEOUT_MS } from '../net/client-credentials-tokens.js';
import { createSafeHttpClient } from '../net/safe-http-client.js';
import { webhookSender } from '../net/webhook-sender.js';
import { resourceNames } from '../config.js';
import { queues } from '../../lib/resources.js';
import { describeError } from './shared/api-gateway.js';
import { logger } from './shared/logger.js';
import { runtimeConfig } from './shared/runtime.js';

/** Where the delivery function's metrics go (EMF, see the end of `handler`). */
export const METRIC_NAMESPACE = 'Koerier';
const DELIVERY_METRICS = [
  { Name: 'DeliveryAttempts', Unit: 'Count' },
  { Name: 'DeliveryFailures', Unit: 'Count' },
  { Name: 'DeliveriesDeadLettered', Unit: 'Count' },
];

/** How long a container trusts what it read about a subscription. */
const SUBSCRIPTION_CACHE_MS = 5_000;
/** How long admitted deliveries may wait in memory for their rate slot. */
const RATE_HORIZON_MS = 2_000;
/**
 * Time kept back from the function's timeout to apply a batch's decisions (attempt history,
 * visibility changes): attempts that might not end before it are not started.
 */
const DECISION_MARGIN_MS = 4_000;

let dependencies: DispatcherDependencies | undefined;

function deliveryDependencies(): DispatcherDependencies {
  if (dependencies) return dependencies;
  const config = runtimeConfig();
  const settings = config.delivery;
  const http = createSafeHttpClient({
    allowLoopback: config.allowLoopbackSinks,
    allowedPorts: config.outboundPorts,
    connectTimeoutMs: settings.connectTimeoutMs,
    responseTimeoutMs: settings.responseTimeoutMs,
    maxResponseBytes: settings.maxResponseBytes,
    ...(settings.outboundCaFile ? { extraCaCertificates: [readFileSync(settings.outboundCaFile, 'utf8')] } : {}),
  });
  const dynamodb = dynamoDbClient();
  const subscriptions = new SubscriptionRepository(dynamodb, resourceNames.table('subscriptions'), new RouteIndexRepository(dynamodb, resourceNames.table('routes')));
  const cipher = credentialCipherFor(resourceNames.key('credentials'), config.localKeysDir ? { localKeysDir: config.localKeysDir } : {});
  const tokens = new ClientCredentialsTokens(http, Date.now, (message, fields) => logger.warn(message, fields));
  const deliveries = new SqsEventQueue(sqsClient(), resourceNames.queueUrl('deliveries'));
  // Decrypting costs a KMS call: once per stored credential per container.
  const credentials = new Map<string, Promise<SinkCredential>>();
  const credentialOf = (subscription: Subscription & { credential: NonNullable<Subscription['credential']> }) => {
    const { ciphertext } = subscription.credential;
    let credential = credentials.get(ciphertext);
    if (!credential) {
      if (credentials.size > 1000) credentials.clear();
      credential = openSinkCredential(subscription.credential, subscription.id, cipher);
      credential.catch(() => credentials.delete(ciphertext));
      credentials.set(ciphertext, credential);
    }
    return credential;
  };

  dependencies = {
    store: new DeliveryStateRepository(dynamodb, resourceNames.table('deliveries')),
    subscriptions: cachedSubscriptions(subscriptions, SUBSCRIPTION_CACHE_MS),
    async accessToken(subscription, options) {
      if (!subscription.credential) return undefined;
      let credential: SinkCredential;
      try {
        credential = await credentialOf({ ...subscription, credential: subscription.credential });
      } catch (error) {
        logger.error('sink credential does not decrypt', { subscriptionId: subscription.id, error: describeError(error) });
        throw new CredentialUnavailableError('the stored credential could not be decrypted');
      }
      return credential.kind === 'bearer' ? credential.token : tokens.token(credential, options);
    },
    send: webhookSender(http),
    enqueue: (messages) => deliveries.send(messages.map((message) => ({ body: encodeDeliveryMessage(message) }))),
    policy: {
      retry: settings.retry,
      breaker: settings.breaker,
      suspendAfterSeconds: settings.suspendAfterSeconds,
      keyTtlSeconds: config.idempotency.ttlSeconds,
      historySeconds: settings.historySeconds,
      deadLetterRetentionSeconds: settings.deadLetterRetentionSeconds,
      rateHorizonMs: RATE_HORIZON_MS,
      probeLeaseMs: settings.connectTimeoutMs + settings.responseTimeoutMs + 1_000,
      maxReceiveCount: queues.deliveries.maxReceiveCount,
      sendTimeoutMs: settings.connectTimeoutMs + settings.responseTimeoutMs,
      tokenTimeoutMs: TOKEN_TIMEOUT_MS,
      sinkCredentials: config.sinkCredentials,
    },
    origin: config.webhookOrigin,
    log: (level, message, fields) => logger[level](message, fields),
  };
  return dependencies;
}

export async function handler(event: SQSEvent, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - DECISION_MARGIN_MS;
  const tasks = event.Records.map((record) => ({
    messageId: record.messageId,
    body: record.body,
    receiveCount: Number(record.attributes?.ApproximateReceiveCount ?? '1') || 1,
  }));
  const { decisions, attempts, failedAttempts, deadLettered } = await dispatchBatch(tasks, deliveryDependencies(), { deadline });
  const receipts = new Map(event.Records.map((record) => [record.messageId, record.receiptHandle]));
  const retries = decisions.flatMap((decision) => (decision.action === 'retry' ? [decision] : []));
  if (retries.length > 0) {
    try {
      const failed = await postponeMessages(
        sqsClient(),
        resourceNames.queueUrl('deliveries'),
        retries.map((retry) => ({ receiptHandle: receipts.get(retry.messageId) ?? '', delaySeconds: retry.delaySeconds })),
      );
      if (failed > 0) logger.warn('some retries keep the default visibility timeout', { failed });
    } catch (error) {
      logger.warn('retry delays not set; the default visibility timeout applies', { retries: retries.length, error: describeError(error) });
    }
  }
  logger.info('delivery batch', { received: tasks.length, retrying: retries.length, attempts, failedAttempts, deadLettered });
  // CloudWatch Embedded Metric Format: the alarms on the delivery error rate and on dead letters
  // read these from the log stream, without a PutMetricData call. A metric record, not a log
  // line: written whatever the log level, and only in Lambda.
  if (runtimeConfig().delivery.emitMetrics) {
    process.stdout.write(
      `${JSON.stringify({
        _aws: { Timestamp: Date.now(), CloudWatchMetrics: [{ Namespace: METRIC_NAMESPACE, Dimensions: [[]], Metrics: DELIVERY_METRICS }] },
        DeliveryAttempts: attempts,
        DeliveryFailures: failedAttempts,
        DeliveriesDeadLettered: deadLettered,
      })}\n`,
    );
  }
  return { batchItemFailures: retries.map((retry) => ({ itemIdentifier: retry.messageId })) };
}
