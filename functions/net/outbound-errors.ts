/**
 * What can go wrong when Koerier calls out to a subscriber's address: one error class with a
 * `kind` the caller decides on, and the mapping from whatever Node's sockets, TLS and resolver
 * threw to that kind.
 */
import type { TransportFailureKind } from '../core/delivery/attempt-outcome.js';

/** The kinds are the delivery core's one list (precise, for the operator log). */
export type OutboundFailureKind = TransportFailureKind;

export class OutboundRequestError extends Error {
  override name = 'OutboundRequestError';
  constructor(
    readonly kind: OutboundFailureKind,
    message: string,
    /** The response status, when the failure came after the status line (`too-large`). */
    readonly status?: number,
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options);
    if (options?.headers) this.headers = options.headers;
  }

  /** The response headers, when the failure came after them (`too-large`): a 429's Retry-After still counts. */
  readonly headers?: Record<string, string>;
}

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ABORT_ERR']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL']);
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL_)/;
/** Node refused to build the request (a header value it cannot send): nothing left Koerier. */
const NOT_SENDABLE_CODES = new Set([
  'ERR_INVALID_CHAR',
  'ERR_HTTP_INVALID_HEADER_VALUE',
  'ERR_INVALID_HTTP_TOKEN',
  'ERR_UNESCAPED_CHARACTERS',
]);

/** Maps whatever the socket, TLS or the resolver threw to one `OutboundRequestError`. */
export function classifyOutboundError(error: unknown): OutboundRequestError {
  for (
    let current: unknown = error, depth = 0;
    current && depth < 5;
    current = (current as { cause?: unknown }).cause, depth++
  ) {
    if (current instanceof OutboundRequestError) return current;
    const code = (current as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    const message = (current as Error).message ?? code;
    if (TIMEOUT_CODES.has(code)) return new OutboundRequestError('timeout', message, undefined, { cause: error });
    if (RESET_CODES.has(code)) return new OutboundRequestError('reset', message, undefined, { cause: error });
    if (code === 'ECONNREFUSED')
      return new OutboundRequestError('connection-refused', message, undefined, { cause: error });
    if (DNS_CODES.has(code)) return new OutboundRequestError('dns', message, undefined, { cause: error });
    if (TLS_CODE.test(code)) return new OutboundRequestError('tls', message, undefined, { cause: error });
    if (NOT_SENDABLE_CODES.has(code))
      return new OutboundRequestError('not-sendable', message, undefined, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new OutboundRequestError('network', message, undefined, { cause: error });
}
