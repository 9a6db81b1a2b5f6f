/**
 * The ZGW Notificaties API (issue 34; docs/ZGW.md) under `/zgw/api/v1`, as Open Notificaties
 * serves it: /kanaal, /abonnement, POST /notificaties (and its experimental POST /cloudevents),
 * with ZGW clients' HS256 tokens and the ZGW error body. The rules are functions/core/zgw; a
 * notificatie enters Koerier's own ingest. GET /zgw/api/v1/schema/openapi.json is the adapter's
 * own API description (no token, as Open Notificaties serves its schema).
 */
import { correlationIdOf } from '../core/ids/correlation-id.js';
import { jsonResponse, mediaTypeOf, type HttpRequest } from '../core/http/messages.js';
import { API_BASE_PATH } from '../core/http/api-version.js';
import {
  createAbonnement,
  deleteAbonnement,
  listAbonnementen,
  readAbonnement,
  updateAbonnement,
} from '../core/zgw/abonnementen.js';
import { storedAbonnementDeliveries } from '../core/zgw/abonnement-subscription.js';
import { createKanaal, listKanalen, readKanaal, updateKanaal } from '../core/zgw/kanalen.js';
import { publishNotificatie } from '../core/zgw/publish-notificatie.js';
import { publishCloudEvent } from '../core/zgw/publish-cloudevent.js';
import { zgwApiDescription } from '../core/zgw/zgw-api-description.js';
import { zgwRefusal } from '../core/zgw/zgw-problems.js';
import { authenticateZgwClient, zgwScopes, type ZgwScope } from '../core/zgw/zgw-tokens.js';
import { ZGW_BASE_PATH, type RouteKey } from '../config/resources.js';
import type { KoerierDependencies } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';
import { ingestDependenciesOf, type IngestAppDependencies } from './ingest-app.js';
import {
  admitZgwClient,
  cipherAuthSealer,
  ingestCloudEvent,
  outboundCallbackProbe,
  partnerZgwClients,
} from './zgw-ports.js';

/** What the app reads: its handler (functions/handlers/zgw.ts) must compose a builder for each. */
export type ZgwAppDependencies = Omit<IngestAppDependencies, 'authenticate'> &
  Pick<
    KoerierDependencies,
    'clock' | 'credentialCipher' | 'zgwStore' | 'handshakeHttp' | 'subscriptions' | 'admission'
  >;

const EITHER: readonly ZgwScope[] = [zgwScopes.publiceren, zgwScopes.consumeren];
const PUBLISH: readonly ZgwScope[] = [zgwScopes.publiceren];
const CONSUME: readonly ZgwScope[] = [zgwScopes.consumeren];
const NOTIFICATIES = 'POST /zgw/api/v1/notificaties';
const CLOUDEVENTS = 'POST /zgw/api/v1/cloudevents';

