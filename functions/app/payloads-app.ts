/**
 * The claim check's routes (EDU-1, CARD-6): GET /payloads/{id}, the data of an event that
 * travelled by reference, for its publisher and the owners of the subscriptions it went to
 * (functions/core/claim-check/fetch-payload.ts); POST /payloads, an upload for data too large for
 * any request (functions/core/claim-check/uploads.ts).
 */
import { scopes, type Principal } from '../core/auth/access-tokens.js';
import { fetchPayload, type FetchSettings } from '../core/claim-check/fetch-payload.js';
import { grantUpload } from '../core/claim-check/uploads.js';
import { KoerierError } from '../core/http/problems.js';
import { quotasOf } from '../core/quotas/client-quotas.js';
import type { HttpRequest } from '../core/http/messages.js';
import { claimCheckRetentionSeconds, type RouteKey } from '../config/resources.js';
import type { KoerierDependencies, GuardedRouteMembers } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';
import { idempotencyGuard } from './idempotency-guard.js';

/**
 * Lambda answers at most 6 MB, and API Gateway carries bytes base64-encoded (a third more): 4 MiB
 * of data is about 5.6 MB in the answer. Larger objects are fetched from S3 directly.
 */
export const FETCH_SETTINGS: FetchSettings = { maxStreamedBytes: 4 * 1024 * 1024, presignedUrlSeconds: 300 };

/** What the app reads: its handler (functions/handlers/payloads.ts) must compose a builder for each. */
export type PayloadsAppDependencies = Pick<
  KoerierDependencies,
  GuardedRouteMembers | 'clock' | 'claimCheckStore' | 'payloadLedger' | 'partners' | 'uploadUsage'
>;

export function payloadsApp(deps: PayloadsAppDependencies): HttpApp {
  return async (request) => {
    const route = request.routeKey as RouteKey<'payloads'>;
    switch (route) {
      case 'GET /payloads/{id}': {
        const principal = await subscriberOrPublisher(request, deps);
        return fetchPayload(request.pathParameters['id'] ?? '', principal.clientId, request.headers['if-none-match'], {
          store: deps.claimCheckStore,
          ledger: deps.payloadLedger,
          settings: FETCH_SETTINGS,
          log: deps.log,
          now: deps.clock,
        });
      }
      case 'POST /payloads': {
        const principal = await deps.authenticate(request, scopes.publish);
        // The client's upload quota as the partner directory has it now (issue 28 item 13).
        const limit = quotasOf(
          principal.clientId,
          deps.config.quotas,
          (await deps.partners.current()).quotas,
        ).uploadBytesPerHour;
        return idempotencyGuard(deps, request)(principal.clientId, route, () =>
          grantUpload(request.body, principal.clientId, {
            store: deps.claimCheckStore,
            ledger: deps.payloadLedger,
            publicBaseUrl: deps.config.publicBaseUrl,
            retentionSeconds: claimCheckRetentionSeconds(deps.config.archive.retentionDays),
            now: deps.clock,
            quota: { usage: deps.uploadUsage, limit },
          }),
        );
      }
      default:
        return unroutedAnswer(request);
    }
  };
}

/** Subscribers fetch with `events:consume`; a publisher reading back its own event's data may use `events:publish`. */
async function subscriberOrPublisher(request: HttpRequest, deps: PayloadsAppDependencies): Promise<Principal> {
  try {
    return await deps.authenticate(request, scopes.consume);
  } catch (error) {
    if (!(error instanceof KoerierError && error.problem.status === 403)) throw error;
    // Without either scope, the answer names the subscriber's, the one most callers need.
    return deps.authenticate(request, scopes.publish).catch(() => Promise.reject(error));
  }
}
