/**
 * /abonnement of the ZGW Notificaties API (issue 34): list, create, read, update, partial update,
 * delete. Before an abonnement is stored, the checks Open Notificaties makes, in its order:
 *
 * 1. the callback refuses a notificatie sent *without* `auth` (401 or 403), else 400
 *    `no-auth-on-callback-url` on `callbackUrl`: a consumer must not take notificaties from anyone;
 * 2. the callback takes a test notificatie *with* `auth` (200…209), else 400 `invalid-callback-url`;
 * 3. every kanaal named exists (400 `kanaal_naam` on `naam`) and its filters are consistent with
 *    the kanaal's (400 `inconsistent-abonnement-filters` on `filters`).
 *
 * `auth` is write-only: sealed by the credential cipher, bound to the abonnement, never answered.
 * `sendCloudevents` is honoured (the CloudEvent is delivered); `cloudeventFilters` are refused.
 */
import { randomUUID } from 'node:crypto';
import { emptyResponse, jsonResponse, type HttpResponse } from '../http/messages.js';
import { ABONNEMENT_BODY, ABONNEMENT_PATCH_BODY, type AbonnementPatch } from './zgw-bodies.js';
import { invalidInput, notFound, readZgwBody } from './zgw-problems.js';
import { consistentWithKanaal } from './zgw-filters.js';
import { isUuid, type ZgwResourceContext } from './kanalen.js';
import type { AbonnementRecord, AuthSealer, CallbackProbe } from './ports.js';
import type { AbonnementDeliveries } from './abonnement-subscription.js';

export interface AbonnementContext extends AbonnementRemoval {
  readonly probe: CallbackProbe;
  readonly sealer: AuthSealer;
  readonly now: () => number;
}

export interface AbonnementRemoval extends ZgwResourceContext {
  /** The push subscription behind each abonnement (`abonnement-subscription.ts`). */
  readonly deliveries: AbonnementDeliveries;
}

/** The notificatie Open Notificaties sends to a callback it checks. */
export const TEST_NOTIFICATIE = {
  kanaal: 'test',
  hoofdObject: 'http://some.hoofdobject.nl/',
  resource: 'some_resource',
  resourceUrl: 'http://some.resource.nl/',
  actie: 'create',
  aanmaakdatum: '2019-01-01T12:00:00Z',
  kenmerken: {},
} as const;

export function abonnementResource(abonnement: AbonnementRecord, baseUrl: string) {
  return {
    url: `${baseUrl}/abonnement/${abonnement.uuid}`,
    callbackUrl: abonnement.callbackUrl,
    kanalen: abonnement.kanalen.map((group) => ({ filters: group.filters, naam: group.naam })),
    sendCloudevents: abonnement.sendCloudevents,
    cloudeventFilters: abonnement.cloudeventFilters,
  };
}

export async function listAbonnementen(ctx: ZgwResourceContext): Promise<HttpResponse> {
  const abonnementen = await ctx.store.listAbonnementen();
  return jsonResponse(
    200,
    abonnementen.map((abonnement) => abonnementResource(abonnement, ctx.baseUrl)),
  );
}

export async function readAbonnement(ctx: ZgwResourceContext, uuid: string): Promise<HttpResponse> {
  return jsonResponse(200, abonnementResource(await existing(ctx, uuid), ctx.baseUrl));
}

export async function deleteAbonnement(ctx: AbonnementRemoval, uuid: string): Promise<HttpResponse> {
  if (!isUuid(uuid) || !(await ctx.store.deleteAbonnement(uuid))) throw notFound();
  // After the abonnement: a failure here leaves a subscription a retried DELETE (404) cannot reach, never an abonnement without delivery.
  await ctx.deliveries.remove(uuid);
  return emptyResponse(204);
}

/** POST: throws the 400s above. */
export async function createAbonnement(ctx: AbonnementContext, clientId: string, body: Buffer): Promise<HttpResponse> {
  const input = readZgwBody<AbonnementPatch>(body, ABONNEMENT_BODY);
  const uuid = randomUUID();
  const abonnement = await checked(ctx, input, { uuid, clientId, createdAt: new Date(ctx.now()).toISOString() });
  // The subscription first: an abonnement is never stored without its delivery.
  await ctx.deliveries.put(abonnement, input.auth ?? '');
  await ctx.store.putAbonnement(abonnement);
  const resource = abonnementResource(abonnement, ctx.baseUrl);
  return jsonResponse(201, resource, { location: resource.url });
}

