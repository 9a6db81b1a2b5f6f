/**
 * The one way Koerier calls out to addresses a subscriber gave it (webhook deliveries, the
 * validation handshake, a subscriber's OAuth2 token endpoint). Such a URL is untrusted input, so:
 *
 * - only `https:` (WH-1), except plain `http:` to loopback when `allowLoopback` is set — the laptop
 *   host only;
 * - the address guard runs at connect time, on the addresses the name resolved to *for this very
 *   connection* and again on the socket's actual peer, so DNS rebinding cannot slip a private
 *   address in between a check and the connect (see `ip-address-policy.ts` for what is refused);
 * - only the allowed ports (443 by default): a subscriber must not be able to make Koerier probe
 *   other services' ports; the laptop host may reach any port on loopback;
 * - redirects are never followed: a 3xx comes back as a response like any other;
 * - connect time, response time and response size are bounded;
 * - every failure is an `OutboundRequestError` with a `kind` the caller can decide on;
 * - with `clientCertificate`, Koerier presents that certificate when a server asks for one (mTLS,
 *   issue 12, item 5); a server that does not ask never sees it. The guard is the same.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { Socket } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import type { TransportFailureKind } from '../core/delivery/attempt-outcome.js';
import { isLoopbackHost } from '../core/subscriptions/outbound-url.js';
import { judgeAddress } from './ip-address-policy.js';

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

export interface SafeHttpClientOptions {
  /** The laptop host only: loopback addresses may be reached, over plain http and on any port. */
  readonly allowLoopback?: boolean;
  /** Ports a URL may name (an https URL without one means 443). Default: 443 only. */
  readonly allowedPorts?: readonly number[];
  /** TCP plus TLS handshake. Default 5 s. */
  readonly connectTimeoutMs?: number;
  /** From sending the request until the whole response body is read. Default 10 s. */
  readonly responseTimeoutMs?: number;
  /** Larger response bodies fail as `too-large`. Default 64 KiB. */
  readonly maxResponseBytes?: number;
  /** PEM certificates trusted in addition to the public roots (tests' local certificate authority). */
  readonly extraCaCertificates?: readonly string[];
  /** Name resolution; the guard judges whatever this returns. Default `dns.lookup`. */
  readonly lookup?: LookupFunction;
  /** Open connections per origin (the pool's bound on concurrency to one target). Default 16. */
  readonly connectionsPerOrigin?: number;
  /** The mTLS client certificate and key, loaded on the first https connection (functions/aws/client-certificate.ts). */
  readonly clientCertificate?: () => Promise<ClientCertificate>;
}

/** PEM texts: the certificate chain (the client's first) and its private key. */
export interface ClientCertificate {
  readonly certificate: string;
  readonly privateKey: string;
}

export interface OutboundRequest {
  readonly method: 'GET' | 'POST' | 'OPTIONS';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** A tighter response deadline for this call. */
  readonly timeoutMs?: number;
}

export interface OutboundResponse {
  readonly status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export interface SafeHttpClient {
  request(request: OutboundRequest): Promise<OutboundResponse>;
  close(): Promise<void>;
}

export const DEFAULT_ALLOWED_PORTS: readonly number[] = [443];

const DEFAULTS = { connectTimeoutMs: 5_000, responseTimeoutMs: 10_000, maxResponseBytes: 64 * 1024, connectionsPerOrigin: 16 };

export function createSafeHttpClient(options: SafeHttpClientOptions = {}): SafeHttpClient {
  const allowLoopback = options.allowLoopback === true;
  const allowedPorts = options.allowedPorts ?? DEFAULT_ALLOWED_PORTS;
  const responseTimeoutMs = options.responseTimeoutMs ?? DEFAULTS.responseTimeoutMs;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULTS.maxResponseBytes;
  const lookup = options.lookup ?? (dnsLookup as LookupFunction);
  const httpsConnector = (certificate?: ClientCertificate) =>
    buildConnector({
      timeout: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      lookup: guardedLookup(lookup, (address) => refusalFor(address, false, allowLoopback)),
      // Built once: a `ca` list per connection would parse every root certificate again each time.
      // Given a secure context, TLS ignores `cert` and `key` options, so the certificate goes in it.
      ...(options.extraCaCertificates?.length || certificate
        ? {
            secureContext: createSecureContext({
              ...(options.extraCaCertificates?.length ? { ca: [...rootCertificates, ...options.extraCaCertificates] } : {}),
              ...(certificate ? { cert: certificate.certificate, key: certificate.privateKey } : {}),
            }),
          }
        : {}),
    } as buildConnector.BuildOptions);
  // With a client certificate, the https connector waits for it once; a failed load is tried again on the next connection.
  let withCertificate: Promise<buildConnector.connector> | undefined;
  const loadCertificate = options.clientCertificate;
  const https: buildConnector.connector = loadCertificate
    ? (connectOptions, callback) => {
        withCertificate ??= loadCertificate().then((certificate) => httpsConnector(certificate));
        withCertificate.then(
          (connector) => connector(connectOptions, callback),
          (error: unknown) => {
            withCertificate = undefined;
            callback(new OutboundRequestError('tls', 'the client certificate could not be loaded', undefined, { cause: error }), null);
          },
        );
      }
    : httpsConnector();
  const connectors = {
    https,
    http: buildConnector({
      timeout: options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs,
      lookup: guardedLookup(lookup, (address) => refusalFor(address, true, allowLoopback)),
    } as buildConnector.BuildOptions),
  };

  const connect: buildConnector.connector = (connectOptions, callback) => {
    const plainHttp = connectOptions.protocol !== 'https:';
    // An IP literal skips name resolution entirely, so it is judged here, before any packet leaves.
    const literal = connectOptions.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) {
      const refusal = refusalFor(literal, plainHttp, allowLoopback);
      if (refusal) return callback(refusal, null);
    }
    (plainHttp ? connectors.http : connectors.https)(connectOptions, (error, socket) => {
      if (error || !socket) return callback(error ?? new Error('no socket'), null);
      // The peer actually connected to, whatever resolution happened on the way.
      const refusal = refusalFor((socket as Socket).remoteAddress ?? '', plainHttp, allowLoopback);
      if (refusal) {
        socket.destroy();
        return callback(refusal, null);
      }
      callback(null, socket);
    });
  };

