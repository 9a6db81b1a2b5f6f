/**
 * Every problem `type` Koerier answers with, and what it means: the list in the API description
 * and the page `GET /v1/problems/{type}` serves for each, with the title of problem-titles.ts (a
 * slug with a title and no page, or a page and no title, does not compile).
 */
import { requestProblemPages, type ProblemPage } from './problem-pages-requests.js';
import { problemTitles, type ProblemSlug } from './problem-titles.js';

export interface ProblemTypeDescription extends ProblemPage {
  readonly title: string;
}

/** The pages of refusals of what a request asks (authorisation, state, limits, availability). */
const decisionProblemPages = {
  unauthorized: {
    status: [401],
    description:
      'No access token, or one that is expired, not for this audience or otherwise invalid (`WWW-Authenticate: Bearer error="invalid_token"`). Get a new token.',
  },
  forbidden: {
    status: [403],
    description: 'The token lacks the scope this operation needs (`error="insufficient_scope"`).',
  },
  'source-not-granted': {
    status: [403],
    description: 'This publisher has no publish grant for the event’s `source` (EDU-IN).',
  },
  'subscription-not-entitled': {
    status: [403],
    description: 'The subscriber is not entitled to the events this subscription asks for (EDU-7).',
  },
  'origin-not-allowed': {
    status: [403],
    description: 'The webhook validation request names an origin that may not deliver to Koerier (WH-7).',
  },
  'validation-agreement-not-allowed': {
    status: [403],
    description: 'This client may not skip the webhook validation handshake by agreement (WH-5).',
  },
  'type-reserved': {
    status: [403],
    description: 'The event type is reserved for Koerier’s own operational events; partners may not publish it.',
  },
  'replay-not-entitled': {
    status: [403],
    description: 'The replay asks for events the subscriber is not entitled to (EDU-7).',
  },
  'replay-beyond-subscription': {
    status: [403],
    description: 'The replay asks for events outside what the subscription receives (its types and filters).',
  },
  'edge-bypassed': {
    status: [403],
    description: 'The request went around the CloudFront distribution that fronts this deployment.',
  },
  'invalid-contract': {
    status: [400],
    description:
      'The contract request breaks a rule of the register (name, version, owner and contact point, EDU-22); `errors` names each member.',
  },
  'contract-document-invalid': {
    status: [400],
    description:
      'The OpenAPI or AsyncAPI parser refused the document (EDU-21); `errors` lists its findings with where in the document they are.',
  },
  'data-contract-violation': {
    status: [400],
    description:
      'An event’s data does not follow the contract bound to its type in `enforce` mode (EDU-21); `errors` names each violation by JSON Pointer. No event of the request was accepted.',
  },
  'contract-version-immutable': {
    status: [409],
    description: 'A published version never changes (EDU-6): publish the changed document as a new version.',
  },
  'contract-kind-mismatch': {
    status: [409],
    description: 'The contract holds documents of the other kind (OpenAPI webhook or AsyncAPI data).',
  },
  'contract-change-breaking': {
    status: [422],
    description:
      'The new version breaks the previous one within the same major version (EDU-21): publish it as a new major version, or an admin forces it.',
  },
  'contract-status-move': {
    status: [409],
    description: 'A version cannot move from its status to the one asked (retired is final).',
  },
  'contract-changed': {
    status: [409],
    description: 'The contract changed while the request was processed; send it again.',
  },
  'contract-not-bindable': {
    status: [409],
    description:
      'The contract message named in a binding does not exist or has no payload schema that can check an event’s data.',
  },
  'not-found': {
    status: [404],
    description: 'No such resource, or not one this client may see (another client’s looks the same).',
  },
  'method-not-allowed': {
    status: [405],
    description: 'The path exists, but not with this method; `Allow` lists the methods it has.',
  },
  'request-timeout': { status: [408], description: 'The request did not arrive in time.' },
  'subscription-changed': {
    status: [409],
    description: 'The subscription changed meanwhile. Read it again and retry.',
  },
  'subscription-not-approvable': {
    status: [409],
    description: 'The subscription is not waiting for the validation this request answers.',
  },
  'subscription-of-abonnement': {
    status: [409],
    description:
      'The subscription delivers a ZGW abonnement (docs/ZGW.md): change or delete the abonnement at the URL in `abonnement` (`/zgw/api/v1/abonnement/{uuid}`), not its subscription. Reading it, its dead letters and their redrive stay here.',
  },
  'receive-too-large-to-replay': {
    status: [422],
    description:
      'A pull receive with an `Idempotency-Key` stores its answer for repeats, so it answers at most 320 KiB; the next event alone is larger. It is back in the queue: receive it without an `Idempotency-Key` (docs/PULL.md).',
  },
  'not-a-pull-subscription': {
    status: [409],
    description: 'The subscription delivers by push; only pull subscriptions are received from.',
  },
  'not-a-push-subscription': {
    status: [409],
    description: 'A pull subscription pauses by not receiving: its events wait in its queue.',
  },
  'replay-running': {
    status: [409],
    description: 'A replay for this subscription is running already; wait for it or cancel it.',
  },
  'quota-exceeded': {
    status: [409, 413, 429],
    description:
      "The client holds as much of a resource as its quota allows (409: pull subscriptions, replays running at once; free one), was granted as many upload bytes this hour as it allows (429: retry after `Retry-After`), or asked for one upload larger than the whole hourly quota (413). `quota` names the quota, `limit` its limit, `used` what the client holds or was granted; operators raise a partner's quota with `quotas` in PUT /clients/{clientId}.",
  },
  'replay-not-running': {
    status: [409],
    description: 'The replay is not running, so it cannot be cancelled.',
  },
  'subscription-not-active': {
    status: [409],
    description: 'The subscription is not active (resume a suspended one first).',
  },
  'subscription-not-suspended': {
    status: [409],
    description: 'Only a suspended subscription can be resumed.',
  },
  'subscription-not-revalidatable': {
    status: [409],
    description: 'This subscription cannot be validated again in its present state.',
  },
  'credential-required': {
    status: [409],
    description: 'The subscription needs a sink credential before it can be resumed (WH-3).',
  },
  'publish-grants-overlap': {
    status: [409],
    description: 'Another client already holds a publish grant for these sources.',
  },
  'directory-changed': {
    status: [409],
    description: 'The partner directory changed meanwhile. Read it again and retry.',
  },
  'directory-full': {
    status: [409],
    description: 'The partner directory holds as many clients, grants or entitlements as it can.',
  },
  'validation-window-closed': {
    status: [410],
    description: 'The validation callback came after its window; revalidate the subscription.',
  },
  'payload-expired': {
    status: [410],
    description: 'The data behind this dataref was kept for its retention and is gone.',
  },
  'precondition-failed': {
    status: [412],
    description: '`If-Match` names another version, or `If-None-Match: *` found the resource.',
  },
  'payload-too-large': {
    status: [413],
    description: 'The event or the request is larger than Koerier accepts; upload large data with POST /payloads.',
  },
  'unsupported-media-type': {
    status: [415],
    description: 'The Content-Type is not one this operation takes.',
  },
  'expectation-failed': {
    status: [417],
    description: 'The request has an `Expect` other than `100-continue`.',
  },
  'rate-limited': {
    status: [429],
    description:
      'The client sent more than its limit (per client, never per address: EDU-20). Nothing was done; retry after `Retry-After`.',
  },
  'too-many-polls': {
    status: [429],
    description: 'Too many long polls at once for this subscription or client; retry after `Retry-After`.',
  },
  'request-header-fields-too-large': {
    status: [431],
    description: 'More header lines, or a larger header section, than Koerier reads.',
  },
  internal: {
    status: [500],
    description:
      'Something unexpected failed; nothing more is said. Retry, with the same Idempotency-Key where the operation takes one.',
  },
  'events-not-stored': {
    status: [503],
    description:
      'The events could not be stored in the inbound queue; none was accepted. Retry after `Retry-After` with the same Idempotency-Key.',
  },
  unavailable: {
    status: [503],
    description: 'A dependency is unavailable. Retry after `Retry-After`.',
  },
} as const;

const pages = { ...requestProblemPages, ...decisionProblemPages } as const satisfies Record<ProblemSlug, ProblemPage>;

export type { ProblemSlug };

export const problemTypes: Readonly<Record<ProblemSlug, ProblemTypeDescription>> = Object.fromEntries(
  (Object.keys(pages) as ProblemSlug[]).map((slug): [ProblemSlug, ProblemTypeDescription] => [
    slug,
    { title: problemTitles[slug], ...pages[slug] },
  ]),
) as Record<ProblemSlug, ProblemTypeDescription>;

export function isProblemSlug(slug: string): slug is ProblemSlug {
  return Object.hasOwn(problemTypes, slug);
}