/** PUT (whole, `partial` false) and PATCH; the callback is checked again, with the stored `auth` when none is given. */
export async function updateAbonnement(
  ctx: AbonnementContext,
  uuid: string,
  body: Buffer,
  partial: boolean,
): Promise<HttpResponse> {
  const current = await existing(ctx, uuid);
  const input = readZgwBody<AbonnementPatch>(body, partial ? ABONNEMENT_PATCH_BODY : ABONNEMENT_BODY);
  const merged: AbonnementPatch = partial
    ? {
        callbackUrl: input.callbackUrl ?? current.callbackUrl,
        auth: input.auth ?? (await ctx.sealer.open(current.sealedAuth, uuid)),
        kanalen: input.kanalen ?? current.kanalen.map((group) => ({ ...group, filters: { ...group.filters } })),
        sendCloudevents: input.sendCloudevents ?? current.sendCloudevents,
        cloudeventFilters:
          input.cloudeventFilters ??
          current.cloudeventFilters.map((group) => ({ ...group, filters: { ...group.filters } })),
      }
    : input;
  const next = await checked(ctx, merged, current, partial && input.callbackUrl === undefined);
  await ctx.deliveries.put(next, merged.auth ?? '');
  await ctx.store.putAbonnement(next);
  return jsonResponse(200, abonnementResource(next, ctx.baseUrl));
}

async function existing(ctx: ZgwResourceContext, uuid: string): Promise<AbonnementRecord> {
  const abonnement = isUuid(uuid) ? await ctx.store.readAbonnement(uuid) : undefined;
  if (abonnement === undefined) throw notFound();
  return abonnement;
}

async function checked(
  ctx: AbonnementContext,
  input: AbonnementPatch,
  identity: Pick<AbonnementRecord, 'uuid' | 'clientId' | 'createdAt'>,
  callbackUnchanged = false,
): Promise<AbonnementRecord> {
  refuseCloudEventFilters(input);
  const callbackUrl = input.callbackUrl ?? '';
  const auth = input.auth ?? '';
  // Open Notificaties checks the unauthenticated call only where the callback URL is given (its field validator).
  if (!callbackUnchanged) {
    const withoutAuth = await ctx.probe(callbackUrl, TEST_NOTIFICATIE, undefined);
    if (withoutAuth !== 401 && withoutAuth !== 403)
      throw invalidInput([
        {
          name: 'callbackUrl',
          code: 'no-auth-on-callback-url',
          reason: 'De opgegeven callback URL is niet beveiligd met autorisatie.',
        },
      ]);
  }
  const withAuth = await ctx.probe(callbackUrl, TEST_NOTIFICATIE, auth);
  if (withAuth < 200 || withAuth > 209)
    throw invalidInput([
      {
        name: 'nonFieldErrors',
        code: 'invalid-callback-url',
        reason: 'De opgegeven callback URL kan geen notificaties ontvangen.',
      },
    ]);
  const kanalen = input.kanalen ?? [];
  for (const group of kanalen) {
    const kanaal = await ctx.store.kanaalNamed(group.naam);
    if (kanaal === undefined)
      throw invalidInput([{ name: 'naam', code: 'kanaal_naam', reason: 'Kanaal met deze naam bestaat niet.' }]);
    const names = Object.keys(group.filters ?? {});
    if (names.length > 0 && !consistentWithKanaal(kanaal.filters, names))
      throw invalidInput([
        {
          name: 'filters',
          code: 'inconsistent-abonnement-filters',
          reason: "abonnement filters aren't consistent with kanaal filters",
        },
      ]);
  }
  return {
    ...identity,
    callbackUrl,
    sealedAuth: await ctx.sealer.seal(auth, identity.uuid),
    kanalen: kanalen.map((group) => ({ naam: group.naam, filters: group.filters ?? {} })),
    sendCloudevents: input.sendCloudevents ?? false,
    cloudeventFilters: (input.cloudeventFilters ?? []).map((group) => ({
      typeSubstring: group.typeSubstring,
      filters: group.filters ?? {},
    })),
  };
}

/**
 * Open Notificaties' `cloudeventFilters` (type substrings and filters on the data of CloudEvents sent
 * to its /cloudevents) have no counterpart here: Koerier's own subscriptions filter CloudEvents, so a
 * consumer that wants that subscribes there. Refused before any callback check, rather than stored
 * and ignored (issue 34, docs/ZGW.md).
 */
function refuseCloudEventFilters(input: AbonnementPatch): void {
  if ((input.cloudeventFilters ?? []).length === 0) return;
  throw invalidInput([
    {
      name: 'cloudeventFilters',
      code: 'cloudevent-filters-not-supported',
      reason:
        'cloudeventFilters worden niet ondersteund: neem CloudEvents af met filters via /v1/subscriptions ' +
        '(CloudEvents Subscriptions API), of gebruik sendCloudevents met de kanalen van dit abonnement.',
    },
  ]);
}
