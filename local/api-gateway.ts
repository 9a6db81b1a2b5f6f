/**
 * An HTTP server that behaves like an API Gateway HTTP API with Lambda proxy integrations,
 * payload format 2.0: it matches the routes of functions/config/resources.ts, hands the handler the event API
 * Gateway would build, and writes the handler's result the way API Gateway would. Requests no
 * route matches go to the function marked `defaultRoute` (API Gateway's `$default` route).
 *
 * A few local-only routes (the development token endpoint, JWKS, health, metrics) are served before the
 * routes of the functions; they never exist in AWS.
 */
import { randomBytes } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { HttpRequest, HttpResponse } from '../functions/core/http/messages.js';
import { mediaTypeOf } from '../functions/core/http/messages.js';
import { problem, problemResponse, problems, type Problem } from '../functions/core/http/problems.js';
import {
  compileRoutes,
  DEFAULT_ROUTE_KEY,
  matchRoute,
  type CompiledRoute,
} from '../functions/core/http/route-table.js';
import { invokeWithTimeout, type LoadedFunction } from './lambda-runtime.js';
import { servedPath } from '../functions/config/resources.js';

/** API Gateway's payload limit for HTTP APIs ("Payload size: 10 MB", HTTP API quotas). */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
/**
 * Lambda's limit on a synchronous invocation's request: 6 MB, measured on the event JSON that
 * API Gateway hands the function — binary bodies base64-encoded into it, headers and request
 * context included. Lambda's Invoke answers `RequestEntityTooLargeException: Request must be
 * smaller than 6291456 bytes for the InvokeFunction operation` (6 MiB, measured by Zac Charles,
 * "Deep Dive: Lambda's Request Payload Size Limit", 2022). The function never runs. API Gateway
 * hands the client that failure as 413 Request Entity Too Large (reported for Lambda proxy
 * integrations, e.g. jun711.github.io "Handling AWS Lambda Payload Limit"; AWS does not document
 * the status for HTTP APIs), so the laptop answers 413 as well, before invoking the handler.
 */
export const MAX_LAMBDA_EVENT_BYTES = 6 * 1024 * 1024;
/**
 * Lambda's limit on a synchronous invocation's response, the same 6 MiB, on the result JSON (a
 * binary body base64-encoded in it). Past it the invocation fails, and API Gateway answers 500
 * `{"message":"Internal Server Error"}`; the laptop does the same, so an answer too large for AWS
 * (the claim check's fetch streams at most 4 MiB of data for this reason) fails here too.
 */
export const MAX_LAMBDA_RESULT_BYTES = 6 * 1024 * 1024;
/**
 * Node's default `maxHeadersCount`: past it Node drops header lines silently, so an event could
 * arrive with some `ce-` attributes missing. The server keeps every line and refuses the request.
 */
export const MAX_HEADER_LINES = 2000;
/** Past this a client is cut off instead of drained, so a runaway upload cannot fill memory. */
const DRAIN_LIMIT_BYTES = 4 * MAX_REQUEST_BYTES;
const LOCAL_ACCOUNT_ID = '000000000000';
const LOCAL_API_ID = 'koerierlocal';

/** A route the laptop host serves itself, outside the API Gateway emulation. */
export interface LocalRoute {
  readonly method: string;
  readonly path: string;
  handle(request: HttpRequest): Promise<HttpResponse>;
}

export interface ApiGateway {
  readonly server: Server;
  /** Until this is called every request gets API Gateway's 503, as while a stage deploys. */
  mount(functions: readonly LoadedFunction[], localRoutes?: readonly LocalRoute[]): void;
}

/**
 * `servedPath` says where a route of functions/config/resources.ts is served (default: under the API's base
 * path, as in AWS); the route keys in events are those of the served paths, as API Gateway's are.
 */
