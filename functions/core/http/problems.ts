/**
 * RFC 9457 problem details: the one shape in which every error leaves Koerier.
 * Never a stack trace, never an event's `data`.
 */
import { API_BASE_PATH } from './api-version.js';
import type { HttpResponse } from './messages.js';
import { problemTitles, type ProblemSlug } from './problem-titles.js';

export interface ValidationIssue {
  /** The attribute (or header, or member) the finding is about, when there is one. */
  readonly attribute?: string;
  /** A short machine-readable rule name, e.g. `required`, `uri-reference`, `reverse-dns`. */
  readonly rule: string;
  /** The requirement ID from REQUIREMENTS.md, e.g. `CE-3`. */
  readonly requirement: string;
  readonly message: string;
  /** Where in the event or document, as a JSON Pointer (RFC 6901), e.g. `/data/student` for a data contract violation. */
  readonly pointer?: string;
  /** Position in a batch, for batch requests. */
  readonly index?: number;
  /** Positions in a batch, where one warning stands for the same finding in several members. */
  readonly indexes?: readonly number[];
}

export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string | undefined;
  readonly errors?: readonly ValidationIssue[];
  readonly [extension: string]: unknown;
}

/**
 * Problem types are relative references with the full path (RFC 9457 §3.1.1): resolved against the
 * URL of the answer they came in, they name the type's page on the same origin, `GET /v1/problems/{type}`.
 * Not absolute from KOERIER_PUBLIC_BASE_URL, because not every answer of a deployment can know that
 * URL: the edge's WAF answers 429 from a web ACL in another stack (lib/constructs/edge-protection.ts),
 * and core throws its problems without configuration. One string for every answer; docs/CONTRACTS.md
 * ("Problem types") weighs the choice.
 */
const PROBLEM_BASE = `${API_BASE_PATH}/problems/`;

/** Problem type URIs, one per kind of failure, so clients can branch on `type`. */
export const problemType = (slug: ProblemSlug): string => `${PROBLEM_BASE}${slug}`;

/**
 * The one way core reports a failure that its caller is to be told about: thrown, never returned,
 * from anywhere below an app. `problem` is what the caller reads (with `headers` such as
 * `Retry-After`); `cause`, when there is one, is what went wrong underneath, for logs only.
 * `answered` turns it into the answer; anything else thrown is a 500 at the adapter.
 */
export class KoerierError extends Error {
  readonly problem: Problem;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    problem: Problem,
    options: { readonly headers?: Readonly<Record<string, string>>; readonly cause?: unknown } = {},
  ) {
    super(problem.detail ?? problem.title, 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'KoerierError';
    this.problem = problem;
    this.headers = options.headers ?? {};
  }
}

/** The one mapping from a failure to its answer: RFC 9457 problem+json, bounded, with the error's headers. */
export function problemAnswer(error: KoerierError): HttpResponse {
  return problemResponse(error.problem, error.headers);
}

/**
 * Runs `work` and answers a `KoerierError` it throws with `problemAnswer`; anything else goes on
 * up. The HTTP adapter runs every app through it, and the idempotency guard each first attempt,
 * since a refusal is an answer it stores and replays like any other.
 */
export async function answered(work: () => Promise<HttpResponse>): Promise<HttpResponse> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof KoerierError) return problemAnswer(error);
    throw error;
  }
}

/**
 * A problem of `slug`, its title the catalogue's (problem-titles.ts): one type has one title, the
 * one its page shows (issue 29 item 2: titles written at each call had drifted from it, "Conflict"
 * for five types of their own). The title is never the caller's to choose.
 */
export function problem(
  status: number,
  slug: ProblemSlug,
  detail?: string,
  extra: Record<string, unknown> = {},
): Problem {
  return { type: problemType(slug), title: problemTitles[slug], status, detail, ...extra };
}

/**
 * Every problem answer is bounded (review #11): an answer is stored whole in one DynamoDB item by
 * the idempotency guard (400 KB with its key and headers) and must stay far below Lambda's 6 MB
 * response limit, however many violations a request holds. At most this many issues are listed
 * per list (`errors`, `warnings`); the others are counted in `errorsNotListed` / `warningsNotListed`.
 */
export const MAX_LISTED_ISSUES = 100;
/** The most a problem body may take, in UTF-8 bytes, when it lists issues. */
export const MAX_PROBLEM_BYTES = 64 * 1024;
/** Longest `message` (and `detail`) kept, in characters; longer ones are cut with `…`. */
const MAX_MESSAGE_CHARACTERS = 512;
/** Longest `attribute` kept: names come from the caller and may be of any length. */
const MAX_ATTRIBUTE_CHARACTERS = 64;
const ISSUE_LISTS = ['errors', 'warnings'] as const;

