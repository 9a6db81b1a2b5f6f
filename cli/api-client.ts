/**
 * The CLI's view of the one generated API client (client/koerier-client.ts): the gateway's base URL,
 * the token source, and what commands need besides typed calls. Typed calls go through `api`
 * (openapi-fetch over the types generated from the API description); `request` sends what the
 * description does not type (a CloudEvent in binary mode, a probe of a raw path in `doctor`) through
 * the same client and middleware. Retries, the Idempotency-Key kept across them, the token renewed
 * once after a 401 and problems read as KoerierProblem are the middleware's, not the CLI's.
 */
import {
  createKoerierClient,
  KoerierProblem,
  networkFailure,
  type KoerierClient as GeneratedClient,
  type Problem,
  type TokenSource,
  type ValidationIssue,
} from '../client/koerier-client.js';
import { CliError, exitCodeForStatus, exitCodes } from './exit-codes.js';

export { KoerierProblem, type Problem, type TokenSource };
export type ProblemIssue = ValidationIssue;
export type { components } from '../client/koerier-client.js';

/**
 * Where the API lives under the gateway URL. Empty: the gateway URL is the API's base URL with its
 * major version (`https://…/v1`, the stack's `ApiUrl`). Every route the CLI calls, the API
 * description included, is resolved against both.
 */
export const API_BASE_PATH = '';

/** The longest `Retry-After` the CLI waits for; a longer one is honoured by not retrying. */
const MAX_RETRY_AFTER_MS = 120_000;
const BACKOFF_BASE_MS = 500;

export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body as received, byte for byte (`text` is it decoded as UTF-8). */
  readonly bytes: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  readonly json: unknown;
}

export interface RequestOptions {
  readonly body?: unknown;
  /** Raw bytes with their own content type (events); `body` is sent as JSON otherwise. */
  readonly raw?: { readonly body: Buffer | string; readonly headers: Readonly<Record<string, string>> };
  readonly headers?: Readonly<Record<string, string>>;
  /** The key of a mutating call; without one the client makes one, the same on every retry. */
  readonly idempotencyKey?: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** Called before each retry, with the reason (status or network failure) and the wait. */
  readonly onRetry?: (reason: string, waitMs: number) => void;
  readonly signal?: AbortSignal;
  /** `manual`: a redirect is the answer (its `Location` read by the caller), not followed with the bearer token. Default `follow`. */
  readonly redirect?: 'follow' | 'manual';
}

export class KoerierClient {
  /** The typed client: `client.api.GET('/subscriptions/{id}', …)`. Refusals throw a KoerierProblem. */
  readonly api: GeneratedClient;

  constructor(
    readonly gatewayUrl: string,
    private readonly tokens: TokenSource | undefined,
    private readonly retries = 5,
  ) {
    this.api = this.client();
  }

  /** The absolute URL of an API path (`/subscriptions/…`). */
  url(path: string, query: RequestOptions['query'] = {}): string {
    const url = new URL(`${this.gatewayUrl.replace(/\/+$/, '')}${API_BASE_PATH}${path}`);
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  /** Any answer, refusals included, of a call the description does not type (or an absolute URL). */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer> {
    const url = new URL(path.startsWith('http') ? path : this.url(path, options.query));
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
      ...options.headers,
    };
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    let body: Buffer | string | undefined;
    if (options.raw) {
      Object.assign(headers, options.raw.headers);
      body = options.raw.body;
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const client = this.client(options.onRetry);
    try {
      // The generated client's untyped door: a path it does not know, sent through the same middleware.
      const { response, data, error } = await (client.request as unknown as UntypedRequest)(
        method,
        url.pathname + url.search,
        {
          baseUrl: url.origin,
          headers,
          parseAs: 'arrayBuffer',
          ...(body === undefined ? {} : { body, bodySerializer: (raw: unknown) => raw }),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.redirect ? { redirect: options.redirect } : {}),
        },
      );
      // A redirect not followed is no refusal and no success: openapi-fetch hands its body as `error`.
      const bytes =
        data instanceof ArrayBuffer ? Buffer.from(data) : Buffer.from(typeof error === 'string' ? error : '');
      return answerOf(response.status, response.headers, bytes);
    } catch (error) {
      if (error instanceof KoerierProblem) return answerOf(error.status, error.headers, Buffer.from(error.text));
      // fetch fails with a TypeError when the gateway cannot be reached; anything else (a token refused) stands.
      if (options.signal?.aborted || !(error instanceof TypeError)) throw error;
      throw new CliError(`cannot reach ${url.origin}: ${networkFailure(error)}`, exitCodes.unavailable);
    }
  }

  /**
   * Every item of a paged list (`{"<member>": [...], "next": "/…?cursor=…"}`), following `next`
   * until there is none. `next` is an absolute path the gateway wrote, base path included.
   */
  async listAll<T>(path: string, member: string, query: RequestOptions['query'] = {}): Promise<T[]> {
    const items: T[] = [];
    let address: string | undefined = this.url(path, query);
    while (address) {
      const page = (await this.call('GET', address)).json as Record<string, unknown> & { next?: string };
      items.push(...((page[member] as T[] | undefined) ?? []));
      address = page.next ? new URL(page.next, this.gatewayUrl).toString() : undefined;
    }
    return items;
  }