export function createApiGateway(
  log: (line: string) => void,
  servedPathOf: (path: string) => string = servedPath,
): ApiGateway {
  let routes: CompiledRoute<LoadedFunction>[] | undefined;
  let defaultFunction: LoadedFunction | undefined;
  let local: readonly LocalRoute[] = [];

  // Host is checked by the host itself (below), so a request without one gets a problem answer
  // instead of Node's empty 400.
  const server = createServer({ requireHostHeader: false }, (req, res) => {
    const started = process.hrtime.bigint();
    const requestId = apiGatewayRequestId();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    let routeKey = '-';
    const finish = (status: number) =>
      log(
        JSON.stringify({
          level: status >= 500 ? 'error' : 'info',
          time: new Date().toISOString(),
          message: 'request',
          method: req.method,
          path,
          routeKey,
          status,
          ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
          requestId,
        }),
      );

    void (async () => {
      if (req.rawHeaders.length / 2 > MAX_HEADER_LINES) {
        const tooMany = problem(
          431,
          'request-header-fields-too-large',
          `The request has ${req.rawHeaders.length / 2} header lines; at most ${MAX_HEADER_LINES} are accepted.`,
        );
        writeHttpResponse(res, problemResponse(tooMany, { connection: 'close' }), requestId);
        return finish(431);
      }
      const hostFault = hostHeaderFault(req);
      if (hostFault) {
        writeHttpResponse(
          res,
          problemResponse(problems.badRequest('invalid-host', hostFault), { connection: 'close' }),
          requestId,
        );
        return finish(400);
      }
      const body = await readBody(req);
      if (body === 'aborted') {
        // The client went away mid-body: nothing to answer, nobody to answer to, and not our failure.
        log(
          JSON.stringify({
            level: 'info',
            time: new Date().toISOString(),
            message: 'client aborted the request',
            method: req.method,
            path,
            requestId,
          }),
        );
        return;
      }
      if (body === 'too-large') {
        const problem = problems.payloadTooLarge(
          `The request body exceeds API Gateway's limit of ${MAX_REQUEST_BYTES} bytes.`,
        );
        writeHttpResponse(res, problemResponse(problem, { connection: 'close' }), requestId);
        return finish(413);
      }
      if (!routes) {
        writeMessage(res, 503, 'Service Unavailable', requestId);
        return finish(503);
      }
      const localMatches = local.filter((route) => route.path === path);
      if (localMatches.length > 0) {
        routeKey = `local ${path}`;
        const route = localMatches.find((candidate) => candidate.method === req.method);
        const response = route
          ? await route.handle(toLocalRequest(req, path, body))
          : problemResponse(problems.methodNotAllowed(localMatches.map((r) => r.method)), {
              allow: localMatches.map((r) => r.method).join(', '),
            });
        writeHttpResponse(res, response, requestId);
        return finish(response.status);
      }
      const routed = matchRoute(routes, req.method ?? 'GET', path);
      // Parameters only when the template has some, as API Gateway leaves `pathParameters` out otherwise.
      const match = routed
        ? {
            routeKey: routed.routeKey,
            fn: routed.tag,
            pathParameters: Object.keys(routed.pathParameters).length > 0 ? routed.pathParameters : undefined,
          }
        : defaultFunction && { routeKey: DEFAULT_ROUTE_KEY, fn: defaultFunction, pathParameters: undefined };
      if (!match) {
        writeMessage(res, 404, 'Not Found', requestId);
        return finish(404);
      }
      routeKey = match.routeKey;
      const event: APIGatewayProxyEventV2 = apiGatewayEvent({
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        httpVersion: req.httpVersion,
        rawHeaders: req.rawHeaders,
        body,
        sourceIp: sourceIpOf(req),
        routeKey: match.routeKey,
        pathParameters: match.pathParameters,
        requestId,
        now: new Date(),
      });
      const eventBytes = Buffer.byteLength(JSON.stringify(event));
      if (eventBytes > MAX_LAMBDA_EVENT_BYTES) {
        const detail =
          `As the event API Gateway hands the function${event.isBase64Encoded ? ' (the body base64-encoded)' : ''}, the request is ` +
          `${eventBytes} bytes; Lambda accepts at most ${MAX_LAMBDA_EVENT_BYTES}.`;
        writeHttpResponse(res, problemResponse(problems.payloadTooLarge(detail), { connection: 'close' }), requestId);
        return finish(413);
      }
      let result: unknown;
      try {
        result = await invokeWithTimeout(match.fn, event);
      } catch (error) {
        log(
          JSON.stringify({
            level: 'error',
            time: new Date().toISOString(),
            message: 'function failed',
            function: match.fn.name,
            routeKey,
            requestId,
            error:
              error instanceof Error
                ? { name: error.name, message: error.message, stack: error.stack }
                : { message: String(error) },
          }),
        );
        writeMessage(res, 500, 'Internal Server Error', requestId);
        return finish(500);
      }
      if (Buffer.byteLength(JSON.stringify(result ?? null)) > MAX_LAMBDA_RESULT_BYTES) {
        log(
          JSON.stringify({
            level: 'error',
            time: new Date().toISOString(),
            message: 'function result too large',
            function: match.fn.name,
            routeKey,
            requestId,
          }),
        );
        writeMessage(res, 500, 'Internal Server Error', requestId);
        return finish(500);
      }
      const status = writeLambdaResult(res, result, requestId);
      finish(status);
    })().catch((error: unknown) => {
      // A local route that throws, or a broken socket; function failures are answered above.
      log(
        JSON.stringify({
          level: 'error',
          time: new Date().toISOString(),
          message: 'request failed',
          path,
          requestId,
          error: String(error),
        }),
      );
      if (res.headersSent) return res.destroy();
      writeMessage(res, 500, 'Internal Server Error', requestId);
      finish(500);
    });
  });

  // Every header line is kept (see MAX_HEADER_LINES); Node's maxHeaderSize still bounds their bytes.
  server.maxHeadersCount = 0;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, log));
  // Without a listener Node closes a CONNECT's connection without a word; Koerier is no proxy.
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    const notServed = problem(
      405,
      'method-not-allowed',
      `Koerier is not a proxy: CONNECT is not served. Allowed: ${SERVED_METHODS}.`,
    );
    log(
      JSON.stringify({
        level: 'info',
        time: new Date().toISOString(),
        message: 'malformed request refused',
        status: 405,
        code: 'CONNECT',
      }),
    );
    writeRawProblem(socket, notServed, { allow: SERVED_METHODS, 'apigw-requestid': apiGatewayRequestId() });
  });
  // An Expect other than 100-continue: Node's own answer is an empty 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const requestId = apiGatewayRequestId();
    const unmet = problem(417, 'expectation-failed', 'Only "Expect: 100-continue" is understood.');
    log(
      JSON.stringify({
        level: 'info',
        time: new Date().toISOString(),
        message: 'request',
        method: req.method,
        path: (req.url ?? '/').split('?')[0],
        routeKey: '-',
        status: 417,
        requestId,
      }),
    );
    writeHttpResponse(res, problemResponse(unmet, { connection: 'close' }), requestId);
  });
  // A client may half-close its side once the request is sent (`shutdown(SHUT_WR)`, `curl` with
  // some proxies, `nc -N`). Node then ends the connection before the handler answers, unless
  // the server allows half-open HTTP connections: the answer still goes out, then the socket is
  // closed. (`httpAllowHalfOpen` is read by Node's socketOnEnd; it has no constructor option.)
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;

  return {
    server,
    mount(functions, localRoutes = []) {
      const defaults = functions.filter((fn) => fn.spec.defaultRoute);
      if (defaults.length > 1)
        throw new Error(`more than one function claims the default route: ${defaults.map((fn) => fn.name).join(', ')}`);
      defaultFunction = defaults[0];
      local = localRoutes;
      routes = compileFunctionRoutes(functions, servedPathOf);
    },
  };
}

