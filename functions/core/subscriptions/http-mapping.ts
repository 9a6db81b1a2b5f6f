/**
 * The subscriptions API's HTTP side: reading a JSON body within its bounds (review item 9), the
 * page parameters and the `next` link, ETags and `If-Match`, and every problem+json answer the
 * use case gives. What is decided lives in `lifecycle.ts` and `subscriptions-service.ts`.
 */
import { jsonResponse, mediaTypeOf, type HttpRequest, type HttpResponse } from '../http/messages.js';
import { problem, problemResponse, problems, type ValidationIssue } from '../http/problems.js';
import type { SubscriptionPage } from './store.js';
import type { Subscription, SubscriptionStatus } from './subscription.js';
import { view } from './subscription-view.js';
import { jsonNestingDepth, MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH } from './json-bounds.js';

const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

export type Answer<T> = { readonly value: T } | { readonly problem: HttpResponse };

export function readJson(request: HttpRequest, mediaTypes: readonly string[]): Answer<unknown> {
  const mediaType = mediaTypeOf(request.headers['content-type']);
  if (!mediaTypes.includes(mediaType)) {
    return { problem: problemResponse(problems.unsupportedMediaType(`Send the subscription as ${mediaTypes.join(' or ')}.`)) };
  }
  // Bounded before anything walks it (review item 9): every later step may recurse.
  if (request.body.length > MAX_JSON_BODY_BYTES) {
    return { problem: problemResponse(problems.payloadTooLarge(`A subscription body is at most ${MAX_JSON_BODY_BYTES} bytes.`)) };
  }
  const text = request.body.toString('utf8');
  if (jsonNestingDepth(text) > MAX_JSON_DEPTH) return { problem: tooDeep() };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { problem: problemResponse(problems.badRequest('malformed-json', 'Malformed JSON', 'The request body is not valid JSON.')) };
  }
}

/** A PATCH body: a JSON merge patch object (RFC 7396). */
export function readMergePatch(request: HttpRequest): Answer<Record<string, unknown>> {
  const body = readJson(request, ['application/merge-patch+json', 'application/json']);
  if ('problem' in body) return body;
  if (typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) {
    return {
      problem: problemResponse(problems.badRequest('invalid-subscription', 'Invalid Subscription', 'A PATCH body is a JSON merge patch object (RFC 7396).')),
    };
  }
  return { value: body.value as Record<string, unknown> };
}

export function readPageRequest(query: Readonly<Record<string, string | undefined>>): Answer<{ readonly limit: number; readonly cursor?: string }> {
  const limitText = query['limit'];
  const limit = limitText === undefined ? DEFAULT_PAGE_SIZE : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    return { problem: problemResponse(problems.badRequest('invalid-parameter', 'Invalid Parameter', `limit must be an integer from 1 to ${MAX_PAGE_SIZE}.`)) };
  }
  const cursor = query['cursor'];
  return { value: { limit, ...(cursor ? { cursor } : {}) } };
}

/** A page of the list, with the next page's address in the body and in a `Link` header. */
export function pageResponse(page: SubscriptionPage, limit: number, now: Date): HttpResponse {
  const next = page.cursor === undefined ? undefined : `/subscriptions?limit=${limit}&cursor=${encodeURIComponent(page.cursor)}`;
  return jsonResponse(200, { subscriptions: page.items.map((s) => view(s, now)), ...(next ? { next } : {}) }, next ? { link: `<${next}>; rel="next"` } : {});
}

export function subscriptionResponse(status: number, subscription: Subscription, now: Date, headers: Record<string, string> = {}): HttpResponse {
  return jsonResponse(status, view(subscription, now), { etag: etagOf(subscription), ...headers });
}

export function etagOf(subscription: Subscription): string {
  return `"${subscription.version}"`;
}

/** 412 when `If-Match` names another version than the current one (`*` matches any). */
export function preconditionFailure(ifMatch: string | undefined, current: Subscription): HttpResponse | undefined {
  if (ifMatch === undefined || ifMatch.trim() === etagOf(current) || ifMatch.trim() === '*') return undefined;
  return problemResponse(problem(412, 'precondition-failed', 'Precondition Failed', `The subscription is at ${etagOf(current)}, not ${ifMatch.trim()}.`));
}

export function invalidSubscription(issues: readonly ValidationIssue[]): HttpResponse {
  return problemResponse(
    problems.badRequest('invalid-subscription', 'Invalid Subscription', `The subscription has ${issues.length} error(s); see errors.`, issues),
  );
}

export function invalidCursor(): HttpResponse {
  return problemResponse(problems.badRequest('invalid-parameter', 'Invalid Parameter', 'cursor is not one this list handed out.'));
}

export function tooDeep(): HttpResponse {
  return problemResponse(
    problems.badRequest('json-too-deep', 'JSON Nested Too Deeply', `Objects and arrays nest at most ${MAX_JSON_DEPTH} levels in a subscription.`),
  );
}

export function notEntitled(reason: string): HttpResponse {
  return problemResponse(problem(403, 'subscription-not-entitled', 'Not Entitled', `${reason} (EDU-7).`));
}

export function agreementNotAllowed(owner: string): HttpResponse {
  return problemResponse(
    problem(
      403,
      'validation-agreement-not-allowed',
      'Validation Agreement Not Allowed',
      `Client "${owner}" may not skip the validation handshake; no out-of-band agreement is configured for it (WH-5).`,
    ),
  );
}

export function idempotencyKeyReused(existingId: string): HttpResponse {
  return problemResponse(
    problem(
      422,
      'idempotency-key-reused',
      'Idempotency Key Reused',
      `This Idempotency-Key already created subscription ${existingId} from a different request; a new request needs a new key.`,
    ),
  );
}

export function notFound(id: string): HttpResponse {
  return problemResponse(problems.notFound(`There is no subscription ${id} for this client.`));
}

export function deletedMeanwhile(id: string): HttpResponse {
  return problemResponse(problems.notFound(`Subscription ${id} was deleted while this request was processed.`));
}

export function changedMeanwhile(id: string): HttpResponse {
  return problemResponse(
    problem(409, 'subscription-changed', 'Conflict', `Subscription ${id} changed while this request was processed; read it and try again.`),
  );
}

/**
 * A credential goes only to the origin it was given for. Kept across a move of the sink to another
 * origin, it would reach whoever runs that one, whom the credential's issuer need not trust.
 */
export function credentialNotCarriedOver(): HttpResponse {
  const message = 'the sink moves to another origin, and the stored credential does not go with it: give sinkcredential again, or null for none';
  return invalidSubscription([{ attribute: 'sinkcredential', rule: 'required-for-new-origin', requirement: 'EDU-14', message }]);
}

export function notApprovable(status: SubscriptionStatus): HttpResponse {
  return problemResponse(problem(409, 'subscription-not-approvable', 'Not Approvable', `The subscription is ${status}; it cannot be approved now.`));
}

export function approvalWindowClosed(): HttpResponse {
  return problemResponse(
    problem(410, 'validation-window-closed', 'Approval Window Closed', 'This approval link has expired; the subscriber must validate the sink again.'),
  );
}

export function approvedResponse(id: string): HttpResponse {
  return jsonResponse(200, { id, status: 'active' });
}

/** A PATCH cannot turn push into pull or back: the queues and the handshake are made at creation. */
export function deliveryImmutable(delivery: string): HttpResponse {
  return invalidSubscription([
    { attribute: 'delivery', rule: 'immutable', requirement: 'EDU-17', message: `delivery stays "${delivery}"; create another subscription to change it` },
  ]);
}
