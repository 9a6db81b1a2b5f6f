/**
 * The one HTTP client of the CLI: the gateway's base URL and API path, the bearer token, retries
 * and RFC 9457 problems. Commands call `request` and get the answer; they never build URLs or
 * retry themselves.
 *
 * Retries: network failures, 5xx and 429 are tried again (`retries` times), after the answer's
 * `Retry-After` when it has one (seconds or an HTTP date), otherwise after an exponential backoff
 * with jitter. The request is sent again exactly as it was, headers included, so an
 * `Idempotency-Key` is the same on every try (EDU-IDEM: a retry is the same operation). A 401 with a
 * cached token fetches a new token once.
 */
import { CliError, exitCodeForStatus, exitCodes } from './exit-codes.js';

/**
 * Where the API lives under the gateway URL. Empty: the gateway URL is the API's base URL with its
 * major version (`https://…/v1`, the stack's `ApiUrl`). Every route the CLI calls, the API
 * description included, is resolved against both.
 */
export const API_BASE_PATH = '';

/** The longest wait a `Retry-After` may ask for; a longer one is cut to this. */
const MAX_RETRY_AFTER_MS = 120_000;
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 30_000;

export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body as received, byte for byte (`text` is it decoded as UTF-8). */
  readonly bytes: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  readonly json: unknown;
}

export interface Problem {
  readonly type?: string;
  readonly title?: string;
  readonly status?: number;
  readonly detail?: string;
  readonly errors?: readonly ProblemIssue[];
  readonly [extension: string]: unknown;
}

export interface ProblemIssue {
  readonly attribute?: string;
  /** A JSON Pointer into the event (a data contract's violations: `/data/leerling`). */
  readonly pointer?: string;
  readonly rule?: string;
  readonly requirement?: string;
  readonly message?: string;
  readonly index?: number;
}

export interface RequestOptions {
  readonly body?: unknown;
  /** Raw bytes with their own content type (events); `body` is sent as JSON otherwise. */
  readonly raw?: { readonly body: Buffer | string; readonly headers: Readonly<Record<string, string>> };
  readonly headers?: Readonly<Record<string, string>>;
  readonly idempotencyKey?: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** Called before each retry, with the reason (status or network failure) and the wait. */
  readonly onRetry?: (reason: string, waitMs: number) => void;
  readonly signal?: AbortSignal;
  /** `manual`: a redirect is the answer (its `Location` read by the caller), not followed with the bearer token. Default `follow`. */
  readonly redirect?: 'follow' | 'manual';
}

export interface TokenSource {
  /** A valid access token; `renew` asks for a new one even if the cached one looks valid. */
  token(renew?: boolean): Promise<string>;
}

export class KoerierClient {
  constructor(
    readonly gatewayUrl: string,
    private readonly tokens: TokenSource | undefined,
    private readonly retries = 5,
  ) {}

  /** The absolute URL of an API path (`/subscriptions/…`). */
  url(path: string, query: RequestOptions['query'] = {}): string {
    const url = new URL(`${this.gatewayUrl.replace(/\/+$/, '')}${API_BASE_PATH}${path}`);
    for (const [name, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer> {
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
      ...options.headers,
    };
    let body: Buffer | string | undefined;
    if (options.raw) {
      Object.assign(headers, options.raw.headers);
      body = options.raw.body;
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const url = path.startsWith('http') ? path : this.url(path, options.query);

    let renewed = false;
    for (let attempt = 0; ; attempt++) {
      if (this.tokens) headers['authorization'] = `Bearer ${await this.tokens.token()}`;
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers,
          ...(body === undefined ? {} : { body }),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.redirect ? { redirect: options.redirect } : {}),
        });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        if (attempt >= this.retries) {
          throw new CliError(`cannot reach ${new URL(url).origin}: ${networkFailure(error)}`, exitCodes.unavailable);
        }
        const wait = backoff(attempt);
        options.onRetry?.(networkFailure(error), wait);
        await sleep(wait, options.signal);
        continue;
      }
      const bytes = Buffer.from(await response.arrayBuffer());
      // As Response.text() decodes: UTF-8, a byte order mark dropped, malformed bytes replaced.
      const text = new TextDecoder().decode(bytes);
      const answer: ApiAnswer = {
        status: response.status,
        headers: response.headers,
        text,
        bytes,
        json: parseJson(text),
      };
      if (response.status === 401 && this.tokens && !renewed) {
        // The cached token may have been revoked or the signing key rotated: one new token, then the answer stands.
        renewed = true;
        await this.tokens.token(true);
        attempt--;
        continue;
      }
      if ((response.status >= 500 || response.status === 429) && attempt < this.retries) {
        const wait = retryAfter(response.headers.get('retry-after')) ?? backoff(attempt);
        options.onRetry?.(String(response.status), wait);
        await sleep(wait, options.signal);
        continue;
      }
      return answer;
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
}

/** A CliError for a refused request: its status, the problem's title and detail, and each listed issue. */
export function problemError(answer: ApiAnswer, what: string): CliError {
  return new CliError(`${what}: ${describeProblem(answer)}`, exitCodeForStatus(answer.status));
}

export function problemOf(answer: ApiAnswer): Problem | undefined {
  const json = answer.json;
  return json && typeof json === 'object' && !Array.isArray(json) ? (json as Problem) : undefined;
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

export function describeIssue(issue: ProblemIssue): string {
  const where = [issue.index === undefined ? undefined : `[${issue.index}]`, issue.pointer ?? issue.attribute]
    .filter(Boolean)
    .join(' ');
  const why = [issue.rule, issue.requirement].filter(Boolean).join(', ');
  return `${where ? `${where}: ` : ''}${issue.message ?? ''}${why ? ` (${why})` : ''}`;
}

/** `Retry-After` as milliseconds to wait: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_RETRY_AFTER_MS);
  // An HTTP date names its day and month; Date.parse alone would take "-1" for a year.
  const date = /[A-Za-z]/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(date)) return undefined;
  return Math.min(Math.max(0, date - now), MAX_RETRY_AFTER_MS);
}

function backoff(attempt: number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function networkFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });
}
