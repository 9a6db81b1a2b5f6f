/**
 * The one error a Koerier API call fails with: an answer of 400 or more, read as the RFC 9457
 * problem details Koerier writes (`application/problem+json`), or, when the body is something else
 * (a proxy's HTML page), the status with what the body said.
 */
import type { components } from './koerier-api.js';

export type Problem = components['schemas']['Problem'];
export type ValidationIssue = components['schemas']['ValidationIssue'];

export class KoerierProblem extends Error {
  override readonly name = 'KoerierProblem';
  readonly status: number;
  /** The problem type as written (a reference such as `/v1/problems/forbidden`), `about:blank` without one. */
  readonly type: string;
  readonly title: string;
  readonly detail: string | undefined;
  readonly errors: readonly ValidationIssue[];
  /** The parsed body (its extension members included), or undefined when it was not JSON. */
  readonly body: unknown;

  constructor(
    status: number,
    body: unknown,
    readonly text: string,
    readonly headers: Headers,
  ) {
    const problem = isObject(body) ? (body as Partial<Problem>) : {};
    const title = typeof problem.title === 'string' ? problem.title : `HTTP ${status}`;
    const detail = typeof problem.detail === 'string' ? problem.detail : text.trim().slice(0, 200) || undefined;
    super(detail ? `${status} ${title}: ${detail}` : `${status} ${title}`);
    this.status = status;
    this.type = typeof problem.type === 'string' ? problem.type : 'about:blank';
    this.title = title;
    this.detail = detail;
    this.errors = Array.isArray(problem.errors) ? problem.errors : [];
    this.body = body;
  }

  /** The last segment of the type (`forbidden`), what callers branch on; undefined for `about:blank`. */
  get slug(): string | undefined {
    return this.type === 'about:blank' ? undefined : this.type.split('/').pop();
  }

  /** Reads the answer's body (once) and makes the problem of it. */
  static async of(response: Response): Promise<KoerierProblem> {
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? (JSON.parse(text) as unknown) : undefined;
    } catch {
      body = undefined;
    }
    return new KoerierProblem(response.status, body, text, response.headers);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
