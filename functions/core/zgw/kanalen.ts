/**
 * /kanaal of the ZGW Notificaties API (issue 34): list (with `?naam=`), create, read, and the
 * update and partial update Open Notificaties also serves. A kanaal's name is unique and does not
 * change; its `filters` are the kenmerken notificaties on it may carry (./zgw-filters.ts).
 * Answers are the ZGW resource shape, with `url` under the adapter's base URL.
 */
import { randomUUID } from 'node:crypto';
import { jsonResponse, type HttpResponse } from '../http/messages.js';
import { KANAAL_BODY, KANAAL_PATCH_BODY, type KanaalInput } from './zgw-bodies.js';
import { invalidInput, notFound, readZgwBody } from './zgw-problems.js';
import { KanaalNameTakenError, type KanaalRecord, type ZgwStore } from './ports.js';

export interface ZgwResourceContext {
  readonly store: ZgwStore;
  /** The adapter's base URL, `https://…/zgw/api/v1`, without a trailing slash. */
  readonly baseUrl: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function kanaalResource(kanaal: KanaalRecord, baseUrl: string) {
  return {
    url: `${baseUrl}/kanaal/${kanaal.uuid}`,
    naam: kanaal.naam,
    documentatieLink: kanaal.documentatieLink,
    filters: kanaal.filters,
  };
}

export async function listKanalen(ctx: ZgwResourceContext, query: Readonly<Record<string, string>>) {
  const unknown = Object.keys(query).filter((name) => name !== 'naam');
  // vng-api-common's CheckQueryParamsMixin: a parameter the endpoint does not know is a 400.
  if (unknown.length > 0)
    throw invalidInput(
      unknown.map((name) => ({ name, code: 'unknown-parameters', reason: 'Onbekende query parameter.' })),
    );
  const naam = query['naam'];
  const kanalen = (await ctx.store.listKanalen()).filter((kanaal) => naam === undefined || kanaal.naam === naam);
  return jsonResponse(
    200,
    kanalen.map((kanaal) => kanaalResource(kanaal, ctx.baseUrl)),
  );
}

export async function readKanaal(ctx: ZgwResourceContext, uuid: string): Promise<HttpResponse> {
  const kanaal = isUuid(uuid) ? await ctx.store.readKanaal(uuid) : undefined;
  if (kanaal === undefined) throw notFound();
  return jsonResponse(200, kanaalResource(kanaal, ctx.baseUrl));
}

/** Throws the 400 `unique` when the name is taken. */
export async function createKanaal(ctx: ZgwResourceContext, body: Buffer): Promise<HttpResponse> {
  const input = readZgwBody<KanaalInput>(body, KANAAL_BODY);
  const kanaal: KanaalRecord = {
    uuid: randomUUID(),
    naam: input.naam,
    documentatieLink: input.documentatieLink ?? '',
    filters: input.filters ?? [],
  };
  try {
    await ctx.store.createKanaal(kanaal);
  } catch (error) {
    if (error instanceof KanaalNameTakenError) throw nameTaken();
    throw error;
  }
  const resource = kanaalResource(kanaal, ctx.baseUrl);
  return jsonResponse(201, resource, { location: resource.url });
}

/** PUT (whole) and PATCH (partial); the name may not change (400 `wijzigen-niet-toegelaten`). */
export async function updateKanaal(
  ctx: ZgwResourceContext,
  uuid: string,
  body: Buffer,
  partial: boolean,
): Promise<HttpResponse> {
  const kanaal = isUuid(uuid) ? await ctx.store.readKanaal(uuid) : undefined;
  if (kanaal === undefined) throw notFound();
  const input = readZgwBody<Partial<KanaalInput>>(body, partial ? KANAAL_PATCH_BODY : KANAAL_BODY);
  if (input.naam !== undefined && input.naam !== kanaal.naam)
    throw invalidInput([
      { name: 'naam', code: 'wijzigen-niet-toegelaten', reason: 'Dit veld mag niet gewijzigd worden.' },
    ]);
  const next: KanaalRecord = {
    ...kanaal,
    documentatieLink: input.documentatieLink ?? (partial ? kanaal.documentatieLink : ''),
    filters: input.filters ?? (partial ? kanaal.filters : []),
  };
  await ctx.store.replaceKanaal(next);
  return jsonResponse(200, kanaalResource(next, ctx.baseUrl));
}

function nameTaken() {
  return invalidInput([{ name: 'naam', code: 'unique', reason: 'kanaal met deze naam bestaat al.' }]);
}
