/**
 * The edge between API Gateway (HTTP API, payload format 2.0) and the domain's HttpRequest /
 * HttpResponse. Every HTTP handler is `httpHandler(route)`: errors become problem responses here,
 * once, so no route can leak a stack trace.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { API_VERSION } from '../../core/api-description/components.js';
import type { HttpRequest, HttpResponse } from '../../core/http/messages.js';
import { problemResponse, problems, ProblemError } from '../../core/http/problems.js';
import { logger } from './logger.js';
import { requireEdgeOrigin } from './origin-guard.js';
import { runtimeConfig } from './runtime.js';

export type HttpRoute = (request: HttpRequest, context: Context) => Promise<HttpResponse>;

export function httpHandler(route: HttpRoute): (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2> {
  return async (event, context) => {
    let response: HttpResponse;
    try {
      const request = toHttpRequest(event);
      // First of all: behind CloudFront, a request that went around it gets no further (origin-guard.ts).
      requireEdgeOrigin(request, runtimeConfig().originVerifySecret);
      response = await route(request, context);
    } catch (error) {
      if (error instanceof ProblemError) {
        response = problemResponse(error.problem, error.headers);
      } else {
        logger.error('request failed', { routeKey: event.routeKey, requestId: event.requestContext?.requestId, error: describeError(error) });
        response = problemResponse(problems.internal());
      }
    }
    return toApiResult(response);
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
  return {
    method: event.requestContext.http.method.toUpperCase(),
    path: event.rawPath,
    headers,
    query,
    pathParameters,
    body: event.isBase64Encoded ? Buffer.from(rawBody, 'base64') : Buffer.from(rawBody, 'utf8'),
  };
}

export function toApiResult(response: HttpResponse): APIGatewayProxyStructuredResultV2 {
  // API-Version on every response: Logius API Design Rules (API-57).
  return { statusCode: response.status, headers: { 'api-version': API_VERSION, ...response.headers }, body: response.body, isBase64Encoded: false };
}

export function describeError(error: unknown): { name: string; message: string; stack?: string } {
  if (error instanceof Error) return { name: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) };
  return { name: 'NonError', message: String(error) };
}
