/**
 * POST /events — the receiving intermediary (EDU-IN, EDU-15, EDU-16, EDU-19): authenticate,
 * guard the Idempotency-Key, parse and validate, store in the inbound queue, acknowledge 202.
 * OPTIONS /events answers the webhook validation handshake (WH-7).
 */
import { scopes } from '../core/auth/access-tokens.js';
import { parseCloudEventsRequest } from '../core/cloudevents/index.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../core/http/messages.js';
import { boundedIssues, MAX_PROBLEM_BYTES, problem, problemResponse, type ValidationIssue } from '../core/http/problems.js';
import { ungrantedSources } from '../core/auth/publish-grants.js';
import { withIdempotency } from '../core/idempotency/index.js';
import { answerValidationRequest } from '../core/webhooks/answer-validation-request.js';
import { dynamoDbClient, sqsClient } from '../aws/clients.js';
import { DynamoDbIdempotencyStore } from '../aws/dynamodb-idempotency-store.js';
import { DynamoDbRateWindow } from '../aws/dynamodb-rate-window.js';
import { SqsEventQueue } from '../aws/sqs-event-queue.js';
import { resourceNames, type KoerierConfig } from '../config.js';
import { describeError, httpHandler } from './shared/api-gateway.js';
import { logger } from './shared/logger.js';
import { authenticateRequest, runtimeConfig } from './shared/runtime.js';
import { rememberPublishRefusal } from './shared/throttling.js';

const ALLOWED_METHODS = ['POST', 'OPTIONS'];

/**
 * The most events one batch may hold. With warnings grouped per kind, it bounds the 202 body,
 * which the idempotency store keeps for replays in one DynamoDB item (400 KB at most).
 */
export const MAX_EVENTS_PER_BATCH = 1000;

/** Message attributes that travel with every accepted event to the router. */
export const inboundMessageAttributes = {
  publisher: 'koerier-publisher',
  receivedAt: 'koerier-received-at',
} as const;

let inbound: SqsEventQueue | undefined;
let idempotency: DynamoDbIdempotencyStore | undefined;
let rates: DynamoDbRateWindow | undefined;
const inboundQueue = () => (inbound ??= new SqsEventQueue(sqsClient(), resourceNames.queueUrl('inbound')));
const idempotencyStore = () => (idempotency ??= new DynamoDbIdempotencyStore(dynamoDbClient(), resourceNames.table('idempotency')));
const rateWindow = () => (rates ??= new DynamoDbRateWindow(dynamoDbClient(), resourceNames.table('idempotency'), { onRefused: rememberPublishRefusal }));

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
    () => acceptEvents(request, principal.clientId, config),
  );
});

async function acceptEvents(request: HttpRequest, publisher: string, config: KoerierConfig): Promise<HttpResponse> {
  // Inside the idempotency guard, so only first attempts count; a 429 frees the key for the retry.
  const rate = await rateWindow().take(publisher, config.publishRatePerMinute);
  if (!rate.allowed) {
    return problemResponse(problem(429, 'rate-limited', 'Too Many Requests', `At most ${config.publishRatePerMinute} requests per minute per publisher.`), {
      'retry-after': String(rate.retryAfterSeconds),
    });
  }
  const outcome = parseCloudEventsRequest(request, { maxEventBytes: config.maxEventBytes, maxEventsPerBatch: MAX_EVENTS_PER_BATCH });
  if (!outcome.ok) {
    logger.info('events rejected', { publisher, status: outcome.problem.status, type: outcome.problem.type, errors: outcome.problem.errors?.length ?? 0 });
    return problemResponse(outcome.problem);
  }
  const ungranted = ungrantedSources(publisher, outcome.events.map((event) => event.source), config.publishGrants, outcome.mode === 'batch');
  if (ungranted.length > 0) {
    logger.info('events refused', { publisher, reason: 'source not granted', events: ungranted.length });
    return problemResponse(problem(403, 'source-not-granted', 'Forbidden', 'This client may not publish events with these sources.', { errors: ungranted }));
  }
  const receivedAt = new Date().toISOString();
  // EDU-19, EDU-IN: the 202 below is only reached once SQS has stored every event. A failed write
  // is a 503 (the idempotency guard frees the key for it), so the publisher retries the request.
  try {
    await inboundQueue().send(
      outcome.events.map((event) => ({
        body: event.json,
        attributes: { [inboundMessageAttributes.publisher]: publisher, [inboundMessageAttributes.receivedAt]: receivedAt },
      })),
    );
  } catch (error) {
    logger.error('events not stored', { publisher, mode: outcome.mode, events: outcome.events.length, error: describeError(error) });
    return problemResponse(
      problem(503, 'events-not-stored', 'Service Unavailable',
        'The events could not be stored, so none is acknowledged. Retry the request with the same Idempotency-Key; events that were stored are recognised by source and id and delivered once.'),
      { 'retry-after': '1' },
    );
  }
  // Context attributes may be logged (CE-16); the data never is.
  for (const event of outcome.events) logger.info('event accepted', { publisher, mode: outcome.mode, id: event.id, source: event.source, type: event.type });
  return jsonResponse(202, {
    accepted: outcome.events.map(({ source, id }) => ({ source, id })),
    ...(outcome.warnings.length > 0 ? boundedWarnings(outcome.warnings) : {}),
  });
}

/**
 * One warning per kind of finding, with the batch members it concerns, cut to the same budget as
 * a problem's issue list (review #11), so a large batch cannot grow the 202 body (which the
 * idempotency store keeps in one item) past what it can hold.
 */
function boundedWarnings(warnings: readonly ValidationIssue[]): { warnings: ValidationIssue[]; warningsNotListed?: number } {
  const { listed, notListed } = boundedIssues(groupedWarnings(warnings), MAX_PROBLEM_BYTES);
  return notListed > 0 ? { warnings: listed, warningsNotListed: notListed } : { warnings: listed };
}

function groupedWarnings(warnings: readonly ValidationIssue[]): ValidationIssue[] {
  if (warnings.every((warning) => warning.index === undefined)) return [...warnings];
  const groups = new Map<string, { warning: ValidationIssue; indexes: number[] }>();
  for (const warning of warnings) {
    const kind = `${warning.requirement}|${warning.rule}|${warning.attribute ?? ''}`;
    const group = groups.get(kind);
    if (group) group.indexes.push(warning.index ?? -1);
    else groups.set(kind, { warning, indexes: [warning.index ?? -1] });
  }
  return [...groups.values()].map(({ warning: { index: _index, ...first }, indexes }) =>
    indexes.length === 1 ? { ...first, index: indexes[0]! } : { ...first, message: `${first.message} (and ${indexes.length - 1} more like it)`, indexes },
  );
}