function compileFunctionRoutes(
  functions: readonly LoadedFunction[],
  servedPathOf: (path: string) => string,
): CompiledRoute<LoadedFunction>[] {
  return compileRoutes(
    functions.flatMap((fn) =>
      (fn.spec.routes ?? []).map((route) => ({ method: route.method, path: servedPathOf(route.path), tag: fn })),
    ),
  );
}

export interface IncomingForEvent {
  readonly method: string;
  /** Request target as received: raw path and raw query string. */
  readonly url: string;
  readonly httpVersion: string;
  /** Node's `rawHeaders`: name, value, name, value… with repeats kept. */
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
  readonly sourceIp: string;
  readonly routeKey: string;
  readonly pathParameters?: Record<string, string> | undefined;
  readonly requestId: string;
  readonly now: Date;
}

/** The event API Gateway (HTTP API, payload format 2.0) hands a Lambda proxy integration. */
export function apiGatewayEvent(request: IncomingForEvent): APIGatewayProxyEventV2 {
  const questionMark = request.url.indexOf('?');
  const rawPath = questionMark === -1 ? request.url : request.url.slice(0, questionMark);
  const rawQueryString = questionMark === -1 ? '' : request.url.slice(questionMark + 1);
  const headers = joinedHeaders(request.rawHeaders);
  // API Gateway moves cookies out of the headers into their own list.
  const cookieHeader = headers['cookie'];
  delete headers['cookie'];
  const cookies = cookieHeader
    ?.split(/;\s*|,\s*/)
    .map((cookie) => cookie.trim())
    .filter(Boolean);
  const host = headers['host'] ?? '127.0.0.1';
  const domainName = host.replace(/:\d+$/, '');
  headers['x-forwarded-for'] = request.sourceIp;
  headers['x-forwarded-proto'] = 'http';
  headers['x-forwarded-port'] = /:(\d+)$/.exec(host)?.[1] ?? '80';
  headers['x-amzn-trace-id'] ??=
    `Root=1-${Math.floor(request.now.getTime() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;

  const queryStringParameters = queryParameters(rawQueryString);
  const text = isTextContent(headers['content-type']);
  return {
    version: '2.0',
    routeKey: request.routeKey,
    rawPath,
    rawQueryString,
    ...(cookies && cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(queryStringParameters ? { queryStringParameters } : {}),
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: LOCAL_API_ID,
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method: request.method,
        path: rawPath,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: request.requestId,
      routeKey: request.routeKey,
      stage: '$default',
      time: apiGatewayTime(request.now),
      timeEpoch: request.now.getTime(),
    },
    ...(request.body.length > 0
      ? { body: text ? request.body.toString('utf8') : request.body.toString('base64') }
      : {}),
    ...(request.pathParameters ? { pathParameters: request.pathParameters } : {}),
    isBase64Encoded: request.body.length > 0 && !text,
  };
}

/**
 * API Gateway passes the body as a string only for these media types and base64-encodes anything
 * else, including a missing Content-Type, form posts and `application/cloudevents+json` (split
 * observed against AWS, as reported in ministackorg/ministack#766).
 */
export function isTextContent(contentType: string | undefined): boolean {
  const media = mediaTypeOf(contentType);
  return (
    media.startsWith('text/') ||
    media === 'application/json' ||
    media === 'application/xml' ||
    media === 'application/javascript'
  );
}

/** Header names lower-cased; a repeated header's values joined with commas, as API Gateway does. */
function joinedHeaders(rawHeaders: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? '').toLowerCase();
    const value = rawHeaders[i + 1] ?? '';
    headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  return headers;
}

function queryParameters(rawQueryString: string): Record<string, string> | undefined {
  if (rawQueryString === '') return undefined;
  const parameters: Record<string, string> = {};
  for (const pair of rawQueryString.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decodeQueryComponent(equals === -1 ? pair : pair.slice(0, equals));
    const value = equals === -1 ? '' : decodeQueryComponent(pair.slice(equals + 1));
    parameters[name] = name in parameters ? `${parameters[name]},${value}` : value;
  }
  return Object.keys(parameters).length > 0 ? parameters : undefined;
}

function decodeQueryComponent(raw: string): string {
  return decodeSegment(raw.replace(/\+/g, ' '));
}

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `12/Mar/2020:19:03:58 +0000`, API Gateway's request time format. */
export function apiGatewayTime(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${two(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:` +
    `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`
  );
}