export function zgwApp(deps: ZgwAppDependencies): HttpApp {
  const clients = partnerZgwClients(deps.partners, deps.credentialCipher);
  const sealer = cipherAuthSealer(deps.credentialCipher);
  const probe = outboundCallbackProbe(deps.handshakeHttp);
  const deliveries = storedAbonnementDeliveries(deps.subscriptions, deps.credentialCipher, deps.clock);
  const ingest = ingestDependenciesOf(deps);
  const tokenSettings = { maxTokenAgeSeconds: deps.config.zgw.maxTokenAgeSeconds, now: deps.clock };

  return async (request) => {
    const route = request.routeKey as RouteKey<'zgw'>;
    if (route === 'GET /zgw/api/v1/schema/openapi.json')
      return jsonResponse(200, zgwApiDescription(baseUrlOf(request, deps.config.publicBaseUrl)));
    const needed = scopesOf(route);
    if (needed === undefined) return unroutedAnswer(request);
    const principal = await authenticateZgwClient(request.headers['authorization'], needed, clients, tokenSettings);
    admitZgwClient(deps.admission, principal.clientId, route === NOTIFICATIES || route === CLOUDEVENTS);
    const uuid = request.pathParameters['uuid'] ?? '';
    const ctx = { store: deps.zgwStore, baseUrl: baseUrlOf(request, deps.config.publicBaseUrl) };
    const abonnementen = { ...ctx, probe, sealer, deliveries, now: deps.clock };
    const publishing = {
      store: deps.zgwStore,
      ingest: (event: object, key: string, publisher: string) =>
        deps.partners
          .current()
          .then(({ publishGrants }) =>
            ingestCloudEvent(
              event,
              key,
              publisher,
              { ...ingest, settings: { ...ingest.settings, publishGrants } },
              correlationIdOf(request),
            ),
          ),
    };
    if (request.method !== 'GET' && request.method !== 'DELETE') requireMediaType(request, route);
    switch (route) {
      case 'GET /zgw/api/v1/kanaal':
        return listKanalen(ctx, request.query);
      case 'POST /zgw/api/v1/kanaal':
        return createKanaal(ctx, request.body);
      case 'GET /zgw/api/v1/kanaal/{uuid}':
        return readKanaal(ctx, uuid);
      case 'PUT /zgw/api/v1/kanaal/{uuid}':
        return updateKanaal(ctx, uuid, request.body, false);
      case 'PATCH /zgw/api/v1/kanaal/{uuid}':
        return updateKanaal(ctx, uuid, request.body, true);
      case 'GET /zgw/api/v1/abonnement':
        return listAbonnementen(ctx);
      case 'POST /zgw/api/v1/abonnement':
        return createAbonnement(abonnementen, principal.clientId, request.body);
      case 'GET /zgw/api/v1/abonnement/{uuid}':
        return readAbonnement(ctx, uuid);
      case 'PUT /zgw/api/v1/abonnement/{uuid}':
        return updateAbonnement(abonnementen, uuid, request.body, false);
      case 'PATCH /zgw/api/v1/abonnement/{uuid}':
        return updateAbonnement(abonnementen, uuid, request.body, true);
      case 'DELETE /zgw/api/v1/abonnement/{uuid}':
        return deleteAbonnement(abonnementen, uuid);
      case 'POST /zgw/api/v1/notificaties':
        return publishNotificatie(publishing, principal, request.body);
      case 'POST /zgw/api/v1/cloudevents':
        return publishCloudEvent(publishing, principal, request.body);
      default:
        return unroutedAnswer(request);
    }
  };
}

/** The scopes any one of which an operation asks, as Open Notificaties' `required_scopes`; undefined: not a route of this app. */
function scopesOf(route: RouteKey<'zgw'>): readonly ZgwScope[] | undefined {
  switch (route) {
    case 'GET /zgw/api/v1/kanaal':
    case 'GET /zgw/api/v1/kanaal/{uuid}':
    case 'GET /zgw/api/v1/abonnement':
    case 'GET /zgw/api/v1/abonnement/{uuid}':
      return EITHER;
    case 'POST /zgw/api/v1/kanaal':
    case 'PUT /zgw/api/v1/kanaal/{uuid}':
    case 'PATCH /zgw/api/v1/kanaal/{uuid}':
    case 'POST /zgw/api/v1/notificaties':
    case 'POST /zgw/api/v1/cloudevents':
      return PUBLISH;
    case 'POST /zgw/api/v1/abonnement':
    case 'PUT /zgw/api/v1/abonnement/{uuid}':
    case 'PATCH /zgw/api/v1/abonnement/{uuid}':
    case 'DELETE /zgw/api/v1/abonnement/{uuid}':
      return CONSUME;
    case 'GET /zgw/api/v1/schema/openapi.json':
    default:
      return undefined;
  }
}

/** Open Notificaties takes `application/json` bodies only, and `application/cloudevents+json` on /cloudevents: else 415. */
function requireMediaType(request: HttpRequest, route: RouteKey<'zgw'>): void {
  const expected = route === 'POST /zgw/api/v1/cloudevents' ? 'application/cloudevents+json' : 'application/json';
  const given = mediaTypeOf(request.headers['content-type']);
  if (given !== expected)
    throw zgwRefusal(415, 'unsupported_media_type', `Niet ondersteund media type "${given}" in het verzoek.`);
}

/**
 * The adapter's base URL for the `url` members: beside the API's, on the public host
 * (`https://host/v1` → `https://host/zgw/api/v1`), or the request's own host where no public base
 * URL is configured.
 */
function baseUrlOf(request: HttpRequest, publicBaseUrl: string): string {
  if (publicBaseUrl !== '') {
    const origin = publicBaseUrl.endsWith(API_BASE_PATH)
      ? publicBaseUrl.slice(0, -API_BASE_PATH.length)
      : publicBaseUrl;
    return `${origin}${ZGW_BASE_PATH}`;
  }
  const proto = request.headers['x-forwarded-proto'] ?? 'https';
  return `${proto}://${request.headers['host'] ?? 'localhost'}${ZGW_BASE_PATH}`;
}