  /** `request`, with any answer but a 2xx turned into a CliError naming the problem. */
  async call(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer> {
    const answer = await this.request(method, path, options);
    if (answer.status >= 200 && answer.status < 300) return answer;
    throw problemError(answer, `${method} ${path}`);
  }

  /** The data of a typed call; its refusal or network failure becomes the CliError the CLI exits with. */
  async run<T>(what: string, call: (api: GeneratedClient) => Promise<{ data?: T }>): Promise<T> {
    const outcome = await this.outcome(call);
    if (!outcome.ok) throw problemError(outcome.refusal, what);
    return outcome.data;
  }

  /**
   * A typed call's data and response, or its refusal as an answer, for a caller that tells refusals
   * apart (the doctor explains each, the register tells a missing route from a refused change).
   * A network failure is the CliError the CLI exits with.
   */
  async outcome<T>(call: (api: GeneratedClient) => Promise<{ data?: T; response?: Response }>): Promise<Outcome<T>> {
    try {
      const { data, response } = await call(this.api);
      return { ok: true, data: data as T, response: response as Response };
    } catch (error) {
      if (error instanceof KoerierProblem)
        return { ok: false, refusal: answerOf(error.status, error.headers, Buffer.from(error.text)) };
      if (error instanceof TypeError)
        throw new CliError(
          `cannot reach ${new URL(this.gatewayUrl).origin}: ${networkFailure(error)}`,
          exitCodes.unavailable,
        );
      throw error;
    }
  }

  private client(onRetry?: RequestOptions['onRetry']): GeneratedClient {
    return createKoerierClient({
      baseUrl: `${this.gatewayUrl.replace(/\/+$/, '')}${API_BASE_PATH}`,
      token: this.tokens,
      retries: this.retries,
      // Every call the CLI makes is a read or carries an Idempotency-Key, so a 5xx is as safe to try
      // again as a 429 (a function that timed out on a cold start answers 500 on the laptop).
      retryOn: (status) => status === 429 || status >= 500,
      maxRetryAfterMs: MAX_RETRY_AFTER_MS,
      backoffMs: BACKOFF_BASE_MS,
      ...(onRetry ? { onRetry: (reason: string, waitMs: number) => onRetry(reason, waitMs) } : {}),
    });
  }
}

/** What a typed call came to: its data, or the refusal (a 4xx or 5xx left after the retries) as an answer. */
export type Outcome<T> =
  | { readonly ok: true; readonly data: T; readonly response: Response }
  | { readonly ok: false; readonly refusal: ApiAnswer };

/** A typed call's answer as an ApiAnswer (its data as text, or written back as JSON), for describing an unexpected success. */
export function answerOfData(response: Response, data: unknown): ApiAnswer {
  const text = typeof data === 'string' ? data : data === undefined ? '' : JSON.stringify(data);
  return answerOf(response.status, response.headers, Buffer.from(text));
}

type UntypedRequest = (
  method: string,
  path: string,
  init: Record<string, unknown>,
) => Promise<{ response: Response; data?: unknown; error?: unknown }>;

function answerOf(status: number, headers: Headers, bytes: Buffer): ApiAnswer {
  // As Response.text() decodes: UTF-8, a byte order mark dropped, malformed bytes replaced.
  const text = new TextDecoder().decode(bytes);
  return { status, headers, text, bytes, json: parseJson(text) };
}

/** A CliError for a refused request: its status, the problem's title and detail, and each listed issue. */
export function problemError(answer: ApiAnswer, what: string): CliError {
  return new CliError(`${what}: ${describeProblem(answer)}`, exitCodeForStatus(answer.status));
}

export function problemOf(answer: ApiAnswer): Partial<Problem> | undefined {
  const json = answer.json;
  return json && typeof json === 'object' && !Array.isArray(json) ? (json as Partial<Problem>) : undefined;
}

export function describeProblem(answer: ApiAnswer): string {
  const problem = problemOf(answer);
  if (!problem) return `${answer.status} ${answer.text.slice(0, 200)}`.trim();
  const slug = problem.type?.split('/').pop();
  const head = [String(answer.status), problem.title, slug && slug !== 'about:blank' ? `(${slug})` : undefined]
    .filter(Boolean)
    .join(' ');
  const lines = [problem.detail ? `${head}: ${problem.detail}` : head];
  for (const issue of problem.errors ?? []) lines.push(`  - ${describeIssue(issue)}`);
  return lines.join('\n');
}

export function describeIssue(issue: Partial<ProblemIssue>): string {
  const where = [issue.index === undefined ? undefined : `[${issue.index}]`, issue.pointer ?? issue.attribute]
    .filter(Boolean)
    .join(' ');
  const why = [issue.rule, issue.requirement].filter(Boolean).join(', ');
  return `${where ? `${where}: ` : ''}${issue.message ?? ''}${why ? ` (${why})` : ''}`;
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
