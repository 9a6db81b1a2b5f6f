/**
 * The one client of Koerier's API, for the CLI, the console, the tests and the benches: openapi-fetch
 * over the types generated from the API description (./koerier-api.d.ts), with one middleware that
 * holds what every caller of the API must get right the same way:
 *
 * - a mutating request (POST, PUT, PATCH, DELETE) carries an Idempotency-Key, the caller's or one made
 *   here once per call, and every retry of it sends that same key (EDU-IDEM: a retry is the same
 *   operation, so the gateway answers it from its record instead of doing it twice);
 * - 429 and 503 answers (or those `retryOn` names) and network failures are tried again, at most `retries` times, after the
 *   answer's Retry-After (seconds or an HTTP date) or else an exponential backoff with jitter; a
 *   Retry-After longer than `maxRetryAfterMs` is honoured by not retrying: the answer stands;
 * - with a token source, a 401 fetches a new token once (a revoked token, a rotated key) and resends;
 * - an answer of 400 or more becomes a thrown KoerierProblem (status, type, title, detail, errors[]).
 *
 * Runs in the browser as well as in Node: nothing here imports a Node module.
 */
import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { paths } from './koerier-api.js';
import { KoerierProblem } from './koerier-problem.js';

export { KoerierProblem, type Problem, type ValidationIssue } from './koerier-problem.js';
export type { components, operations, paths } from './koerier-api.js';

/** Where an access token comes from; `renew` asks for a new one even if the cached one looks valid. */
export interface TokenSource {
  token(renew?: boolean): Promise<string>;
}

export interface KoerierClientOptions {
  /** The API's base URL, with its major version: `https://api.example.org/v1`, a laptop host's `url`. */
  readonly baseUrl: string;
  /** A bearer token, or where to get one (and a new one after a 401). None: anonymous calls. */
  readonly token?: string | TokenSource | undefined;
  /** Which answers are tried again; default 429 and 503 (a caller whose every call is idempotent may add 5xx). */
  readonly retryOn?: (status: number) => boolean;
  /** Tries after the first; default 3. */
  readonly retries?: number;
  /** The longest Retry-After waited for; default 30 s. */
  readonly maxRetryAfterMs?: number;
  /** The first backoff when the answer names no wait (doubling, with jitter); default 250 ms. */
  readonly backoffMs?: number;
  /** Told before each retry: the status (or network failure) and the wait. */
  readonly onRetry?: (reason: string, waitMs: number, request: Request) => void;
  readonly headers?: ClientOptions['headers'];
  readonly fetch?: ClientOptions['fetch'];
  /** How a retry waits; a test may pass one that does not. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * The generated paths with the Idempotency-Key header optional wherever the description requires it:
 * the middleware adds one when the caller gives none, so a call states it only to choose the key.
 */
export type KoerierPaths = {
  [Path in keyof paths]: { [Method in keyof paths[Path]]: KeyOptional<paths[Path][Method]> };
};
export type KoerierClient = Client<KoerierPaths, 'application/json'>;

type Relaxed<Header> = Omit<Header, 'Idempotency-Key'> & { 'Idempotency-Key'?: string };
type KeyOptional<Operation> = Operation extends { parameters: { header: infer Header } }
  ? Header extends { 'Idempotency-Key': string }
    ? Omit<Operation, 'parameters'> & {
        parameters: Omit<Operation['parameters'], 'header'> &
          (Record<string, never> extends Relaxed<Header> ? { header?: Relaxed<Header> } : { header: Relaxed<Header> });
      }
    : Operation
  : Operation;

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RETRIED_STATUSES = new Set([429, 503]);
const BACKOFF_CAP_MS = 30_000;

export function createKoerierClient(options: KoerierClientOptions): KoerierClient {
  const client = createClient<KoerierPaths, 'application/json'>({
    baseUrl: options.baseUrl,
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use(koerierMiddleware(options));
  return client;
}

/** The middleware of createKoerierClient, for a caller with an openapi-fetch client of its own. */
export function koerierMiddleware(options: Omit<KoerierClientOptions, 'baseUrl' | 'headers'>): Middleware {
  const retries = options.retries ?? 3;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 30_000;
  const backoffMs = options.backoffMs ?? 250;
  const sleep = options.sleep ?? abortableSleep;
  const retryOn = options.retryOn ?? ((status: number) => RETRIED_STATUSES.has(status));
  const source: TokenSource | undefined =
    typeof options.token === 'string' ? { token: async () => options.token as string } : options.token;
  // The request as it was before its first send, to clone for each retry (a sent body is used up).
  const unsent = new WeakMap<Request, Request>();

  const backoff = (attempt: number) => {
    const ceiling = Math.min(BACKOFF_CAP_MS, backoffMs * 2 ** attempt);
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  };

  /** Resends until the outcome is final; returns the answer or throws the problem or the failure. */
  async function settle(request: Request, first: Response | Error, fetch: typeof globalThis.fetch) {
    const original = unsent.get(request);
    unsent.delete(request);
    let outcome = first;
    let renewedToken: string | undefined;
    for (let attempt = 0; ; attempt++) {
      let wait: number | undefined;
      let reason: string;
      if (outcome instanceof Response) {
        if (outcome.status === 401 && source && typeof options.token !== 'string' && !renewedToken && original) {
          renewedToken = await source.token(true);
          await discard(outcome);
          outcome = await send(original, renewedToken, fetch);
          attempt--;
          continue;
        }
        reason = String(outcome.status);
        if (retryOn(outcome.status)) {
          const asked = retryAfterMs(outcome.headers.get('retry-after'));
          wait = asked === undefined ? backoff(attempt) : asked <= maxRetryAfterMs ? asked : undefined;
        }
        if (wait === undefined || attempt >= retries || !original) {
          if (outcome.status >= 400) throw await KoerierProblem.of(outcome);
          return outcome;
        }
        await discard(outcome);
      } else {
        if (attempt >= retries || !original || request.signal.aborted) throw outcome;
        reason = networkFailure(outcome);
        wait = backoff(attempt);
      }
      options.onRetry?.(reason, wait, request);
      await sleep(wait, request.signal);
      outcome = await send(original, renewedToken, fetch);
    }
  }

  return {
    async onRequest({ request }) {
      if (MUTATING.has(request.method) && !request.headers.has('idempotency-key'))
        request.headers.set('idempotency-key', crypto.randomUUID());
      if (source && !request.headers.has('authorization'))
        request.headers.set('authorization', `Bearer ${await source.token()}`);
      unsent.set(request, request.clone());
      return request;
    },
    async onResponse({ request, response, options: { fetch } }) {
      return settle(request, response, fetch);
    },
    async onError({ request, error, options: { fetch } }) {
      return settle(request, error instanceof Error ? error : new Error(String(error)), fetch);
    },
  };
}

async function send(original: Request, token: string | undefined, fetch: typeof globalThis.fetch) {
  const again = original.clone();
  if (token) again.headers.set('authorization', `Bearer ${token}`);
  return fetch(again).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date names its day and month; Date.parse alone would take "-1" for a year.
  const date = /[A-Za-z]/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A network failure's code (ECONNREFUSED) or message, for onRetry and the caller's error. */
export function networkFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason as Error)), { once: true });
  });
}
