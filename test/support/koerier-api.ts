/**
 * The tests' and benches' way to call a laptop host's API: the one generated client
 * (client/koerier-client.ts) with a token, so a test states what it sends and the client adds what
 * every call must carry (an Idempotency-Key per mutating call, the same on a retry; refusals thrown
 * as a KoerierProblem). Issue 29 item 5 replaced the private `publish` helpers and hand-built
 * Idempotency-Key headers of the test files with it.
 *
 * Which to use: `apiAs` for typed calls that must succeed, `publishEvent(s)` to publish and go on,
 * `callApi` and `tryPublish` where a test asserts on the status (a refusal is an answer, not a throw).
 *
 * A test about replays passes its chosen key (callApi's headers, publishEvents' idempotencyKey).
 * Sent by hand on purpose, and so not through these: requests about the HTTP edge itself (a
 * missing Idempotency-Key, raw or fuzzed requests, binary-mode headers, byte-exact bodies, the
 * origin header), the integration tests' Lambda events (no HTTP client is involved), and the
 * benches' measured requests whose floor is sent the same way over undici.
 */
import {
  createKoerierClient,
  KoerierProblem,
  type components,
  type KoerierClient,
  type KoerierClientOptions,
} from '../../client/koerier-client.js';

export { KoerierProblem, type KoerierClient };
export type CloudEvent = components['schemas']['CloudEvent'];
export type Accepted = components['schemas']['Accepted'];
export type SubscriptionRequest = components['schemas']['SubscriptionRequest'];

/** A client of the API at `baseUrl` (a TestHost's `url`) calling with `token` (none: anonymous calls). */
export function apiAs(
  baseUrl: string,
  token: string | undefined,
  options: Partial<KoerierClientOptions> = {},
): KoerierClient {
  // Retries stay short in tests: a host that answers 503 for long is a failure to see, not to wait out.
  return createKoerierClient({ baseUrl, token, retries: 2, maxRetryAfterMs: 5_000, ...options });
}

export interface PublishOptions {
  /** The key to send (a test about replays chooses it); the client makes one otherwise. */
  readonly idempotencyKey?: string;
  /** Default: application/cloudevents-batch+json for an array, application/cloudevents+json otherwise. */
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * POST /events: one event, a batch (an array) or a body as text, as sent. Answers the 202's Accepted
 * and the response (for its headers); a refusal throws a KoerierProblem.
 */
export async function publishEvents(
  api: KoerierClient,
  events: Readonly<Record<string, unknown>> | readonly Readonly<Record<string, unknown>>[] | string,
  options: PublishOptions = {},
): Promise<{ accepted: Accepted; response: Response }> {
  const contentType =
    options.contentType ??
    (Array.isArray(events) ? 'application/cloudevents-batch+json' : 'application/cloudevents+json');
  const text = typeof events === 'string' ? events : JSON.stringify(events);
  const { data, response } = await api.POST('/events', {
    body: text,
    bodySerializer: (body: unknown) => body,
    headers: { 'content-type': contentType, ...options.headers },
    ...(options.idempotencyKey ? { params: { header: { 'Idempotency-Key': options.idempotencyKey } } } : {}),
  });
  return { accepted: data as Accepted, response };
}

/**
 * Publishes one new event: `attributes` (at least source and type) with specversion 1.0 and a fresh
 * id filled in unless given. Answers the event's JSON text as sent, for comparing with what arrives.
 */
export async function publishEvent(
  api: KoerierClient,
  attributes: Readonly<Record<string, unknown>> & { readonly source: string; readonly type: string },
  options: PublishOptions = {},
): Promise<string> {
  const text = JSON.stringify({ specversion: '1.0', id: crypto.randomUUID(), ...attributes });
  await publishEvents(api, text, options);
  return text;
}

/** An answer as a test asserts on it: status, headers, the body as text and parsed (`{}` when empty). */
export interface ApiAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly location: string | null;
  readonly text: string;
  readonly body: Record<string, unknown>;
}

/**
 * One call of `method` on `path` with `token` (none: an anonymous call), answered whatever its
 * status: for tests that assert on refusals as much as on successes. `path` is under `baseUrl`
 * (`/subscriptions`) or as the API writes it in a Location or a `next` link (`/v1/subscriptions`).
 * `body` is sent as JSON, or as it is when it is a string (a CloudEvent's text, a YAML document).
 * Sent through the generated client's middleware (a mutating call gets its Idempotency-Key there).
 * No answer is retried, so the status a test sees is the one the gateway answered; a connection
 * lost before any answer (a keep-alive connection the host closed as it was reused) is sent again
 * with the same key, as the client does for every caller.
 */
export async function callApi(
  baseUrl: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Readonly<Record<string, string>> = {},
): Promise<ApiAnswer> {
  const client = apiAs(baseUrl, token, { retryOn: () => false });
  const request = client.request as unknown as (
    method: string,
    path: string,
    init: Record<string, unknown>,
  ) => Promise<{ response: Response; data?: unknown; error?: unknown }>;
  const basePath = new URL(baseUrl).pathname.replace(/\/$/, '');
  const relative = basePath && path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : path;
  try {
    const { response, data } = await request(method, relative, {
      headers,
      parseAs: 'text',
      ...(body === undefined ? {} : { body }),
      ...(typeof body === 'string' ? { bodySerializer: (text: string) => text } : {}),
    });
    return answer(response.status, response.headers, typeof data === 'string' ? data : '');
  } catch (error) {
    if (error instanceof KoerierProblem) return answer(error.status, error.headers, error.text);
    throw error;
  }
}

/**
 * POST /events answered whatever its status, like callApi: for tests that assert which events are
 * refused, or that time a publish (no refusal is retried and waited for). The content type is
 * chosen as by publishEvents unless `headers` name one.
 */
export function tryPublish(
  baseUrl: string,
  token: string,
  events: Readonly<Record<string, unknown>> | readonly Readonly<Record<string, unknown>>[] | string,
  headers: Readonly<Record<string, string>> = {},
): Promise<ApiAnswer> {
  const contentType = Array.isArray(events) ? 'application/cloudevents-batch+json' : 'application/cloudevents+json';
  return callApi(baseUrl, token, 'POST', '/events', events, { 'content-type': contentType, ...headers });
}

function answer(status: number, headers: Headers, text: string): ApiAnswer {
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // Not JSON: the text is there for the test to read.
  }
  return { status, headers, location: headers.get('location'), text, body };
}
