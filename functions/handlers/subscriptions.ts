/**
 * The subscriptions API (scope `subscriptions:manage`): POST/GET /subscriptions,
 * GET/PATCH/DELETE /subscriptions/{id}; every change runs through the Idempotency-Key guard
 * (EDU-IDEM-3, EDU-IDEM-5). GET/POST /subscriptions/{id}/validation is the webhook validation
 * callback (WH-4): the target calls it, so it is authenticated by the secret token in its URL,
 * not by an access token, and is naturally idempotent.
 */
import { readFileSync } from 'node:fs';
import { scopes } from '../core/auth/access-tokens.js';
import type { HttpRequest, HttpResponse } from '../core/http/messages.js';
import { problemResponse, problems } from '../core/http/problems.js';
import { withIdempotency } from '../core/idempotency/index.js';
import { SubscriptionsService } from '../core/subscriptions/subscriptions-service.js';
import { dynamoDbClient } from '../aws/clients.js';
import { credentialCipherFor } from '../aws/credential-cipher.js';
import { DynamoDbIdempotencyStore } from '../aws/dynamodb-idempotency-store.js';
import { DynamoDbRouteIndex } from '../aws/dynamodb-route-index.js';
import { DynamoDbSubscriptionStore } from '../aws/dynamodb-subscription-store.js';
import { resourceNames, type KoerierConfig } from '../config.js';
import { createSafeHttpClient } from '../net/safe-http-client.js';
import { validationTransport } from '../net/validation-transport.js';
import { describeError, httpHandler } from './shared/api-gateway.js';
import { logger } from './shared/logger.js';
import { authenticateRequest, runtimeConfig } from './shared/runtime.js';

/** `/subscriptions/{id}/validation`, the validation callback (as distinct from a subscription whose id is "validation"). */
const CALLBACK_PATH = /\/subscriptions\/[^/]+\/validation$/;

let service: SubscriptionsService | undefined;
let idempotency: DynamoDbIdempotencyStore | undefined;

function subscriptionsService(config: KoerierConfig): SubscriptionsService {
  if (service) return service;
  const client = dynamoDbClient();
  service = new SubscriptionsService({
    store: new DynamoDbSubscriptionStore(client, resourceNames.table('subscriptions'), new DynamoDbRouteIndex(client, resourceNames.table('routes'))),
    cipher: credentialCipherFor(resourceNames.key('credentials'), config.localKeysDir ? { localKeysDir: config.localKeysDir } : {}),
    sendValidationRequest: validationTransport(
      createSafeHttpClient({
        allowLoopback: config.allowLoopbackSinks,
        allowedPorts: config.outboundPorts,
        connectTimeoutMs: config.handshake.timeoutSeconds * 1000,
        responseTimeoutMs: config.handshake.timeoutSeconds * 1000,
        ...(config.delivery.outboundCaFile ? { extraCaCertificates: [readFileSync(config.delivery.outboundCaFile, 'utf8')] } : {}),
      }),
      logger,
    ),
    entitlements: config.entitlements,
    settings: {
      allowLoopbackSinks: config.allowLoopbackSinks,
      allowedPorts: config.outboundPorts,
      sinkCredentials: config.sinkCredentials,
      webhookOrigin: config.webhookOrigin,
      publicBaseUrl: config.publicBaseUrl,
      validationWindowSeconds: config.handshake.windowSeconds,
      ...(config.handshake.requestRatePerMinute === undefined ? {} : { requestRatePerMinute: config.handshake.requestRatePerMinute }),
      validationAgreedClients: config.validationAgreedClients,
      maxRetryWindowSeconds: config.idempotency.ttlSeconds,
    },
    audit: logger,
  });
  return service;
}

export const handler = httpHandler(async (request) => {
  const config = runtimeConfig();
  const id = request.pathParameters['id'];
  if (id !== undefined && CALLBACK_PATH.test(request.path)) return subscriptionsService(config).approve(id, request);

  const principal = await authenticateRequest(request, scopes.manageSubscriptions);
  const subscriptions = subscriptionsService(config);
  const guarded = (operation: string, process: () => Promise<HttpResponse>) =>
    withIdempotency(
      request,
      {
        clientId: principal.clientId,
        operation,
        store: (idempotency ??= new DynamoDbIdempotencyStore(dynamoDbClient(), resourceNames.table('idempotency'))),
        ttlSeconds: config.idempotency.ttlSeconds,
        lockSeconds: config.idempotency.lockSeconds,
        replayHeaders: ['etag'],
        onStoreError: (error) => logger.warn('idempotency completion not stored', { client: principal.clientId, operation, error: describeError(error) }),
      },
      process,
    );

  if (id === undefined) {
    if (request.method === 'POST') return guarded('POST /subscriptions', () => subscriptions.create(principal, request));
    if (request.method === 'GET') return subscriptions.list(principal, request);
  } else {
    if (request.method === 'GET') return subscriptions.read(principal, id);
    if (request.method === 'PATCH') return guarded('PATCH /subscriptions/{id}', () => subscriptions.update(principal, id, request));
    if (request.method === 'DELETE') return guarded('DELETE /subscriptions/{id}', () => subscriptions.remove(principal, id));
  }
  return methodNotAllowed(request);
});

function methodNotAllowed(request: HttpRequest): HttpResponse {
  const allowed = request.pathParameters['id'] === undefined ? ['GET', 'POST'] : ['GET', 'PATCH', 'DELETE'];
  return problemResponse(problems.methodNotAllowed(allowed), { allow: allowed.join(', ') });
}