/** API Gateway request ids look like `JKJaXmPLvHcESHA=`. */
function apiGatewayRequestId(): string {
  return randomBytes(10).toString('base64');
}

function sourceIpOf(req: IncomingMessage): string {
  return (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
}

async function readBody(req: IncomingMessage): Promise<Buffer | 'too-large' | 'aborted'> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > DRAIN_LIMIT_BYTES) {
        req.destroy();
        return 'too-large';
      }
      if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
    }
  } catch (error) {
    // Node ends the body with an `aborted` ECONNRESET when the client closes mid-body.
    if (req.destroyed || (error as NodeJS.ErrnoException).code === 'ECONNRESET') return 'aborted';
    throw error;
  }
  if (!req.complete) return 'aborted';
  return size > MAX_REQUEST_BYTES ? 'too-large' : Buffer.concat(chunks, size);
}

/** Methods the API's routes and the local routes use, for the `Allow` of a CONNECT's 405. */
const SERVED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host, or any request with more than one, is
 * answered 400. HTTP/1.0 predates Host and may leave it out.
 */
function hostHeaderFault(req: IncomingMessage): string | undefined {
  let hosts = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) return `The request has ${hosts} Host header lines; exactly one is allowed.`;
  if (hosts === 0 && req.httpVersion !== '1.0') return `An HTTP/${req.httpVersion} request needs a Host header.`;
  return undefined;
}

