/**
 * Push delivery administration (EDU-18), scope `subscriptions:manage` on one's own subscriptions
 * (`admin` widens to every subscription):
 *   GET  /subscriptions/{id}/deliveries              recent attempts
 *   GET  /subscriptions/{id}/dead-letters            dead letters
 *   POST /subscriptions/{id}/dead-letters/redrive    send dead letters again
 *   POST /subscriptions/{id}/resume                  resume a suspended subscription
 * and, scope `admin` only:
 *   POST /deliveries/dead-letter-queue/redrive       move what the queue's redrive policy caught back
 * Every POST runs through the Idempotency-Key guard (EDU-IDEM-3).
 */
import { scopes } from '../core/auth/access-tokens.js';
import { encodeDeliveryMessage } from '../core/delivery-message/delivery-message.js';
import { DeliveryAdmin } from '../core/delivery/delivery-admin.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../core/http/messages.js';
import { problemResponse, problems } from '../core/http/problems.js';
import { withIdempotency } from '../core/idempotency/index.js';
import { dynamoDbClient, sqsClient } from '../aws/clients.js';
import { moveDeadLetterQueueBack } from '../aws/sqs-delivery-queue.js';
import { DynamoDbDeliveryState } from '../aws/dynamodb-delivery-state.js';
import { DynamoDbIdempotencyStore } from '../aws/dynamodb-idempotency-store.js';
import { DynamoDbRouteIndex } from '../aws/dynamodb-route-index.js';
import { SqsMessageQueue } from '../aws/sqs-message-queue.js';
import { DynamoDbSubscriptionStore } from '../aws/dynamodb-subscription-store.js';
import { resourceNames } from '../config.js';
import { describeError, httpHandler } from './shared/api-gateway.js';
import { logger } from './shared/logger.js';
import { authenticateRequest, runtimeConfig } from './shared/runtime.js';

/** Messages one dead-letter-queue redrive moves at most; call again for more. */
const MAX_QUEUE_REDRIVE = 1000;

let admin: DeliveryAdmin | undefined;
let idempotency: DynamoDbIdempotencyStore | undefined;

function deliveryAdmin(): DeliveryAdmin {
  if (admin) return admin;
  const config = runtimeConfig();
  const dynamodb = dynamoDbClient();
  const deliveries = new SqsMessageQueue(sqsClient(), resourceNames.queueUrl('deliveries'));
  const state = new DynamoDbDeliveryState(dynamodb, resourceNames.table('deliveries'));
  admin = new DeliveryAdmin({
    targets: state,
    ledger: state,
    deadLetters: state,
    subscriptions: new DynamoDbSubscriptionStore(dynamodb, resourceNames.table('subscriptions'), new DynamoDbRouteIndex(dynamodb, resourceNames.table('routes'))),
    enqueue: (messages) => deliveries.send(messages.map((message) => ({ body: encodeDeliveryMessage(message) }))),
    audit: logger,
    entitlements: config.entitlements,
    sinkCredentials: config.sinkCredentials,
  });
  return admin;
}

export const handler = httpHandler(async (request) => {
  const config = runtimeConfig();
  const guarded = (clientId: string, operation: string, process: () => Promise<HttpResponse>) =>
    withIdempotency(
      request,
      {
        clientId,
        operation,
        store: (idempotency ??= new DynamoDbIdempotencyStore(dynamoDbClient(), resourceNames.table('idempotency'))),
        ttlSeconds: config.idempotency.ttlSeconds,
        lockSeconds: config.idempotency.lockSeconds,
        onStoreError: (error) => logger.warn('idempotency completion not stored', { client: clientId, operation, error: describeError(error) }),
      },
      process,
    );

  if (request.path === '/deliveries/dead-letter-queue/redrive') {
    if (request.method !== 'POST') return methodNotAllowed(['POST']);
    const principal = await authenticateRequest(request, scopes.admin);
    return guarded(principal.clientId, 'POST /deliveries/dead-letter-queue/redrive', async () => {
      const moved = await moveDeadLetterQueueBack(sqsClient(), resourceNames.deadLetterQueueUrl('deliveries'), resourceNames.queueUrl('deliveries'), MAX_QUEUE_REDRIVE);
      logger.info('dead-letter queue redriven', { by: principal.clientId, moved });
      return jsonResponse(202, { moved, more: moved === MAX_QUEUE_REDRIVE });
    });
  }

  const id = request.pathParameters['id'] ?? '';
  const principal = await authenticateRequest(request, scopes.manageSubscriptions);
  const deliveries = deliveryAdmin();
  const route = routeOf(request);
  switch (route) {
    case 'deliveries':
      return request.method === 'GET' ? deliveries.listAttempts(principal, id, request) : methodNotAllowed(['GET']);
    case 'dead-letters':
      return request.method === 'GET' ? deliveries.listDeadLetters(principal, id, request) : methodNotAllowed(['GET']);
    case 'redrive':
      return request.method === 'POST'
        ? guarded(principal.clientId, 'POST /subscriptions/{id}/dead-letters/redrive', () => deliveries.redrive(principal, id, request))
        : methodNotAllowed(['POST']);
    case 'resume':
      return request.method === 'POST' ? guarded(principal.clientId, 'POST /subscriptions/{id}/resume', () => deliveries.resume(principal, id)) : methodNotAllowed(['POST']);
    case undefined:
      return problemResponse(problems.notFound());
  }
});

function routeOf(request: HttpRequest): 'deliveries' | 'dead-letters' | 'redrive' | 'resume' | undefined {
  if (request.path.endsWith('/dead-letters/redrive')) return 'redrive';
  if (request.path.endsWith('/dead-letters')) return 'dead-letters';
  if (request.path.endsWith('/deliveries')) return 'deliveries';
  if (request.path.endsWith('/resume')) return 'resume';
  return undefined;
}

function methodNotAllowed(allowed: readonly string[]): HttpResponse {
  return problemResponse(problems.methodNotAllowed(allowed), { allow: allowed.join(', ') });
}
