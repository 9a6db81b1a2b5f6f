/**
 * POST /events — the receiving intermediary (EDU-IN, EDU-15, EDU-16, EDU-19): authenticate,
 * guard the Idempotency-Key, parse and validate, store in the inbound queue, acknowledge 202.
 * OPTIONS /events answers the webhook validation handshake (WH-7).
 */
import { scopes } from '../core/auth/access-tokens.js';
import { parseCloudEventsRequest } from '../core/cloudevents/index.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../core/http/messages.js';
import { problemResponse, problems } from '../core/http/problems.js';
import { withIdempotency } from '../core/idempotency/index.js';
import { answerValidationRequest } from '../core/webhooks/answer-validation-request.js';
import { dynamoDbClient, sqsClient } from '../aws/clients.js';
import { DynamoDbIdempotencyStore } from '../aws/dynamodb-idempotency-store.js';
import { SqsEventQueue } from '../aws/sqs-event-queue.js';
import { resourceNames } from '../config.js';
import { describeError, httpHandler } from './shared/api-gateway.js';
import { logger } from './shared/logger.js';
import { authenticateRequest, runtimeConfig } from './shared/runtime.js';

const ALLOWED_METHODS = ['POST', 'OPTIONS'];

/**
 * The most events one batch may hold. It bounds the 202 body, which the idempotency store keeps
 * for replays in one DynamoDB item (400 KB at most).
 */
export const MAX_EVENTS_PER_BATCH = 1000;

/** Message attributes that travel with every accepted event to the router. */
export const inboundMessageAttributes = {
  publisher: 'koerier-publisher',
  receivedAt: 'koerier-received-at',
} as const;

let inbound: SqsEventQueue | undefined;
let idempotency: DynamoDbIdempotencyStore | undefined;
const inboundQueue = () => (inbound ??= new SqsEventQueue(sqsClient(), resourceNames.queueUrl('inbound')));
const idempotencyStore = () => (idempotency ??= new DynamoDbIdempotencyStore(dynamoDbClient(), resourceNames.table('idempotency')));

export const handler = httpHandler(async (request) => {
  const config = runtimeConfig();
  if (request.method === 'OPTIONS') {
    return answerValidationRequest(request.headers, { allowedOrigins: config.allowedOrigins, ratePerMinute: config.publishRatePerMinute }, ALLOWED_METHODS);
  }
  const principal = await authenticateRequest(request, scopes.publish);
  return withIdempotency(
    request,
    {
      clientId: principal.clientId,
      operation: 'POST /events',
      store: idempotencyStore(),
      ttlSeconds: config.idempotency.ttlSeconds,
      lockSeconds: config.idempotency.lockSeconds,
      // The events are stored and the 202 goes out; only a replay of it is lost, so warn, don't fail.
      onStoreError: (error) => logger.warn('idempotency completion not stored', { client: principal.clientId, error: describeError(error) }),
    },
    () => acceptEvents(request, principal.clientId, config.maxEventBytes),
  );
});

async function acceptEvents(request: HttpRequest, publisher: string, maxEventBytes: number): Promise<HttpResponse> {
  const outcome = parseCloudEventsRequest(request, { maxEventBytes });
  if (!outcome.ok) {
    logger.info('events rejected', { publisher, status: outcome.problem.status, type: outcome.problem.type, errors: outcome.problem.errors?.length ?? 0 });
    return problemResponse(outcome.problem);
  }
  if (outcome.events.length > MAX_EVENTS_PER_BATCH) {
    return problemResponse(problems.payloadTooLarge(`A batch holds at most ${MAX_EVENTS_PER_BATCH} events; this one holds ${outcome.events.length}. Split it.`));
  }
  const receivedAt = new Date().toISOString();
  await inboundQueue().send(
    outcome.events.map((event) => ({
      body: event.json,
      attributes: { [inboundMessageAttributes.publisher]: publisher, [inboundMessageAttributes.receivedAt]: receivedAt },
    })),
  );
  // Context attributes may be logged (CE-16); the data never is.
  for (const event of outcome.events) logger.info('event accepted', { publisher, mode: outcome.mode, id: event.id, source: event.source, type: event.type });
  return jsonResponse(202, {
    accepted: outcome.events.map(({ source, id }) => ({ source, id })),
    ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {}),
  });
}
