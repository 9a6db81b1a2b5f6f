/**
 * POST /events — the receiving intermediary (EDU-IN, EDU-15, EDU-16, EDU-19): authenticate, then
 * the ingest use case (functions/core/ingest). OPTIONS /events answers the webhook validation
 * handshake (WH-7).
 */
import { scopes } from '../core/auth/access-tokens.js';
import { acceptEvents, INGEST_OPERATION, type IngestDependencies } from '../core/ingest/index.js';
import { correlationIdOf, CORRELATION_ID_HEADER } from '../core/ids/correlation-id.js';
import { answerValidationRequest } from '../core/webhooks/answer-validation-request.js';
import type { KoerierDependencies, GuardedRouteMembers } from './dependencies.js';
import { claimCheckRetentionSeconds, type RouteKey } from '../config/resources.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';

const ALLOWED_METHODS = ['POST', 'OPTIONS'];

/** The ingest's idempotency operation is its route key: the compiler holds the two together. */
const INGEST_ROUTE = INGEST_OPERATION satisfies RouteKey<'ingest'>;

/** What the app reads: its handler (functions/handlers/ingest.ts) must compose a builder for each. */
export type IngestAppDependencies = Pick<
  KoerierDependencies,
  | GuardedRouteMembers
  | 'publishRateWindow'
  | 'partners'
  | 'dataContracts'
  | 'inboundQueue'
  | 'claimCheckStore'
  | 'payloadLedger'
  | 'routedEventRecords'
  | 'orderingKeyRequirements'
  | 'metrics'
>;

/**
 * The ingest use case's dependencies from the app's: the one place they are put together, for
 * POST /events and for the ZGW adapter's notificaties (issue 34), which take the same path.
 */
export function ingestDependenciesOf(deps: Omit<IngestAppDependencies, 'authenticate'>): IngestDependencies {
  const { config } = deps;
  return {
    idempotency: deps.idempotency,
    rateWindow: deps.publishRateWindow,
    inbound: deps.inboundQueue,
    claimCheck: {
      store: deps.claimCheckStore,
      ledger: deps.payloadLedger,
      publicBaseUrl: config.publicBaseUrl,
      // As long as the archive can replay the event, and the bucket's lifecycle rule keeps it (issue 36, item 8).
      retentionSeconds: claimCheckRetentionSeconds(config.archive.retentionDays),
    },
    settings: config,
    log: deps.log,
    dataContracts: deps.dataContracts,
    metrics: deps.metrics,
    // Issue 30 item 1: the 202 says `duplicate` for a source + id the router has seen.
    acceptedEvents: deps.routedEventRecords,
    // Issue 33, ORD-1: with the entitlements the router decides with (partner directory, cached).
    orderingKeys: {
      requirements: deps.orderingKeyRequirements,
      entitlements: async () => (await deps.partners.current()).entitlements,
    },
  };
}

export function ingestApp(deps: IngestAppDependencies): HttpApp {
  const { config } = deps;
  // Built on the first request that gets past authentication: a refused caller costs no adapter.
  let ingest: IngestDependencies | undefined;
  const ingestDependencies = () => (ingest ??= ingestDependenciesOf(deps));
  return async (request) => {
    const route = request.routeKey as RouteKey<'ingest'>;
    switch (route) {
      case 'OPTIONS /events':
        return answerValidationRequest(
          request.headers,
          { allowedOrigins: config.allowedOrigins, ratePerMinute: config.publishRatePerMinute },
          ALLOWED_METHODS,
        );
      case INGEST_ROUTE: {
        const principal = await deps.authenticate(request, scopes.publish);
        // The grants as the partner directory holds them now (within its refresh interval), not as deployed.
        const { publishGrants } = await deps.partners.current();
        const ingest = ingestDependencies();
        const answer = await acceptEvents(request, principal, {
          ...ingest,
          settings: { ...ingest.settings, publishGrants },
        });
        // The id the ingest's, the router's and the deliveries' log lines carry, for the publisher to quote.
        return { ...answer, headers: { ...answer.headers, [CORRELATION_ID_HEADER]: correlationIdOf(request) } };
      }
      default:
        return unroutedAnswer(request);
    }
  };
}
