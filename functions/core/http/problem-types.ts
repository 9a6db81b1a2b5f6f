/**
 * Every problem `type` Koerier answers with, and what it means: the catalogue `problem()` takes its
 * slugs from (a slug missing here does not compile), the list in the API description and the page
 * `GET /v1/problems/{type}` serves for each.
 */

export interface ProblemTypeDescription {
  readonly title: string;
  /** The statuses it comes with. */
  readonly status: readonly number[];
  /** When it happens and what to do about it. */
  readonly description: string;
}

export const problemTypes = {
  'invalid-cloudevent': {
    title: 'Invalid CloudEvent',
    status: [400],
    description:
      'An event breaks a MUST of CloudEvents 1.0 or the NL GOV profile; `errors` lists every violation with its requirement ID. Fix the event.',
  },
  'malformed-json': {
    title: 'Malformed JSON',
    status: [400],
    description: 'The body is not well-formed JSON (or not UTF-8). Send valid JSON.',
  },
  'invalid-json': {
    title: 'Invalid JSON',
    status: [400],
    description: 'The JSON is well-formed but not of the shape this operation takes.',
  },
  'json-too-deep': {
    title: 'JSON nested too deeply',
    status: [400],
    description: 'The body nests objects or arrays deeper than Koerier reads.',
  },
  'malformed-request': {
    title: 'Malformed request',
    status: [400],
    description: 'The HTTP request itself is malformed (framing, header syntax, encoding).',
  },
  'invalid-host': {
    title: 'Invalid Host',
    status: [400],
    description: 'The request has no Host header, or more than one.',
  },
  'invalid-parameter': {
    title: 'Invalid parameter',
    status: [400],
    description: 'A path or query parameter (a limit, a cursor, an id) is not valid; `detail` says which.',
  },
  'idempotency-key-missing': {
    title: 'Idempotency-Key missing',
    status: [400],
    description:
      'This operation needs an `Idempotency-Key` header: a new UUIDv4 per operation, the same one for its retries (EDU-IDEM).',
  },
  'idempotency-key-malformed': {
    title: 'Idempotency-Key malformed',
    status: [400],
    description: 'The `Idempotency-Key` is not one UUIDv4.',
  },
  'idempotency-key-reused': {
    title: 'Idempotency-Key reused',
    status: [422],
    description: 'This key was used before with another request. Use a new key for a new operation.',
  },
  'idempotency-key-in-progress': {
    title: 'Idempotency-Key in progress',
    status: [409],
    description: 'A request with this key is still being handled. Retry after `Retry-After` with the same key.',
  },
  'invalid-subscription': {
    title: 'Invalid subscription',
    status: [400],
    description: 'The subscription request breaks a rule; `errors` names every member.',
  },
  'invalid-pull-request': {
    title: 'Invalid pull request',
    status: [400],
    description: 'A receive or settle request breaks a rule; `errors` names each member.',
  },
  'invalid-redrive-selection': {
    title: 'Invalid redrive selection',
    status: [400],
    description: 'The selection of dead letters to redrive is not valid.',
  },
  'invalid-upload': {
    title: 'Invalid upload request',
    status: [400],
    description: 'The request for an upload grant breaks a rule; `errors` names the members.',
  },
  'upload-unknown': {
    title: 'Unknown upload',
    status: [400],
    description: 'The event names an upload Koerier did not grant to this publisher, or one that expired.',
  },
  'upload-incomplete': {
    title: 'Upload incomplete',
    status: [400],
    description: 'The uploaded object is missing, or not the size and digest promised in the grant.',
  },
  'upload-with-data': {
    title: 'Upload and data',
    status: [400],
    description: 'An event that refers to an upload carries no `data` of its own.',
  },
  'reserved-attribute': {
    title: 'Reserved extension attribute',
    status: [400],
    description:
      'The event carries an extension attribute Koerier sets itself (`koerierdatadigest`, `koerierdatasize`).',
  },
  'invalid-replay-request': {
    title: 'Invalid replay request',
    status: [400],
    description: 'The replay request breaks a rule; `errors` names each member.',
  },
  'invalid-client': {
    title: 'Invalid client',
    status: [400],
    description: 'The partner directory entry for a client breaks a rule; `errors` names the members.',
  },
  unauthorized: {
    title: 'Unauthorized',
    status: [401],
    description:
      'No access token, or one that is expired, not for this audience or otherwise invalid (`WWW-Authenticate: Bearer error="invalid_token"`). Get a new token.',
  },
  forbidden: {
    title: 'Forbidden',
    status: [403],
    description: 'The token lacks the scope this operation needs (`error="insufficient_scope"`).',
  },
  'source-not-granted': {
    title: 'Source not granted',
    status: [403],
    description: 'This publisher has no publish grant for the event’s `source` (EDU-IN).',
  },
  'subscription-not-entitled': {
    title: 'Not entitled',
    status: [403],
    description: 'The subscriber is not entitled to the events this subscription asks for (EDU-7).',
  },
  'origin-not-allowed': {
    title: 'Origin not allowed',
    status: [403],
    description: 'The webhook validation request names an origin that may not deliver to Koerier (WH-7).',
  },
  'validation-agreement-not-allowed': {
    title: 'Validation agreement not allowed',
    status: [403],
    description: 'This client may not skip the webhook validation handshake by agreement (WH-5).',
  },
  'type-reserved': {
    title: 'Reserved event type',
    status: [403],
    description: 'The event type is reserved for Koerier’s own operational events; partners may not publish it.',
  },
  'replay-not-entitled': {
    title: 'Replay beyond entitlement',
    status: [403],
    description: 'The replay asks for events the subscriber is not entitled to (EDU-7).',
  },
  'replay-beyond-subscription': {
    title: 'Replay beyond the subscription',
    status: [403],
    description: 'The replay asks for events outside what the subscription receives (its types and filters).',
  },
  'edge-bypassed': {
    title: 'Not through the edge',
    status: [403],
    description: 'The request went around the CloudFront distribution that fronts this deployment.',
  },
  'invalid-contract': {
    title: 'Invalid Contract',
    status: [400],
    description:
      'The contract request breaks a rule of the register (name, version, owner and contact point, EDU-22); `errors` names each member.',
  },
  'contract-document-invalid': {
    title: 'Invalid Contract Document',
    status: [400],
    description:
      'The OpenAPI or AsyncAPI parser refused the document (EDU-21); `errors` lists its findings with where in the document they are.',
  },
  'data-contract-violation': {
    title: 'Data Contract Violation',
    status: [400],
    description:
      'An event’s data does not follow the contract bound to its type in `enforce` mode (EDU-21); `errors` names each violation by JSON Pointer. No event of the request was accepted.',
  },
  'contract-version-immutable': {
    title: 'Contract version immutable',
    status: [409],
    description: 'A published version never changes (EDU-6): publish the changed document as a new version.',
  },
  'contract-kind-mismatch': {
    title: 'Contract kind mismatch',
    status: [409],
    description: 'The contract holds documents of the other kind (OpenAPI webhook or AsyncAPI data).',
  },
  'contract-change-breaking': {
    title: 'Breaking Change',
    status: [422],
    description:
      'The new version breaks the previous one within the same major version (EDU-21): publish it as a new major version, or an admin forces it.',
  },
  'contract-status-move': {
    title: 'Status move not allowed',
    status: [409],
    description: 'A version cannot move from its status to the one asked (retired is final).',
  },
  'contract-changed': {
    title: 'Contract changed',
    status: [409],
    description: 'The contract changed while the request was processed; send it again.',
  },
  'contract-not-bindable': {
    title: 'Contract not bindable',
    status: [409],
    description:
      'The contract message named in a binding does not exist or has no payload schema that can check an event’s data.',
  },
  'not-found': {
    title: 'Not Found',
    status: [404],
    description: 'No such resource, or not one this client may see (another client’s looks the same).',
  },
  'method-not-allowed': {
    title: 'Method Not Allowed',
    status: [405],
    description: 'The path exists, but not with this method; `Allow` lists the methods it has.',
  },
  'request-timeout': { title: 'Request Timeout', status: [408], description: 'The request did not arrive in time.' },
  'subscription-changed': {
    title: 'Subscription changed',
    status: [409],
    description: 'The subscription changed meanwhile. Read it again and retry.',
  },
  'subscription-not-approvable': {
    title: 'Not approvable',
    status: [409],
    description: 'The subscription is not waiting for the validation this request answers.',
  },
  'receive-too-large-to-replay': {
    title: 'Receive too large to replay',
    status: [422],
    description:
      'A pull receive with an `Idempotency-Key` stores its answer for repeats, so it answers at most 320 KiB; the next event alone is larger. It is back in the queue: receive it without an `Idempotency-Key` (docs/PULL.md).',
  },
  'not-a-pull-subscription': {
    title: 'Not a pull subscription',
    status: [409],
    description: 'The subscription delivers by push; only pull subscriptions are received from.',
  },
  'not-a-push-subscription': {
    title: 'Not a push subscription',
    status: [409],
    description: 'A pull subscription pauses by not receiving: its events wait in its queue.',
  },
  'replay-running': {
    title: 'Replay running',
    status: [409],
    description: 'A replay for this subscription is running already; wait for it or cancel it.',
  },
  'quota-exceeded': {
    title: 'Quota exceeded',
    status: [409, 413, 429],
    description:
      "The client holds as much of a resource as its quota allows (409: pull subscriptions, replays running at once; free one), was granted as many upload bytes this hour as it allows (429: retry after `Retry-After`), or asked for one upload larger than the whole hourly quota (413). `quota` names the quota, `limit` its limit, `used` what the client holds or was granted; operators raise a partner's quota with `quotas` in PUT /clients/{clientId}.",
  },
  'replay-not-running': {
    title: 'Replay not running',
    status: [409],
    description: 'The replay is not running, so it cannot be cancelled.',
  },
  'subscription-not-active': {
    title: 'Subscription not active',
    status: [409],
    description: 'The subscription is not active (resume a suspended one first).',
  },
  'subscription-not-suspended': {
    title: 'Subscription not suspended',
    status: [409],
    description: 'Only a suspended subscription can be resumed.',
  },
  'subscription-not-revalidatable': {
    title: 'Not revalidatable',
    status: [409],
    description: 'This subscription cannot be validated again in its present state.',
  },
  'credential-required': {
    title: 'Credential required',
    status: [409],
    description: 'The subscription needs a sink credential before it can be resumed (WH-3).',
  },
  'publish-grants-overlap': {
    title: 'Publish grants overlap',
    status: [409],
    description: 'Another client already holds a publish grant for these sources.',
  },
  'directory-changed': {
    title: 'Directory changed',
    status: [409],
    description: 'The partner directory changed meanwhile. Read it again and retry.',
  },
  'directory-full': {
    title: 'Directory full',
    status: [409],
    description: 'The partner directory holds as many clients, grants or entitlements as it can.',
  },
  'validation-window-closed': {
    title: 'Validation window closed',
    status: [410],
    description: 'The validation callback came after its window; revalidate the subscription.',
  },
  'payload-expired': {
    title: 'Data expired',
    status: [410],
    description: 'The data behind this dataref was kept for its retention and is gone.',
  },
  'precondition-failed': {
    title: 'Precondition Failed',
    status: [412],
    description: '`If-Match` names another version, or `If-None-Match: *` found the resource.',
  },
  'payload-too-large': {
    title: 'Payload Too Large',
    status: [413],
    description: 'The event or the request is larger than Koerier accepts; upload large data with POST /payloads.',
  },
  'unsupported-media-type': {
    title: 'Unsupported Media Type',
    status: [415],
    description: 'The Content-Type is not one this operation takes.',
  },
  'expectation-failed': {
    title: 'Expectation Failed',
    status: [417],
    description: 'The request has an `Expect` other than `100-continue`.',
  },
  'rate-limited': {
    title: 'Too Many Requests',
    status: [429],
    description:
      'The client sent more than its limit (per client, never per address: EDU-20). Nothing was done; retry after `Retry-After`.',
  },
  'too-many-polls': {
    title: 'Too many long polls',
    status: [429],
    description: 'Too many long polls at once for this subscription or client; retry after `Retry-After`.',
  },
  'request-header-fields-too-large': {
    title: 'Request Header Fields Too Large',
    status: [431],
    description: 'More header lines, or a larger header section, than Koerier reads.',
  },
  internal: {
    title: 'Internal Server Error',
    status: [500],
    description:
      'Something unexpected failed; nothing more is said. Retry, with the same Idempotency-Key where the operation takes one.',
  },
  'events-not-stored': {
    title: 'Events not stored',
    status: [503],
    description:
      'The events could not be stored in the inbound queue; none was accepted. Retry after `Retry-After` with the same Idempotency-Key.',
  },
  unavailable: {
    title: 'Service Unavailable',
    status: [503],
    description: 'A dependency is unavailable. Retry after `Retry-After`.',
  },
} as const satisfies Record<string, ProblemTypeDescription>;

export type ProblemSlug = keyof typeof problemTypes;

export function isProblemSlug(slug: string): slug is ProblemSlug {
  return Object.hasOwn(problemTypes, slug);
}