/**
 * What Node's HTTP parser refuses before any handler runs — bad framing, a bare LF, a header
 * section past `maxHeaderSize` — gets a problem+json answer too, instead of Node's empty 400.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, log: (line: string) => void): void {
  const code = error.code ?? 'unknown';
  const status =
    code === 'HPE_HEADER_OVERFLOW'
      ? 431
      : code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADERS_TIMEOUT'
        ? 408
        : 400;
  // A quiet line: a malformed request is the client's doing, not a failure of the host.
  log(
    JSON.stringify({
      level: 'info',
      time: new Date().toISOString(),
      message: 'malformed request refused',
      status,
      code,
    }),
  );
  if (code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const refused: Problem =
    status === 431
      ? problem(
          431,
          'request-header-fields-too-large',
          'The request line and headers are larger than the server accepts.',
        )
      : status === 408
        ? problem(408, 'request-timeout', 'The request did not arrive in time.')
        : problems.badRequest(
            'malformed-request',
            'The request is not valid HTTP/1.1 (framing, line endings or header syntax).',
          );
  writeRawProblem(socket, refused);
}

/**
 * A problem answer written straight to a socket no ServerResponse owns (the parser refused the
 * request, or Node handed the socket over, as for CONNECT), then the connection is closed.
 */
function writeRawProblem(socket: Duplex, refused: Problem, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(refused);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  // Node no longer watches a socket it handed over: its errors (a client gone) must not throw.
  socket.on('error', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${refused.status} ${STATUS_CODES[refused.status] ?? ''}\r\ncontent-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}connection: close\r\n\r\n${body}`,
  );
  // A client that keeps its side open after the answer is not waited for.
  setTimeout(() => socket.destroy(), 5000).unref();
}

function toLocalRequest(req: IncomingMessage, path: string, body: Buffer): HttpRequest {
  const url = new URL(req.url ?? '/', 'http://localhost');
  return {
    method: req.method ?? 'GET',
    path,
    routeKey: `${req.method ?? 'GET'} ${path}`,
    headers: joinedHeaders(req.rawHeaders),
    query: Object.fromEntries(url.searchParams),
    pathParameters: {},
    body,
  };
}

function writeHttpResponse(res: ServerResponse, response: HttpResponse, requestId: string): void {
  res.writeHead(response.status, { ...response.headers, 'apigw-requestid': requestId });
  res.end(response.body);
}

/** API Gateway's own error bodies, e.g. `{"message":"Internal Server Error"}`. */
function writeMessage(res: ServerResponse, status: number, message: string, requestId: string): void {
  writeHttpResponse(
    res,
    { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message }) },
    requestId,
  );
}

/**
 * Payload format 2.0 responses: an object with `statusCode` is a structured result; anything else
 * is a 200 whose JSON body is the value itself (a string is sent as is).
 */
function writeLambdaResult(res: ServerResponse, result: unknown, requestId: string): number {
  if (
    result !== null &&
    typeof result === 'object' &&
    typeof (result as { statusCode?: unknown }).statusCode === 'number'
  ) {
    const structured = result as APIGatewayProxyStructuredResultV2;
    const status = structured.statusCode ?? 200;
    res.statusCode = status;
    for (const [name, value] of Object.entries(structured.headers ?? {})) res.setHeader(name, String(value));
    if (structured.cookies && structured.cookies.length > 0) res.setHeader('set-cookie', structured.cookies);
    res.setHeader('apigw-requestid', requestId);
    const body = structured.body ?? '';
    res.end(structured.isBase64Encoded ? Buffer.from(body, 'base64') : body);
    return status;
  }
  const body = typeof result === 'string' ? result : JSON.stringify(result ?? null);
  writeHttpResponse(res, { status: 200, headers: { 'content-type': 'application/json' }, body }, requestId);
  return 200;
}
