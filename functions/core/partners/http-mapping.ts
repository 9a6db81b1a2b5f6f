/**
 * The partners admin API's HTTP side: reading a partner from the body, its view and ETag, and
 * every refusal the use case throws (a KoerierError each).
 */
import { parseQuotaOverrides, type QuotaOverrides } from '../quotas/client-quotas.js';
import { parseEntitlements, type Grant } from '../subscriptions/entitlements.js';
import { jsonNestingDepth, MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH } from '../subscriptions/json-bounds.js';
import { malformedJsonProblem } from '../http/malformed-json.js';
import { jsonResponse, mediaTypeOf, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { KoerierError, problem, problems } from '../http/problems.js';
import { describeOverlaps, type Partner } from './partner.js';
import type { GrantOverlap } from '../auth/publish-grants.js';

/** What an admin sends: a whole partner but its bookkeeping. */
export interface PartnerInput {
  readonly description?: string;
  readonly publishGrants: readonly string[];
  readonly entitlements: readonly Grant[];
  /** The partner's own quotas (issue 28 item 13); absent: the deployment's defaults. */
  readonly quotas?: QuotaOverrides;
}

const MAX_CLIENT_ID_CHARACTERS = 256;
const MAX_DESCRIPTION_CHARACTERS = 1024;
const MAX_GRANTS = 100;
const MAX_GRANT_CHARACTERS = 1024;

/** Throws the 400 when the path's client id is empty, too long or holds control characters. */
export function checkedClientId(clientId: string): string {
  // eslint-disable-next-line no-control-regex
  if (clientId === '' || clientId.length > MAX_CLIENT_ID_CHARACTERS || /[\u0000-\u001f\u007f]/.test(clientId)) {
    throw invalidPartner(`A client id is 1 to ${MAX_CLIENT_ID_CHARACTERS} characters without control characters.`);
  }
  return clientId;
}

/** Throws the 415, 413 or 400 when the body is not a partner. */
export function readPartnerInput(request: HttpRequest): PartnerInput {
  if (mediaTypeOf(request.headers['content-type']) !== 'application/json') {
    throw new KoerierError(problems.unsupportedMediaType('Send the client as application/json.'));
  }
  if (request.body.length > MAX_JSON_BODY_BYTES)
    throw new KoerierError(problems.payloadTooLarge(`A client body is at most ${MAX_JSON_BODY_BYTES} bytes.`));
  const text = request.body.toString('utf8');
  if (jsonNestingDepth(text) > MAX_JSON_DEPTH)
    throw invalidPartner(`Objects and arrays nest at most ${MAX_JSON_DEPTH} levels.`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new KoerierError(malformedJsonProblem());
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalidPartner('A client is a JSON object.');
  const fields = body as Record<string, unknown>;
  const unknownFields = Object.keys(fields).filter(
    (name) => !['description', 'publishGrants', 'entitlements', 'quotas'].includes(name),
  );
  if (unknownFields.length > 0)
    throw invalidPartner(
      `Unknown member(s): ${unknownFields.join(', ')}; a client has description, publishGrants, entitlements and quotas.`,
    );
  const { description, publishGrants = [], entitlements = [] } = fields;
  const quotas = fields['quotas'] === undefined ? {} : parseQuotaOverrides(fields['quotas']);
  if (quotas.error) throw invalidPartner(`${quotas.error}.`);
  if (
    description !== undefined &&
    (typeof description !== 'string' || description.length > MAX_DESCRIPTION_CHARACTERS)
  ) {
    throw invalidPartner(`description is a string of at most ${MAX_DESCRIPTION_CHARACTERS} characters.`);
  }
  if (
    !Array.isArray(publishGrants) ||
    publishGrants.length > MAX_GRANTS ||
    !publishGrants.every((g) => typeof g === 'string' && g.length <= MAX_GRANT_CHARACTERS)
  ) {
    throw invalidPartner(
      `publishGrants is a list of at most ${MAX_GRANTS} source grants (strings of at most ${MAX_GRANT_CHARACTERS} characters).`,
    );
  }
  if (!Array.isArray(entitlements) || entitlements.length > MAX_GRANTS)
    throw invalidPartner(`entitlements is a list of at most ${MAX_GRANTS} grants.`);
  let parsed: readonly Grant[];
  try {
    // The rules KOERIER_ENTITLEMENTS is read with, so the API accepts what the configuration would.
    parsed = parseEntitlements(JSON.stringify({ client: entitlements })).get('client') ?? [];
  } catch (error) {
    throw invalidPartner(`entitlements: ${(error as Error).message.replace('"client"', 'this client')}.`);
  }
  if (
    parsed.some(
      (grant) => grant.typePrefix.length > MAX_GRANT_CHARACTERS || (grant.source?.length ?? 0) > MAX_GRANT_CHARACTERS,
    )
  ) {
    throw invalidPartner(`An entitlement's typePrefix and source are at most ${MAX_GRANT_CHARACTERS} characters.`);
  }
  return {
    ...(description === undefined ? {} : { description }),
    publishGrants: [...new Set(publishGrants as string[])],
    entitlements: parsed,
    ...(quotas.quotas && Object.keys(quotas.quotas).length > 0 ? { quotas: quotas.quotas } : {}),
  };
}

export function partnerView(partner: Partner): Record<string, unknown> {
  return {
    clientId: partner.clientId,
    ...(partner.description === undefined ? {} : { description: partner.description }),
    publishGrants: partner.publishGrants,
    entitlements: partner.entitlements,
    ...(partner.quotas === undefined ? {} : { quotas: partner.quotas }),
    version: partner.version,
    createdAt: partner.createdAt,
    updatedAt: partner.updatedAt,
    updatedBy: partner.updatedBy,
  };
}

export function partnerResponse(status: number, partner: Partner): HttpResponse {
  return jsonResponse(status, partnerView(partner), { etag: etagOf(partner) });
}

export function etagOf(partner: Partner): string {
  return `"${partner.version}"`;
}

/** Throws the 412 when `If-Match` names another version (`*`: any existing one) or `If-None-Match: *` finds one. */
export function checkPreconditions(request: HttpRequest, current: Partner | undefined): void {
  const ifMatch = request.headers['if-match']?.trim();
  const ifNoneMatch = request.headers['if-none-match']?.trim();
  if (ifNoneMatch === '*' && current !== undefined)
    throw preconditionFailed(`Client "${current.clientId}" exists already (If-None-Match: *).`);
  if (ifMatch === undefined) return;
  if (current === undefined) throw preconditionFailed('There is no such client to match If-Match against.');
  if (ifMatch !== '*' && ifMatch !== etagOf(current))
    throw preconditionFailed(`The client is at ${etagOf(current)}, not ${ifMatch}.`);
}

function preconditionFailed(detail: string): KoerierError {
  return new KoerierError(problem(412, 'precondition-failed', 'Precondition Failed', detail));
}

export function invalidPartner(detail: string): KoerierError {
  return new KoerierError(problems.badRequest('invalid-client', 'Invalid Client', detail));
}

export function notFound(clientId: string): KoerierError {
  return new KoerierError(problems.notFound(`There is no client "${clientId}" in the partner directory.`));
}

/** Review #15: two clients whose grants cover one source could publish each other's events. */
export function grantsOverlap(overlaps: readonly GrantOverlap[]): KoerierError {
  return new KoerierError(
    problem(
      409,
      'publish-grants-overlap',
      'Publish Grants Overlap',
      `The publish grants overlap those of another client, so each could publish the other's events: ${describeOverlaps(overlaps)}. Give each client its own sources (EDU-IN).`,
    ),
  );
}

export function changedMeanwhile(): KoerierError {
  return new KoerierError(
    problem(
      409,
      'directory-changed',
      'Conflict',
      'The partner directory changed while this request was processed; send it again.',
    ),
  );
}

export function directoryFull(): KoerierError {
  return new KoerierError(
    problem(
      409,
      'directory-full',
      'Conflict',
      'The partner directory has no room for this change; remove clients no longer used.',
    ),
  );
}
