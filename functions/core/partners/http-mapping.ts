/**
 * The partners admin API's HTTP side: reading a partner from the body, its view and ETag, and
 * every refusal the use case throws (a KoerierError each).
 */
import type { QuotaOverrides } from '../quotas/client-quotas.js';
import type { Grant } from '../subscriptions/entitlements.js';
import { jsonNestingDepth, MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH } from '../subscriptions/json-bounds.js';
import { readJsonBody } from '../http/json-body.js';
import { jsonResponse, mediaTypeOf, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { KoerierError, problem, problems } from '../http/problems.js';
import { CLIENT_INPUT_BODY } from './partner-input.js';
import { describeOverlaps, type Partner } from './partner.js';
import type { GrantOverlap } from '../auth/publish-grants.js';

/** What an admin sends: a whole partner but its bookkeeping. */
export interface PartnerInput {
  readonly description?: string;
  readonly publishGrants: readonly string[];
  readonly entitlements: readonly Grant[];
  /** The partner's own quotas (issue 28 item 13); absent: the deployment's defaults. */
  readonly quotas?: QuotaOverrides;
  /** A new ZGW secret in the clear (issue 34), sealed before it is stored; absent: the one held stays. */
  readonly zgwSecret?: string;
}

const MAX_CLIENT_ID_CHARACTERS = 256;

/** Throws the 400 when the path's client id is empty, too long or holds control characters. */
export function checkedClientId(clientId: string): string {
  // eslint-disable-next-line no-control-regex
  if (clientId === '' || clientId.length > MAX_CLIENT_ID_CHARACTERS || /[\u0000-\u001f\u007f]/.test(clientId)) {
    throw invalidPartner(`A client id is 1 to ${MAX_CLIENT_ID_CHARACTERS} characters without control characters.`);
  }
  return clientId;
}

/** Throws the 415, 413 or 400 when the body is not a partner: the 400 from its schema (CLIENT_INPUT_BODY). */
export function readPartnerInput(request: HttpRequest): PartnerInput {
  if (mediaTypeOf(request.headers['content-type']) !== 'application/json') {
    throw new KoerierError(problems.unsupportedMediaType('Send the client as application/json.'));
  }
  if (request.body.length > MAX_JSON_BODY_BYTES)
    throw new KoerierError(problems.payloadTooLarge(`A client body is at most ${MAX_JSON_BODY_BYTES} bytes.`));
  const text = request.body.toString('utf8');
  // Before the parser, which would recurse as deep as the body nests.
  if (jsonNestingDepth(text) > MAX_JSON_DEPTH)
    throw invalidPartner(`Objects and arrays nest at most ${MAX_JSON_DEPTH} levels.`);
  const {
    description,
    publishGrants = [],
    entitlements = [],
    quotas = {},
    zgwSecret,
  } = readJsonBody(text, CLIENT_INPUT_BODY);
  return {
    ...(description === undefined ? {} : { description }),
    publishGrants: [...new Set(publishGrants)],
    entitlements: entitlements.map(({ typePrefix, source }) => ({
      typePrefix,
      ...(source === undefined ? {} : { source }),
    })),
    ...(Object.keys(quotas).length > 0 ? { quotas } : {}),
    ...(zgwSecret === undefined ? {} : { zgwSecret }),
  };
}

export function partnerView(partner: Partner): Record<string, unknown> {
  return {
    clientId: partner.clientId,
    ...(partner.description === undefined ? {} : { description: partner.description }),
    publishGrants: partner.publishGrants,
    entitlements: partner.entitlements,
    ...(partner.quotas === undefined ? {} : { quotas: partner.quotas }),
    // Only that there is one (issue 34): the secret is write-only.
    ...(partner.zgwSecret === undefined ? {} : { zgwSecretSet: true }),
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
  return new KoerierError(problem(412, 'precondition-failed', detail));
}

export function invalidPartner(detail: string): KoerierError {
  return new KoerierError(problem(400, 'invalid-client', detail));
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
      `The publish grants overlap those of another client, so each could publish the other's events: ${describeOverlaps(overlaps)}. Give each client its own sources (EDU-IN).`,
    ),
  );
}

export function changedMeanwhile(): KoerierError {
  return new KoerierError(
    problem(409, 'directory-changed', 'The partner directory changed while this request was processed; send it again.'),
  );
}

export function directoryFull(): KoerierError {
  return new KoerierError(
    problem(409, 'directory-full', 'The partner directory has no room for this change; remove clients no longer used.'),
  );
}
