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
import { jsonResponse, type HttpRequest } from '../core/http/messages.js';
import { problemResponse, problems } from '../core/http/problems.js';
import type { KoerierDependencies } from './dependencies.js';
import { methodNotAllowed, type HttpApp } from './http-app.js';
import { idempotencyGuard } from './idempotency-guard.js';

/** Messages one dead-letter-queue redrive moves at most; call again for more. */
const MAX_QUEUE_REDRIVE = 1000;

export function deliveryAdminApp(deps: KoerierDependencies): HttpApp {
  const { config, log } = deps;
  // Built on the first authenticated request: a refused caller costs no adapter.
  let built: DeliveryAdmin | undefined;
  const deliveryAdmin = () =>
    (built ??= new DeliveryAdmin({
      targets: deps.deliveryState,
      ledger: deps.deliveryState,
      deadLetters: deps.deliveryState,
      subscriptions: deps.subscriptions,
      enqueue: (messages) => deps.deliveryQueue.send(messages.map((message) => encodeDeliveryMessage(message))),
      audit: log,
      entitlements: config.entitlements,
      sinkCredentials: config.sinkCredentials,
    }));

  return async (request) => {
    const guarded = idempotencyGuard(deps, request);
    if (request.path === '/deliveries/dead-letter-queue/redrive') {
      if (request.method !== 'POST') return methodNotAllowed(['POST']);
      const principal = await deps.authenticate(request, scopes.admin);
      return guarded(principal.clientId, 'POST /deliveries/dead-letter-queue/redrive', async () => {
        const moved = await deps.deliveryQueue.redriveDeadLetterQueue(MAX_QUEUE_REDRIVE);
        log.info('dead-letter queue redriven', { by: principal.clientId, moved });
        return jsonResponse(202, { moved, more: moved === MAX_QUEUE_REDRIVE });
      });
    }

    const id = request.pathParameters['id'] ?? '';
    const principal = await deps.authenticate(request, scopes.manageSubscriptions);
    const admin = deliveryAdmin();
    switch (routeOf(request)) {
      case 'deliveries':
        return request.method === 'GET' ? admin.listAttempts(principal, id, request) : methodNotAllowed(['GET']);
      case 'dead-letters':
        return request.method === 'GET' ? admin.listDeadLetters(principal, id, request) : methodNotAllowed(['GET']);
      case 'redrive':
        return request.method === 'POST'
          ? guarded(principal.clientId, 'POST /subscriptions/{id}/dead-letters/redrive', () => admin.redrive(principal, id, request))
          : methodNotAllowed(['POST']);
      case 'resume':
        return request.method === 'POST'
          ? guarded(principal.clientId, 'POST /subscriptions/{id}/resume', () => admin.resume(principal, id))
          : methodNotAllowed(['POST']);
      case undefined:
        return problemResponse(problems.notFound());
    }
  };
}

function routeOf(request: HttpRequest): 'deliveries' | 'dead-letters' | 'redrive' | 'resume' | undefined {
  if (request.path.endsWith('/dead-letters/redrive')) return 'redrive';
  if (request.path.endsWith('/dead-letters')) return 'dead-letters';
  if (request.path.endsWith('/deliveries')) return 'deliveries';
  if (request.path.endsWith('/resume')) return 'resume';
  return undefined;
}