  const agent = new Agent({
    connect,
    connections: options.connectionsPerOrigin ?? DEFAULTS.connectionsPerOrigin,
    headersTimeout: responseTimeoutMs,
    bodyTimeout: responseTimeoutMs,
  });

  return {
    async request(request) {
      const url = checkUrl(request.url, allowLoopback, allowedPorts);
      const deadline = AbortSignal.timeout(request.timeoutMs ?? responseTimeoutMs);
      try {
        const response = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: request.method,
          headers: { ...request.headers },
          body: request.body ?? null,
          signal: deadline,
        });
        const body = await readBounded(response, maxResponseBytes);
        return { status: response.statusCode, headers: flattenHeaders(response.headers), body };
      } catch (error) {
        throw classifyOutboundError(
          deadline.aborted ? new OutboundRequestError('timeout', 'no complete response in time', undefined, { cause: error }) : error,
        );
      }
    },
    close: () => agent.close(),
  };
}

/** The URL as Koerier will call it, or an `invalid-url` error saying why not. */
export function checkUrl(raw: string, allowLoopback: boolean, allowedPorts: readonly number[] = DEFAULT_ALLOWED_PORTS): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRequestError('invalid-url', 'not an absolute URL');
  }
  if (url.username || url.password)
    throw new OutboundRequestError('invalid-url', 'credentials in the URL are not allowed (WH-3: use the Authorization header)');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowLoopback)) {
    throw new OutboundRequestError('invalid-url', `only https URLs may be called (WH-1), not ${url.protocol}`);
  }
  // The loopback exception is for the laptop host's own receivers; the address guard still
  // checks at connect time that such a name really is loopback.
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (!allowedPorts.includes(port) && !(allowLoopback && isLoopbackHost(url.hostname))) {
    throw new OutboundRequestError('invalid-url', `port ${port} is not one Koerier calls (allowed: ${allowedPorts.join(', ')})`);
  }
  return url;
}

function refusalFor(address: string, plainHttp: boolean, allowLoopback: boolean): OutboundRequestError | undefined {
  const verdict = judgeAddress(address, { allowLoopback });
  if (!verdict.allowed) return new OutboundRequestError('refused-address', `the address ${address} is ${verdict.range}; Koerier does not call it`);
  if (plainHttp && !verdict.loopback) return new OutboundRequestError('invalid-url', `plain http is allowed to loopback only, not to ${address}`);
  return undefined;
}

/**
 * Resolves as `lookup` does, but refuses the name if ANY address it resolves to is refused: a
 * name that mixes public and private answers is a rebinding attempt, not a target.
 */
function guardedLookup(lookup: LookupFunction, refusal: (address: string) => OutboundRequestError | undefined): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = (Array.isArray(addresses) ? addresses : [{ address: addresses, family: 4 }]) as LookupAddress[];
      for (const { address } of list) {
        const refused = refusal(address);
        if (refused) {
          refused.message = `${hostname} resolves to ${address}: ${refused.message}`;
          return callback(refused as NodeJS.ErrnoException, '', 0);
        }
      }
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const [first] = list as [LookupAddress];
      callback(null, first.address, first.family);
    });
  };
}

async function readBounded(response: Dispatcher.ResponseData, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      response.body.destroy();
      throw new OutboundRequestError('too-large', `response body exceeds ${limit} bytes`, response.statusCode, { headers: flattenHeaders(response.headers) });
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function flattenHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'ABORT_ERR']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH']);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL']);
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL_)/;
/** The client refused to build the request (a header value it cannot send): nothing left Koerier. */
const NOT_SENDABLE_CODES = new Set(['UND_ERR_INVALID_ARG', 'ERR_INVALID_CHAR', 'ERR_HTTP_INVALID_HEADER_VALUE', 'ERR_INVALID_HTTP_TOKEN']);

/** Maps whatever undici or the socket threw to one `OutboundRequestError`. */
export function classifyOutboundError(error: unknown): OutboundRequestError {
  for (let current: unknown = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof OutboundRequestError) return current;
    const code = (current as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    const message = (current as Error).message ?? code;
    if (TIMEOUT_CODES.has(code)) return new OutboundRequestError('timeout', message, undefined, { cause: error });
    if (RESET_CODES.has(code)) return new OutboundRequestError('reset', message, undefined, { cause: error });
    if (code === 'ECONNREFUSED') return new OutboundRequestError('connection-refused', message, undefined, { cause: error });
    if (DNS_CODES.has(code)) return new OutboundRequestError('dns', message, undefined, { cause: error });
    if (TLS_CODE.test(code)) return new OutboundRequestError('tls', message, undefined, { cause: error });
    if (NOT_SENDABLE_CODES.has(code)) return new OutboundRequestError('not-sendable', message, undefined, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new OutboundRequestError('network', message, undefined, { cause: error });
}
