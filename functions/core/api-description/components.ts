/**
 * Shared pieces of Koerier's OpenAPI description: problem responses, security, headers.
 * Each area of the API contributes its own paths (see `events-paths.ts`) and the document
 * (`openapi-document.ts`) puts them together.
 */
import { problemTypes, type ProblemSlug } from '../http/problem-types.js';
import { problemType } from '../http/problems.js';

import { API_VERSION } from '../http/api-version.js';

export { API_BASE_PATH, API_VERSION } from '../http/api-version.js';

export const problemSchema = {
  type: 'object',
  description: 'RFC 9457 problem details.',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: {
      type: 'string',
      format: 'uri-reference',
      description:
        'What kind of problem: branch on it. A relative reference with the full path (RFC 9457 §3.1.1), the same in every answer: ' +
        "resolved against the URL of the request it answers, it is the type's page on this API (GET /problems/{type}, in Markdown). " +
        'The enum lists every type Koerier answers with.',
      enum: (Object.keys(problemTypes) as ProblemSlug[]).map((slug) => problemType(slug)),
    },
    title: { type: 'string' },
    status: { type: 'integer', minimum: 100, maximum: 599 },
    detail: { type: 'string' },
    errors: {
      type: 'array',
      description: 'The violations found, for validation problems: at most 100, within 64 KiB for the whole problem.',
      items: { $ref: '#/components/schemas/ValidationIssue' },
    },
    errorsNotListed: {
      type: 'integer',
      description: 'Violations found but left out of `errors` to keep the answer bounded.',
    },
    warningsNotListed: {
      type: 'integer',
      description: 'Warnings found but left out of `warnings` to keep the answer bounded.',
    },
    validationStopped: {
      type: 'boolean',
      description: 'More than 100 violations: validation stopped there, so there may be more.',
    },
  },
} as const;

export const validationIssueSchema = {
  type: 'object',
  required: ['rule', 'requirement', 'message'],
  properties: {
    attribute: { type: 'string', description: 'The attribute, header or member the finding is about.' },
    pointer: {
      type: 'string',
      description:
        'Where in the event or document, as a JSON Pointer (RFC 6901): `/data/student` for a data contract violation.',
    },
    rule: { type: 'string', description: 'Machine-readable rule name.' },
    requirement: { type: 'string', description: 'Requirement ID, e.g. CE-3 (see docs/CONFORMANCE.md).' },
    message: { type: 'string' },
    index: { type: 'integer', description: 'Position of the member in a batch.' },
    indexes: {
      type: 'array',
      items: { type: 'integer' },
      description: 'Positions of the members with this same finding (grouped warnings).',
    },
  },
} as const;

export const versionHeader = {
  'API-Version': {
    description: 'The full version of the Koerier API.',
    schema: { type: 'string', example: API_VERSION },
  },
} as const;

/** A problem response for `status`, with the API-Version header every response carries. */
export function problemResponse(description: string, extraHeaders: Record<string, unknown> = {}) {
  return {
    description,
    headers: { ...versionHeader, ...extraHeaders },
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
  };
}

export const authProblems = {
  '401': problemResponse(
    'Missing, expired or otherwise invalid access token (WWW-Authenticate: Bearer error="invalid_token").',
    {
      'WWW-Authenticate': { schema: { type: 'string' } },
    },
  ),
  '403': problemResponse('The token lacks the scope this operation needs (error="insufficient_scope").'),
} as const;

export const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: true,
  description:
    'A UUIDv4 per operation (EDU-IDEM-2, EDU-IDEM-6). A repeat with the same key and the same request gets the stored response again ' +
    '(with `Idempotent-Replayed: true`); the same key with another request gets 422; a repeat while the first is in progress gets 409. ' +
    'Keys are kept per client for 7 days.',
  schema: { type: 'string', format: 'uuid' },
} as const;

export const idempotencyProblems = {
  '409': problemResponse(
    'A request with this Idempotency-Key is still in progress; retry after the Retry-After interval.',
    {
      'Retry-After': { schema: { type: 'integer' } },
    },
  ),
  '422': problemResponse('This Idempotency-Key was used before with another request.'),
} as const;

export const commonProblems = {
  '500': problemResponse(
    'Unexpected failure; nothing was stored, and the request may be retried with the same Idempotency-Key.',
  ),
  '503': problemResponse('A dependency is unavailable; retry later.', {
    'Retry-After': { schema: { type: 'integer' } },
  }),
} as const;

/**
 * Reading a subscription and what hangs under it: `subscriptions:read`, or `subscriptions:manage`,
 * which includes it. The console's users hold the read scope only (EDU-2).
 */
/** Operators only: the partners admin API and erasures. */
export const adminOnlySecurity = [{ oauth2: ['admin'] }];
export const readSubscriptionsSecurity = [{ oauth2: ['subscriptions:read'] }, { oauth2: ['subscriptions:manage'] }];
