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
import { parseEntitlements } from '../core/subscriptions/entitlements.js';
import { SubscriptionsApi } from '../core/subscriptions/subscriptions-api.js';
import type { ValidationTransport } from '../core/webhooks/request-validation.js';
import { SUBSCRIBER_FAILURE } from '../core/delivery/attempt-outcome.js';
import { dynamoDbClient } from '../aws/clients.js';
import { credentialCipherFor } from '../aws/credential-cipher.js';
import { DynamoDbIdempotencyStore } from '../aws/dynamodb-idempotency-store.js';
import { RouteIndexRepository } from '../aws/route-index-repository.js';
import { SubscriptionRepository } from '../aws/subscription-repository.js';
import { resourceNames, type KoerierConfig } from '../config.js';
import { createSafeHttpClient, OutboundRequestError, type SafeHttpClient } from '../net/safe-http-client.js';
import { describeError, httpHandler } from './shared/api-gateway.js';
import { logger } from './shared/logger.js';
import { authenticateRequest, runtimeConfig } from './shared/runtime.js';

/** `/subscriptions/{id}/validation`, the validation callback (as distinct from a subscription whose id is "validation"). */
const CALLBACK_PATH = /\/subscriptions\/[^/]+\/validation$/;

let api: SubscriptionsApi | undefined;
let idempotency: DynamoDbIdempotencyStore | undefined;

function subscriptionsApi(config: KoerierConfig): SubscriptionsApi {
  if (api) return api;
  const client = dynamoDbClient();
  api = new SubscriptionsApi({
    store: new SubscriptionRepository(client, resourceNames.table('subscriptions'), new RouteIndexRepository(client, resourceNames.table('routes'))),
    cipher: credentialCipherFor(resourceNames.key('credentials'), config.localKeysDir ? { localKeysDir: config.localKeysDir } : {}),
    sendValidationRequest: validationTransport(
      createSafeHttpClient({
        allowLoopback: config.allowLoopbackSinks,
        allowedPorts: config.outboundPorts,
        connectTimeoutMs: config.handshake.timeoutSeconds * 1000,
        responseTimeoutMs: config.handshake.timeoutSeconds * 1000,
        ...(config.delivery.outboundCaFile ? { extraCaCertificates: [readFileSync(config.delivery.outboundCaFile, 'utf8')] } : {}),
      }),
    ),
    entitlements: parseEntitlements(config.entitlementsJson),
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
    audit: (message, fields) => logger.info(message, fields),
  });
  return api;
}

/** The OPTIONS request through the SSRF-guarded client; failures become outcomes, not errors. */
export function validationTransport(client: SafeHttpClient): ValidationTransport {
  return async ({ url, headers }) => {
    try {
      const response = await client.request({ method: 'OPTIONS', url, headers });
      return { status: response.status, headers: response.headers };
    } catch (error) {
      if (!(error instanceof OutboundRequestError)) throw error;
      // What the subscriber reads is the merged, fixed wording (review items 18, 19); the precise
      // kind and the network's own message go to the operator log.
      logger.info('validation request failed', { sinkOrigin: originOf(url), failure: error.kind, error: error.message });
      return { failure: SUBSCRIBER_FAILURE[error.kind].detail, permanent: error.kind === 'refused-address' || error.kind === 'invalid-url' || error.kind === 'not-sendable' };
    }
  };
}

export const handler = httpHandler(async (request) => {
  const config = runtimeConfig();
  const id = request.pathParameters['id'];
  if (id !== undefined && CALLBACK_PATH.test(request.path)) return subscriptionsApi(config).approve(id, request);

  const principal = await authenticateRequest(request, scopes.manageSubscriptions);
  const subscriptions = subscriptionsApi(config);
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

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}

function methodNotAllowed(request: HttpRequest): HttpResponse {
  const allowed = request.pathParameters['id'] === undefined ? ['GET', 'POST'] : ['GET', 'PATCH', 'DELETE'];
  return problemResponse(problems.methodNotAllowed(allowed), { allow: allowed.join(', ') });
}
