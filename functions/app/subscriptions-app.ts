/**
 * The subscriptions API (scope `subscriptions:manage`): POST/GET /subscriptions,
 * GET/PATCH/DELETE /subscriptions/{id}; every change runs through the Idempotency-Key guard
 * (EDU-IDEM-3, EDU-IDEM-5). GET/POST /subscriptions/{id}/validation is the webhook validation
 * callback (WH-4): the target calls it, so it is authenticated by the secret token in its URL,
 * not by an access token, and is naturally idempotent.
 */
import { scopes } from '../core/auth/access-tokens.js';
import { SubscriptionsService } from '../core/subscriptions/subscriptions-service.js';
import { validationTransport } from '../net/validation-transport.js';
import type { KoerierDependencies } from './dependencies.js';
import { methodNotAllowed, type HttpApp } from './http-app.js';
import { idempotencyGuard } from './idempotency-guard.js';

/** `/subscriptions/{id}/validation`, the validation callback (as distinct from a subscription whose id is "validation"). */
const CALLBACK_PATH = /\/subscriptions\/[^/]+\/validation$/;

export function subscriptionsApp(deps: KoerierDependencies): HttpApp {
  const { config, log } = deps;
  // Built on the first request that gets past authentication (or to the callback), so a refused
  // caller costs no adapter: not the store, not the cipher, not the HTTP client.
  let service: SubscriptionsService | undefined;
  const subscriptionsService = () =>
    (service ??= new SubscriptionsService({
      store: deps.subscriptions,
      cipher: deps.credentialCipher,
      sendValidationRequest: validationTransport(deps.handshakeHttp, log),
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
      audit: log,
    }));

  return async (request) => {
    const id = request.pathParameters['id'];
    if (id !== undefined && CALLBACK_PATH.test(request.path)) return subscriptionsService().approve(id, request);

    const principal = await deps.authenticate(request, scopes.manageSubscriptions);
    const subscriptions = subscriptionsService();
    const guarded = idempotencyGuard(deps, request, { replayHeaders: ['etag'] });
    if (id === undefined) {
      if (request.method === 'POST') return guarded(principal.clientId, 'POST /subscriptions', () => subscriptions.create(principal, request));
      if (request.method === 'GET') return subscriptions.list(principal, request);
      return methodNotAllowed(['GET', 'POST']);
    }
    if (request.method === 'GET') return subscriptions.read(principal, id);
    if (request.method === 'PATCH') return guarded(principal.clientId, 'PATCH /subscriptions/{id}', () => subscriptions.update(principal, id, request));
    if (request.method === 'DELETE') return guarded(principal.clientId, 'DELETE /subscriptions/{id}', () => subscriptions.remove(principal, id));
    return methodNotAllowed(['GET', 'PATCH', 'DELETE']);
  };
}
