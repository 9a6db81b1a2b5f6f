/**
 * The subscriptions API (scope `subscriptions:manage`; the GETs `subscriptions:read`, which it includes): POST/GET /subscriptions,
 * GET/PATCH/DELETE /subscriptions/{id}, POST /subscriptions/{id}/revalidate; every change runs through the Idempotency-Key guard
 * (EDU-IDEM-3, EDU-IDEM-5). GET/POST /subscriptions/{id}/validation is the webhook validation
 * callback (WH-4): the target calls it, so it is authenticated by the secret token in its URL,
 * not by an access token, and is naturally idempotent.
 */
import { scopes } from '../core/auth/access-tokens.js';
import { testFilters } from '../core/filter-test/filter-test.js';
import { parseFilterTestRequest } from '../core/filter-test/filter-test-request.js';
import { jsonResponse } from '../core/http/messages.js';
import type { PartnerSnapshot } from '../core/partners/partner.js';
import { quotasOf } from '../core/quotas/client-quotas.js';
import { SubscriptionsService } from '../core/subscriptions/subscriptions-service.js';
import { judgeAddress } from '../net/ip-address-policy.js';
import { validationTransport } from '../net/validation-transport.js';
import type { KoerierDependencies, GuardedRouteMembers } from './dependencies.js';
import type { RouteKey } from '../config/resources.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';
import { idempotencyGuard } from './idempotency-guard.js';

/** What the app reads: its handler (functions/handlers/subscriptions.ts) must compose a builder for each. */
export type SubscriptionsAppDependencies = Pick<
  KoerierDependencies,
  | GuardedRouteMembers
  | 'subscriptions'
  | 'partners'
  | 'pullQueues'
  | 'quotaHolds'
  | 'credentialCipher'
  | 'handshakeHttp'
  | 'eventArchive'
  | 'clock'
>;

const DAY_MS = 24 * 3600_000;

export function subscriptionsApp(deps: SubscriptionsAppDependencies): HttpApp {
  const { config, log } = deps;
  // Built for each request that gets past authentication (or to the callback), so a refused
  // caller costs no adapter: not the store, not the cipher, not the HTTP client. The entitlements
  // and quotas are the partner directory's as of now (within its refresh interval), so the service is not kept.
  const subscriptionsService = (partners?: PartnerSnapshot) =>
    new SubscriptionsService({
      store: deps.subscriptions,
      cipher: deps.credentialCipher,
      sendValidationRequest: validationTransport(deps.handshakeHttp, log),
      entitlements: partners?.entitlements ?? new Map(),
      settings: {
        allowLoopbackSinks: config.allowLoopbackSinks,
        allowedPorts: config.outboundPorts,
        // The connection's own rule, applied when the URL is given (the laptop host still reaches loopback).
        refusedAddressRange: (address) => {
          const verdict = judgeAddress(address, { allowLoopback: config.allowLoopbackSinks });
          return verdict.allowed ? undefined : (verdict.range ?? 'not public');
        },
        sinkCredentials: config.sinkCredentials,
        webhookOrigin: config.webhookOrigin,
        publicBaseUrl: config.publicBaseUrl,
        validationWindowSeconds: config.handshake.windowSeconds,
        requestRatePerMinute: config.handshake.requestRatePerMinute,
        validationAgreedClients: config.validationAgreedClients,
        validationHandshake: config.validationHandshake,
        maxRetryWindowSeconds: config.idempotency.ttlSeconds,
        signingAvailable: config.delivery.signingKeys.length > 0,
        // Push subscriptions' lanes live in the deliveries table, which every deployment has (issue 33).
        orderingAvailable: true,
      },
      audit: log,
      pullQueues: deps.pullQueues,
      ...(partners
        ? {
            pullQuota: {
              holds: deps.quotaHolds,
              limitOf: (owner: string) => quotasOf(owner, config.quotas, partners.quotas).maxPullSubscriptions,
            },
          }
        : {}),
    });

  return async (request) => {
    const route = request.routeKey as RouteKey<'subscriptions'>;
    const id = request.pathParameters['id'] ?? '';
    switch (route) {
      case 'GET /subscriptions/{id}/validation':
      case 'POST /subscriptions/{id}/validation':
        // The approval decides on the subscription as made; it checks no entitlement.
        return subscriptionsService().approve(id, request);
      case 'POST /subscriptions':
      case 'GET /subscriptions':
      case 'GET /subscriptions/{id}':
      case 'PATCH /subscriptions/{id}':
      case 'DELETE /subscriptions/{id}':
      case 'POST /subscriptions/{id}/revalidate':
      case 'POST /subscriptions/filters/test':
        break;
      default:
        return unroutedAnswer(request);
    }

    // The console's users hold only the read scope (EDU-2).
    const principal = await deps.authenticate(
      request,
      route.startsWith('GET ') ? scopes.readSubscriptions : scopes.manageSubscriptions,
    );
    const directory = await deps.partners.current();
    const subscriptions = subscriptionsService(directory);
    const guarded = idempotencyGuard(deps, request, { replayHeaders: ['etag'] });
    switch (route) {
      case 'POST /subscriptions':
        return guarded(principal.clientId, route, () => subscriptions.create(principal, request));
      case 'GET /subscriptions':
        return subscriptions.list(principal, request);
      case 'GET /subscriptions/{id}':
        return subscriptions.read(principal, id);
      case 'PATCH /subscriptions/{id}':
        return guarded(principal.clientId, route, () => subscriptions.update(principal, id, request));
      case 'DELETE /subscriptions/{id}':
        return guarded(principal.clientId, route, () => subscriptions.remove(principal, id));
      case 'POST /subscriptions/{id}/revalidate':
        return guarded(principal.clientId, route, () => subscriptions.revalidate(principal, id));
      case 'POST /subscriptions/filters/test': {
        // Changes nothing, so no Idempotency-Key guard: asked twice, it answers from the archive as it is then.
        const trial = parseFilterTestRequest(request.body);
        const answer = await testFilters(trial, principal, {
          archive: deps.eventArchive,
          entitlements: directory.entitlements,
          now: deps.clock(),
          retentionMs: config.archive.retentionDays * DAY_MS,
        });
        return jsonResponse(200, answer);
      }
    }
  };
}
