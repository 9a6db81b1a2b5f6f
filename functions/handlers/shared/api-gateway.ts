/**
 * The edge between API Gateway (HTTP API, payload format 2.0) and the apps' HttpRequest /
 * HttpResponse, in the spirit of Hono's adapters, which only convert: `httpHandler(app)` gives,
 * for a set of dependencies, the Lambda handler that runs `app` built on them. A `KoerierError`
 * becomes its problem answer here (`answered`), anything else a logged 500, once, so no route can
 * leak a stack trace; the origin guard runs here,
 * first of all, so no route can forget it.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { KoerierDependencies } from '../../app/dependencies.js';
import type { HttpApp } from '../../app/http-app.js';
import { describeError, logger, startInvocation } from '../../app/logger.js';
import { requireEdgeOrigin } from '../../app/origin-guard.js';
import { API_VERSION } from '../../core/http/api-version.js';
import type { HttpRequest, HttpResponse } from '../../core/http/messages.js';
import { answered, KoerierError, problemAnswer, problems } from '../../core/http/problems.js';
import { routeKeyOfServed } from '../../config/resources.js';

export type ApiGatewayHandler = (
  event: APIGatewayProxyEventV2,
  context?: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** What this edge reads itself: the origin guard's secret, the log of a failure, the metrics it flushes. */
export type HttpEdgeDependencies = Pick<KoerierDependencies, 'config' | 'log' | 'metrics'>;

/**
 * `httpHandler(ingestApp)(awsDependencies)` is the ingest's Lambda handler. The dependencies and
 * the app are built on the first request, not at import: importing a handler does no I/O. The
 * dependencies must hold what the app reads (its parameter's type) and what the edge does.
 */
export function httpHandler<D>(
  makeApp: (deps: D) => HttpApp,
): (dependencies: () => D & HttpEdgeDependencies) => ApiGatewayHandler {
  return (dependencies) => {
    let app: HttpApp | undefined;
    return async (event, context) => {
      let response: HttpResponse;
      let log: Pick<typeof logger, 'error'> = logger;
      let deps: HttpEdgeDependencies | undefined;
      try {
        const current = dependencies();
        startInvocation(context);
        deps = current;
        log = current.log;
        response = await answered(async () => {
          const request = toHttpRequest(event);
          // First of all: behind CloudFront, a request that went around it gets no further (origin-guard.ts).
          requireEdgeOrigin(request, current.config.originVerifySecret);
          app ??= makeApp(current);
          return app(request);
        });
      } catch (error) {
        log.error('request failed', {
          routeKey: event.routeKey,
          requestId: event.requestContext?.requestId,
          error: describeError(error),
        });
        response = problemAnswer(new KoerierError(problems.internal(), { cause: error }));
      }
      // Once per invocation: the figures the app recorded become EMF records (functions/aws/emf-metrics.ts).
      deps?.metrics.flush();
      return toApiResult(response);
    };
  };
}

export function toHttpRequest(event: APIGatewayProxyEventV2): HttpRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  if (event.cookies?.length) headers['cookie'] = event.cookies.join('; ');
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined) query[name] = value;
  }
  const pathParameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value !== undefined) pathParameters[name] = value;
  }
  const rawBody = event.body ?? '';
  const requestId = event.requestContext.requestId;
  return {
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath,
    // API Gateway names the served route (`POST /v1/events`); the apps dispatch on functions/config/resources.ts's (`POST /events`).
    routeKey: routeKeyOfServed(event.routeKey),
    headers,
    query,
    pathParameters,
    body: event.isBase64Encoded ? Buffer.from(rawBody, 'base64') : Buffer.from(rawBody, 'utf8'),
    ...(requestId ? { requestId } : {}),
  };
}

export function toApiResult(response: HttpResponse): APIGatewayProxyStructuredResultV2 {
  // API-Version on every response: Logius API Design Rules (API-57).
  return {
    statusCode: response.status,
    headers: { 'api-version': API_VERSION, ...response.headers },
    body: response.body,
    isBase64Encoded: response.base64 === true,
  };
}

export { describeError } from '../../app/logger.js';
