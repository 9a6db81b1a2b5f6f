/**
 * The one way Koerier calls out to addresses a subscriber gave it (webhook deliveries, the
 * validation handshake, a subscriber's OAuth2 token endpoint). Such a URL is untrusted input, so:
 *
 * - only `https:` (WH-1), except plain `http:` to loopback when `allowLoopback` is set — the laptop
 *   host only;
 * - the address guard runs at connect time, on the addresses the name resolved to *for this very
 *   connection* and again on the socket's actual peer before a byte of TLS or HTTP is written, so
 *   DNS rebinding cannot slip a private address in between a check and the connect (see
 *   `ip-address-policy.ts` for what is refused);
 * - only the allowed ports (443 by default): a subscriber must not be able to make Koerier probe
 *   other services' ports; the laptop host may reach any port on loopback;
 * - redirects are never followed: a 3xx comes back as a response like any other;
 * - connect time, response time and response size are bounded;
 * - every failure is an `OutboundRequestError` with a `kind` the caller can decide on;
 * - with `clientCertificate`, Koerier presents that certificate when a server asks for one (mTLS,
 *   issue 12, item 5); a server that does not ask never sees it. The guard is the same.
 *
 * Built on `node:http`/`node:https` (issue 15, item 4): undici was more than half of the delivery
 * and subscriptions bundles and its cold import; Node's own client has the two hooks the guard
 * needs (a `lookup` per connection and the socket before its first write).
 */
import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import type { Duplex } from 'node:stream';
import { isLoopbackHost } from '../core/subscriptions/outbound-url.js';
import { guardedLookup } from './guarded-lookup.js';
import { judgeAddress } from './ip-address-policy.js';
import { classifyOutboundError, OutboundRequestError } from './outbound-errors.js';

export { classifyOutboundError, OutboundRequestError, type OutboundFailureKind } from './outbound-errors.js';

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

const DEFAULTS = {
  connectTimeoutMs: 5_000,
  responseTimeoutMs: 10_000,
  maxResponseBytes: 64 * 1024,
  connectionsPerOrigin: 16,
};

type Guard = (socket: Socket) => Socket;

/** Agents whose every new socket passes `guard` before anything is written to it. */
class GuardedHttpAgent extends HttpAgent {
  constructor(
    options: ConstructorParameters<typeof HttpAgent>[0],
    private readonly guard: Guard,
  ) {
    super(options);
  }
  override createConnection(...args: Parameters<HttpAgent['createConnection']>): Socket {
    return this.guard(super.createConnection(...args) as Socket);
  }
}
class GuardedHttpsAgent extends HttpsAgent {
  constructor(
    options: ConstructorParameters<typeof HttpsAgent>[0],
    private readonly guard: Guard,
  ) {
    super(options);
  }
  override createConnection(...args: Parameters<HttpAgent['createConnection']>): Socket {
    return this.guard(super.createConnection(...args) as Socket);
  }
}

