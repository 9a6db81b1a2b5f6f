/**
 * The problem pages of requests Koerier cannot read as they are: malformed bodies, events and
 * parameters, and the Idempotency-Key's refusals. Part of the catalogue in ./problem-types.ts.
 */
import type { ProblemSlug } from './problem-titles.js';

/** A problem type's page without its title (./problem-titles.ts holds the titles). */
export interface ProblemPage {
  /** The statuses it comes with. */
  readonly status: readonly number[];
  /** When it happens and what to do about it. */
  readonly description: string;
}

export const requestProblemPages = {
  'invalid-cloudevent': {
    status: [400],
    description:
      'An event breaks a MUST of CloudEvents 1.0 or the NL GOV profile; `errors` lists every violation with its requirement ID. Fix the event.',
  },
  'malformed-json': {
    status: [400],
    description:
      'The body is not well-formed JSON (or not UTF-8), whichever operation it was sent to. Send valid JSON. JSON of the wrong shape is the operation’s own `invalid-…` type, with `errors` naming each member.',
  },
  'json-too-deep': {
    status: [400],
    description: 'The body nests objects or arrays deeper than Koerier reads.',
  },
  'malformed-request': {
    status: [400],
    description: 'The HTTP request itself is malformed (framing, header syntax, encoding).',
  },
  'invalid-host': {
    status: [400],
    description: 'The request has no Host header, or more than one.',
  },
  'invalid-parameter': {
    status: [400],
    description: 'A path or query parameter (a limit, a cursor, an id) is not valid; `detail` says which.',
  },
  'idempotency-key-missing': {
    status: [400],
    description:
      'This operation needs an `Idempotency-Key` header: a new UUIDv4 per operation, the same one for its retries (EDU-IDEM).',
  },
  'idempotency-key-malformed': {
    status: [400],
    description: 'The `Idempotency-Key` is not one UUIDv4.',
  },
  'idempotency-key-reused': {
    status: [422],
    description: 'This key was used before with another request. Use a new key for a new operation.',
  },
  'idempotency-key-in-progress': {
    status: [409],
    description: 'A request with this key is still being handled. Retry after `Retry-After` with the same key.',
  },
  'invalid-subscription': {
    status: [400],
    description: 'The subscription request breaks a rule; `errors` names every member.',
  },
  'invalid-pull-request': {
    status: [400],
    description: 'A receive or settle request breaks a rule; `errors` names each member.',
  },
  'invalid-redrive-selection': {
    status: [400],
    description: 'The selection of dead letters to redrive is not valid.',
  },
  'invalid-upload': {
    status: [400],
    description: 'The request for an upload grant breaks a rule; `errors` names the members.',
  },
  'upload-unknown': {
    status: [400],
    description: 'The event names an upload Koerier did not grant to this publisher, or one that expired.',
  },
  'upload-incomplete': {
    status: [400],
    description: 'The uploaded object is missing, or not the size and digest promised in the grant.',
  },
  'upload-with-data': {
    status: [400],
    description: 'An event that refers to an upload carries no `data` of its own.',
  },
  'reserved-attribute': {
    status: [400],
    description:
      'The event carries an extension attribute Koerier sets itself (`koerierdatadigest`, `koerierdatasize`).',
  },
  'ordering-key-missing': {
    status: [400],
    description:
      'An event lacks the key attribute (`partitionkey`, `subject` or the extension named) of an ordered subscription it would be delivered to, and that subscription refuses events without it (`ordering.withoutKey: refuse`, issue 33); `errors` names the attribute and the subscription for each such event. No event of the request was accepted: add the key, or publish to no such subscription.',
  },
  'invalid-replay-request': {
    status: [400],
    description: 'The replay request breaks a rule; `errors` names each member.',
  },
  'invalid-erasure-request': {
    status: [400],
    description:
      'The erasure request breaks a rule: exactly one of `subject`, `events` or `data`, and a definite JSONPath; `errors` names each member.',
  },
  'invalid-client': {
    status: [400],
    description: 'The partner directory entry for a client breaks a rule; `errors` names the members.',
  },
} as const satisfies Partial<Record<ProblemSlug, ProblemPage>>;
