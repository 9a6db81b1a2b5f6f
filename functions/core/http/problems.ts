/**
 * RFC 9457 problem details: the one shape in which every error leaves Koerier.
 * Never a stack trace, never an event's `data`.
 */
import type { HttpResponse } from './messages.js';

export interface ValidationIssue {
  /** The attribute (or header, or member) the finding is about, when there is one. */
  readonly attribute?: string;
  /** A short machine-readable rule name, e.g. `required`, `uri-reference`, `reverse-dns`. */
  readonly rule: string;
  /** The requirement ID from REQUIREMENTS.md, e.g. `CE-3`. */
  readonly requirement: string;
  readonly message: string;
  /** Position in a batch, for batch requests. */
  readonly index?: number;
  /** Positions in a batch, where one warning stands for the same finding in several members. */
  readonly indexes?: readonly number[];
}

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly errors?: readonly ValidationIssue[];
  readonly [extension: string]: unknown;
}

const PROBLEM_BASE = 'https://koerier.dev/problems/';

/** Problem type URIs, one per kind of failure, so clients can branch on `type`. */
export const problemType = (slug: string): string => `${PROBLEM_BASE}${slug}`;

/** Thrown anywhere below a handler; the handler turns it into the response. */
export class ProblemError extends Error {
  constructor(
    readonly problem: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    super(problem.detail ?? problem.title);
    this.name = 'ProblemError';
  }
}

export function problem(status: number, slug: string, title: string, detail?: string, extra: Record<string, unknown> = {}): Problem {
  return { type: problemType(slug), title, status, ...(detail === undefined ? {} : { detail }), ...extra };
}

export function problemResponse(p: Problem, headers: Record<string, string> = {}): HttpResponse {
  return {
    status: p.status,
    headers: { 'content-type': 'application/problem+json', ...headers },
    body: JSON.stringify(p),
  };
}

export const problems = {
  notFound: (detail = 'No such resource.') => problem(404, 'not-found', 'Not Found', detail),
  methodNotAllowed: (allowed: readonly string[]) =>
    problem(405, 'method-not-allowed', 'Method Not Allowed', `Allowed: ${allowed.join(', ')}.`),
  unauthorized: (detail: string) => problem(401, 'unauthorized', 'Unauthorized', detail),
  forbidden: (detail: string) => problem(403, 'forbidden', 'Forbidden', detail),
  badRequest: (slug: string, title: string, detail: string, errors?: readonly ValidationIssue[]) =>
    problem(400, slug, title, detail, errors ? { errors } : {}),
  unsupportedMediaType: (detail: string) => problem(415, 'unsupported-media-type', 'Unsupported Media Type', detail),
  payloadTooLarge: (detail: string) => problem(413, 'payload-too-large', 'Payload Too Large', detail),
  internal: () => problem(500, 'internal', 'Internal Server Error', 'The request could not be completed; it is safe to retry.'),
  unavailable: (detail: string) => problem(503, 'unavailable', 'Service Unavailable', detail),
};