export function createSafeHttpClient(options: SafeHttpClientOptions = {}): SafeHttpClient {
  const allowLoopback = options.allowLoopback === true;
  const allowedPorts = options.allowedPorts ?? DEFAULT_ALLOWED_PORTS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
  const responseTimeoutMs = options.responseTimeoutMs ?? DEFAULTS.responseTimeoutMs;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULTS.maxResponseBytes;
  const lookup = options.lookup ?? (dnsLookup as LookupFunction);
  const pool = {
    keepAlive: true,
    maxSockets: options.connectionsPerOrigin ?? DEFAULTS.connectionsPerOrigin,
    scheduling: 'lifo' as const,
  };

  /**
   * Every new socket: its peer is judged the moment TCP connects — ahead of the listeners that
   * send the TLS ClientHello or the buffered request — and the connect (plus TLS handshake) is bounded.
   */
  const guard =
    (plainHttp: boolean): Guard =>
    (socket) => {
      const timer = setTimeout(
        () => socket.destroy(new OutboundRequestError('timeout', `no connection within ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
      const settled = () => clearTimeout(timer);
      socket.once(plainHttp ? 'connect' : 'secureConnect', settled).once('close', settled);
      socket.prependOnceListener('connect', () => {
        // The peer actually connected to, whatever resolution happened on the way.
        const refusal = refusalFor(socket.remoteAddress ?? '', plainHttp, allowLoopback);
        if (refusal) socket.destroy(refusal);
      });
      return socket;
    };

  const http = new GuardedHttpAgent(
    { ...pool, lookup: guardedLookup(lookup, (address) => refusalFor(address, true, allowLoopback)) },
    guard(true),
  );
  const httpsAgent = (certificate?: ClientCertificate) => {
    // Built once: a `ca` list per connection would parse every root certificate again each time.
    const secureContext: SecureContext | undefined =
      options.extraCaCertificates?.length || certificate
        ? createSecureContext({
            ...(options.extraCaCertificates?.length
              ? { ca: [...rootCertificates, ...options.extraCaCertificates] }
              : {}),
            ...(certificate ? { cert: certificate.certificate, key: certificate.privateKey } : {}),
          })
        : undefined;
    const httpsLookup = guardedLookup(lookup, (address) => refusalFor(address, false, allowLoopback));
    return new GuardedHttpsAgent(
      { ...pool, lookup: httpsLookup, ...(secureContext ? { secureContext } : {}) },
      guard(false),
    );
  };
  // With a client certificate, the https agent waits for it once; a failed load is tried again on the next request.
  const loadCertificate = options.clientCertificate;
  let https: Promise<HttpsAgent> | undefined = loadCertificate ? undefined : Promise.resolve(httpsAgent());
  const httpsReady = (): Promise<HttpsAgent> =>
    (https ??= loadCertificate!().then(httpsAgent, (error: unknown) => {
      https = undefined;
      throw new OutboundRequestError('tls', 'the client certificate could not be loaded', undefined, { cause: error });
    }));

  /**
   * URLs that passed the checks below, by their text: a container sends to the same few sinks all
   * the time, and parsing and judging each again cost about 3 µs per request (issue 15). Only the
   * URL is kept; the address guard still judges every new connection.
   */
  const checkedUrls = new Map<string, URL>();
  const acceptUrl = (raw: string): URL => {
    const url = checkUrl(raw, allowLoopback, allowedPorts);
    // An IP literal skips name resolution entirely, so it is judged here, before any packet leaves.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal)) {
      const refusal = refusalFor(literal, url.protocol !== 'https:', allowLoopback);
      if (refusal) throw refusal;
    }
    if (checkedUrls.size >= 1_000) checkedUrls.clear();
    checkedUrls.set(raw, url);
    return url;
  };

  return {
    async request(request) {
      const url = checkedUrls.get(request.url) ?? acceptUrl(request.url);
      const plainHttp = url.protocol !== 'https:';
      // A plain timer rather than AbortSignal.timeout: the signal cost an EventTarget, its listeners
      // on the request and a weak timer per delivery (issue 15: about 8 µs of CPU per POST).
      const deadline = { timedOut: false, at: performance.now() + (request.timeoutMs ?? responseTimeoutMs) };
      try {
        const agent = plainHttp ? http : await httpsReady();
        return await exchange(plainHttp, agent, url, request, deadline, maxResponseBytes);
      } catch (error) {
        throw classifyOutboundError(
          deadline.timedOut
            ? new OutboundRequestError('timeout', 'no complete response in time', undefined, { cause: error })
            : error,
        );
      }
    },
    async close() {
      http.destroy();
      (await https?.catch(() => undefined))?.destroy();
    },
  };
}

/** One request and its whole (bounded) response on `agent`; settles once, on the deadline at the latest. */
function exchange(
  plainHttp: boolean,
  agent: HttpAgent,
  url: URL,
  request: OutboundRequest,
  deadline: { timedOut: boolean; readonly at: number },
  maxResponseBytes: number,
): Promise<OutboundResponse> {
  return new Promise((settleOk, settleError) => {
    const send = plainHttp ? httpRequest : httpsRequest;
    // Throws synchronously (before any connection) on a header value Node cannot send.
    const outgoing = send(url, { method: request.method, headers: { ...request.headers }, agent });
    // Counts from before the await for the agent, as the signal did; when it fires, the request and its socket are destroyed.
    const timer = setTimeout(
      () => {
        deadline.timedOut = true;
        const timedOut = Object.assign(new Error('The operation was aborted due to timeout'), {
          name: 'TimeoutError',
          code: 'ABORT_ERR',
        });
        outgoing.destroy(timedOut);
        // A request Node has already closed emits nothing more when destroyed: the deadline ends the call itself.
        reject(timedOut);
      },
      Math.max(0, deadline.at - performance.now()),
    );
    const resolve = (response: OutboundResponse) => {
      clearTimeout(timer);
      settleOk(response);
    };
    const reject = (error: unknown) => {
      clearTimeout(timer);
      settleError(error);
    };
    outgoing.on('error', reject);
    // A 101 with Upgrade goes to 'upgrade' listeners only; without one Node closes the socket and
    // emits neither 'response' nor 'error'. Koerier switches to no protocol: the 101 is the answer.
    outgoing.on('upgrade', (response: IncomingMessage, socket: Duplex) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 101, headers: flattenHeaders(response.headers), body: Buffer.alloc(0) });
    });
    outgoing.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxResponseBytes) {
          const headers = flattenHeaders(response.headers);
          reject(
            new OutboundRequestError(
              'too-large',
              `response body exceeds ${maxResponseBytes} bytes`,
              response.statusCode,
              { headers },
            ),
          );
          outgoing.destroy();
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', reject);
      response.on('aborted', () =>
        reject(Object.assign(new Error('the response was cut off'), { code: 'ECONNRESET' })),
      );
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: flattenHeaders(response.headers),
          body: Buffer.concat(chunks),
        }),
      );
    });
    outgoing.end(request.body);
  });
}

/** The URL as Koerier will call it, or an `invalid-url` error saying why not. */
export function checkUrl(
  raw: string,
  allowLoopback: boolean,
  allowedPorts: readonly number[] = DEFAULT_ALLOWED_PORTS,
): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRequestError('invalid-url', 'not an absolute URL');
  }
  if (url.username || url.password)
    throw new OutboundRequestError(
      'invalid-url',
      'credentials in the URL are not allowed (WH-3: use the Authorization header)',
    );
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowLoopback)) {
    throw new OutboundRequestError('invalid-url', `only https URLs may be called (WH-1), not ${url.protocol}`);
  }
  // The loopback exception is for the laptop host's own receivers; the address guard still
  // checks at connect time that such a name really is loopback.
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (!allowedPorts.includes(port) && !(allowLoopback && isLoopbackHost(url.hostname))) {
    throw new OutboundRequestError(
      'invalid-url',
      `port ${port} is not one Koerier calls (allowed: ${allowedPorts.join(', ')})`,
    );
  }
  return url;
}

function refusalFor(address: string, plainHttp: boolean, allowLoopback: boolean): OutboundRequestError | undefined {
  const verdict = judgeAddress(address, { allowLoopback });
  if (!verdict.allowed)
    return new OutboundRequestError(
      'refused-address',
      `the address ${address} is ${verdict.range}; Koerier does not call it`,
    );
  if (plainHttp && !verdict.loopback)
    return new OutboundRequestError('invalid-url', `plain http is allowed to loopback only, not to ${address}`);
  return undefined;
}

function flattenHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
