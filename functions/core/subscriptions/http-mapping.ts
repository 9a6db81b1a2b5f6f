/**
 * The subscriptions API's HTTP side: reading a JSON body within its bounds (review item 9), the
 * page parameters and the `next` link, ETags and `If-Match`, and every refusal the use case
 * throws (a KoerierError each). What is decided lives in `lifecycle.ts` and `subscriptions-service.ts`.
 */
import { API_BASE_PATH } from '../http/api-version.js';
import { bodyRefusal, readJsonBody, readJsonValue } from '../http/json-body.js';
import { jsonResponse, mediaTypeOf, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { KoerierError, problem, problems, type ValidationIssue } from '../http/problems.js';
import type { SubscriptionPage } from './store.js';
import type { Subscription, SubscriptionStatus } from './subscription.js';
import { view } from './subscription-view.js';
import { jsonNestingDepth, MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH } from './json-bounds.js';
import { MERGE_PATCH_BODY, SUBSCRIPTION_BODY } from './subscription-body.js';

const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/** The body as JSON, within its bounds (review item 9); a POST's value is checked by parseSubscriptionInput. */
export function readJson(request: HttpRequest, mediaTypes: readonly string[]): unknown {
  return readJsonValue(boundedText(request, mediaTypes));
}

/** A PATCH body: a JSON merge patch object (RFC 7396), whose merged result is checked as a POST's body is. */
export function readMergePatch(request: HttpRequest): Record<string, unknown> {
  return readJsonBody(boundedText(request, ['application/merge-patch+json', 'application/json']), MERGE_PATCH_BODY);
}

function boundedText(request: HttpRequest, mediaTypes: readonly string[]): string {
  const mediaType = mediaTypeOf(request.headers['content-type']);
  if (!mediaTypes.includes(mediaType)) {
    throw new KoerierError(problems.unsupportedMediaType(`Send the subscription as ${mediaTypes.join(' or ')}.`));
  }
  // Bounded before anything walks it (review item 9): every later step may recurse.
  if (request.body.length > MAX_JSON_BODY_BYTES) {
    throw new KoerierError(problems.payloadTooLarge(`A subscription body is at most ${MAX_JSON_BODY_BYTES} bytes.`));
  }
  const text = request.body.toString('utf8');
  if (jsonNestingDepth(text) > MAX_JSON_DEPTH) throw tooDeep();
  return text;
}

export function readPageRequest(query: Readonly<Record<string, string | undefined>>): {
  readonly limit: number;
  readonly cursor?: string | undefined;
} {
  const limitText = query['limit'];
  const limit = limitText === undefined ? DEFAULT_PAGE_SIZE : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new KoerierError(
      problems.badRequest('invalid-parameter', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`),
    );
  }
  const cursor = query['cursor'];
  return { limit, cursor: cursor || undefined };
}

/** A page of the list, with the next page's address in the body and in a `Link` header. */
export function pageResponse(page: SubscriptionPage, limit: number, now: Date, owner?: string): HttpResponse {
  const ownerParameter = owner === undefined ? '' : `owner=${encodeURIComponent(owner)}&`;
  const next =
    page.cursor === undefined
      ? undefined
      : `${API_BASE_PATH}/subscriptions?${ownerParameter}limit=${limit}&cursor=${encodeURIComponent(page.cursor)}`;
  return jsonResponse(
    200,
    { subscriptions: page.items.map((s) => view(s, now)), next },
    next ? { link: `<${next}>; rel="next"` } : {},
  );
}

/** `owner` names whose subscriptions to list; only an admin may name anyone but itself. */
export function ownerNotAllowed(): KoerierError {
  return new KoerierError(
    problems.forbidden('Listing the subscriptions of other clients (owner) needs the scope "admin".'),
  );
}

export function subscriptionResponse(
  status: number,
  subscription: Subscription,
  now: Date,
  headers: Record<string, string> = {},
): HttpResponse {
  return jsonResponse(status, view(subscription, now), { etag: etagOf(subscription), ...headers });
}

export function etagOf(subscription: Subscription): string {
  return `"${subscription.version}"`;
}

/** 412 when `If-Match` names another version than the current one (`*` matches any). */
export function preconditionFailure(ifMatch: string | undefined, current: Subscription): KoerierError | undefined {
  if (ifMatch === undefined || ifMatch.trim() === etagOf(current) || ifMatch.trim() === '*') return undefined;
  return new KoerierError(
    problem(412, 'precondition-failed', `The subscription is at ${etagOf(current)}, not ${ifMatch.trim()}.`),
  );
}

/** The 400 for a subscription that is not one, naming every member in `errors` as its schema's refusal does. */
export function invalidSubscription(issues: readonly ValidationIssue[]): KoerierError {
  return bodyRefusal(SUBSCRIPTION_BODY, issues);
}

export function invalidCursor(): KoerierError {
  return new KoerierError(problems.badRequest('invalid-parameter', 'cursor is not one this list handed out.'));
}

export function tooDeep(): KoerierError {
  return new KoerierError(
    problems.badRequest('json-too-deep', `Objects and arrays nest at most ${MAX_JSON_DEPTH} levels in a subscription.`),
  );
}

export function notEntitled(reason: string): KoerierError {
  return new KoerierError(problem(403, 'subscription-not-entitled', `${reason} (EDU-7).`));
}

export function agreementNotAllowed(owner: string): KoerierError {
  return new KoerierError(
    problem(
      403,
      'validation-agreement-not-allowed',
      `Client "${owner}" may not skip the validation handshake; no out-of-band agreement is configured for it (WH-5).`,
    ),
  );
}

export function idempotencyKeyReused(existingId: string): KoerierError {
  return new KoerierError(
    problem(
      422,
      'idempotency-key-reused',
      `This Idempotency-Key already created subscription ${existingId} from a different request; a new request needs a new key.`,
    ),
  );
}

export function notFound(id: string): KoerierError {
  return new KoerierError(problems.notFound(`There is no subscription ${id} for this client.`));
}

export function deletedMeanwhile(id: string): KoerierError {
  return new KoerierError(problems.notFound(`Subscription ${id} was deleted while this request was processed.`));
}

/**
 * A ZGW abonnement's subscription is the adapter's to change (issue 34, docs/ZGW.md): changing it here
 * would part it from the abonnement Open Notificaties' clients read. `abonnement` is the path to use.
 */
export function ownedByAbonnement(id: string): KoerierError {
  return new KoerierError(
    problem(
      409,
      'subscription-of-abonnement',
      `Subscription ${id} delivers ZGW abonnement ${id}: change or delete the abonnement (PUT, PATCH or DELETE /zgw/api/v1/abonnement/${id}), not its subscription.`,
      { abonnement: `/zgw/api/v1/abonnement/${id}` },
    ),
  );
}

export function changedMeanwhile(id: string): KoerierError {
  return new KoerierError(
    problem(
      409,
      'subscription-changed',
      `Subscription ${id} changed while this request was processed; read it and try again.`,
    ),
  );
}

/**
 * A credential goes only to the origin it was given for. Kept across a move of the sink to another
 * origin, it would reach whoever runs that one, whom the credential's issuer need not trust.
 */
export function credentialNotCarriedOver(): KoerierError {
  const message =
    'the sink moves to another origin, and the stored credential does not go with it: give sinkcredential again, or null for none';
  return invalidSubscription([
    { attribute: 'sinkcredential', rule: 'required-for-new-origin', requirement: 'EDU-14', message },
  ]);
}

export function notApprovable(status: SubscriptionStatus): KoerierError {
  return new KoerierError(
    problem(409, 'subscription-not-approvable', `The subscription is ${status}; it cannot be approved now.`),
  );
}

export function notRevalidatable(status: SubscriptionStatus, validation: string): KoerierError {
  return new KoerierError(
    problem(
      409,
      'subscription-not-revalidatable',
      validation === 'agreed'
        ? 'Consent for this subscription was agreed out of band; there is no validation request to send.'
        : `The subscription is ${status}; only a pending or rejected one is validated again (a changed sink is validated by its PATCH).`,
    ),
  );
}

export function approvalWindowClosed(): KoerierError {
  return new KoerierError(
    problem(
      410,
      'validation-window-closed',
      'This approval link has expired; the subscriber must validate the sink again.',
    ),
  );
}

export function approvedResponse(id: string): HttpResponse {
  return jsonResponse(200, { id, status: 'active' });
}

/** A PATCH cannot turn push into pull or back: the queues and the handshake are made at creation. */
export function deliveryImmutable(delivery: string): KoerierError {
  return invalidSubscription([
    {
      attribute: 'delivery',
      rule: 'immutable',
      requirement: 'EDU-17',
      message: `delivery stays "${delivery}"; create another subscription to change it`,
    },
  ]);
}

/**
 * The subscription behind a ZGW abonnement (issue 34) is read here but changed only with its
 * abonnement: a change here would part the two (its kanalen, filters or callback no longer what the
 * abonnement says). Marked by `zgwAbonnement`; `bodyShape` marks those made before that mark existed.
 */
export function refuseIfAbonnement(subscription: Subscription): void {
  if (subscription.zgwAbonnement !== undefined || subscription.bodyShape === 'zgw-notificatie')
    throw ownedByAbonnement(subscription.id);
}
