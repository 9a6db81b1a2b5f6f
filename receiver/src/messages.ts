/**
 * The request and answer shapes the kit's core works on, free of any framework: the adapters
 * (src/adapters/) turn a node:http, Express, Fastify or Hono request into a `ReceivedRequest` and
 * write a `ReceiverAnswer` back.
 */

/** A request as it reached the receiver. Header names in any case; a repeated header as an array. */
export interface ReceivedRequest {
  readonly method: string;
  /** The absolute URL as the receiver was called (`http://host:port/path?query`). */
  readonly url: string;
  readonly headers: Headers | Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The body exactly as received: its bytes are what `Content-Digest` covers. */
  readonly body: Uint8Array | string;
}

/** What the receiver answers. */
export interface ReceiverAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Empty for no body. */
  readonly body: string;
}

/** Header names lower-case, repeated values joined with ", " (RFC 9110 §5.3). */
export function headerRecord(headers: ReceivedRequest['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  const entries: Iterable<[string, string | readonly string[] | undefined]> =
    headers instanceof Headers ? headers.entries() : Object.entries(headers);
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    record[name.toLowerCase()] = typeof value === 'string' ? value : value.join(', ');
  }
  return record;
}

export function bodyBytes(body: Uint8Array | string): Uint8Array {
  return typeof body === 'string' ? new TextEncoder().encode(body) : body;
}

/**
 * An RFC 9457 problem: a refusal says why in a body Koerier keeps with the attempt (the first
 * 2 KB of a receiver's answer), so the subscriber reads the reason in `koerier deliveries`.
 */
export function problemAnswer(
  status: number,
  type: string,
  title: string,
  detail: string,
  headers: Readonly<Record<string, string>> = {},
): ReceiverAnswer {
  return {
    status,
    headers: { 'content-type': 'application/problem+json', ...headers },
    body: JSON.stringify({ type: `urn:koerier:receiver:${type}`, title, status, detail }),
  };
}

export function emptyAnswer(status: number, headers: Readonly<Record<string, string>> = {}): ReceiverAnswer {
  return { status, headers, body: '' };
}