/**
 * A problem as an HTTP answer. Under functions/ only `problemAnswer` calls it; the laptop's
 * gateway uses it for the answers it gives in API Gateway's place (local/api-gateway.ts).
 */
export function problemResponse(p: Problem, headers: Readonly<Record<string, string>> = {}): HttpResponse {
  return {
    status: p.status,
    headers: { 'content-type': 'application/problem+json', ...headers },
    body: JSON.stringify(boundedProblem(p)),
  };
}

/**
 * The problem cut to its budget: `detail` and every issue's `message` and `attribute` shortened,
 * then each issue list kept to `MAX_LISTED_ISSUES` entries and, together, to what fits in
 * `MAX_PROBLEM_BYTES`. What is left out is counted, never silently dropped.
 */
export function boundedProblem(p: Problem): Problem {
  const bounded: Record<string, unknown> = { ...p };
  if (typeof p.detail === 'string') bounded['detail'] = cut(p.detail, MAX_MESSAGE_CHARACTERS);
  for (const list of ISSUE_LISTS) delete bounded[list];
  // Room for the lists and their `…NotListed` counters next to everything else.
  let budget = MAX_PROBLEM_BYTES - Buffer.byteLength(JSON.stringify(bounded)) - 128;
  const lists: Record<string, unknown> = {};
  for (const list of ISSUE_LISTS) {
    const issues = p[list];
    if (!Array.isArray(issues)) continue;
    const { listed, notListed, bytes } = boundedIssues(issues as ValidationIssue[], Math.max(0, budget));
    budget -= bytes;
    lists[list] = listed;
    const counter = `${list}NotListed`;
    const earlier = typeof p[counter] === 'number' ? (p[counter] as number) : 0;
    if (notListed + earlier > 0) lists[counter] = notListed + earlier;
  }
  // The members in their original order, so a bounded problem reads like the one it came from.
  const ordered: Record<string, unknown> = {};
  for (const name of Object.keys(p)) ordered[name] = name in lists ? lists[name] : bounded[name];
  return { ...ordered, ...lists } as unknown as Problem;
}

/** Issues shortened, at most `MAX_LISTED_ISSUES` of them and no more than `maxBytes` of JSON. */
export function boundedIssues(
  issues: readonly ValidationIssue[],
  maxBytes: number,
): { listed: ValidationIssue[]; notListed: number; bytes: number } {
  const listed: ValidationIssue[] = [];
  let bytes = 2;
  for (const issue of issues) {
    if (listed.length === MAX_LISTED_ISSUES) break;
    const short = shortIssue(issue);
    const size = Buffer.byteLength(JSON.stringify(short)) + 1;
    if (bytes + size > maxBytes) break;
    listed.push(short);
    bytes += size;
  }
  return { listed, notListed: issues.length - listed.length, bytes };
}

function shortIssue(issue: ValidationIssue): ValidationIssue {
  const message = cut(issue.message, MAX_MESSAGE_CHARACTERS);
  const attribute = issue.attribute === undefined ? undefined : cut(issue.attribute, MAX_ATTRIBUTE_CHARACTERS);
  const pointer = issue.pointer === undefined ? undefined : cut(issue.pointer, MAX_MESSAGE_CHARACTERS);
  if (message === issue.message && attribute === issue.attribute && pointer === issue.pointer) return issue;
  return {
    ...issue,
    message,
    ...(attribute === undefined ? {} : { attribute }),
    ...(pointer === undefined ? {} : { pointer }),
  };
}

function cut(text: string, characters: number): string {
  return text.length > characters ? `${text.slice(0, characters)}…` : text;
}

export const problems = {
  notFound: (detail = 'No such resource.') => problem(404, 'not-found', detail),
  methodNotAllowed: (allowed: readonly string[]) =>
    problem(405, 'method-not-allowed', `Allowed: ${allowed.join(', ')}.`),
  unauthorized: (detail: string) => problem(401, 'unauthorized', detail),
  forbidden: (detail: string) => problem(403, 'forbidden', detail),
  badRequest: (slug: ProblemSlug, detail: string, errors?: readonly ValidationIssue[]) =>
    problem(400, slug, detail, errors ? { errors } : {}),
  unsupportedMediaType: (detail: string) => problem(415, 'unsupported-media-type', detail),
  payloadTooLarge: (detail: string) => problem(413, 'payload-too-large', detail),
  internal: () => problem(500, 'internal', 'The request could not be completed; it is safe to retry.'),
  unavailable: (detail: string) => problem(503, 'unavailable', detail),
};
