/** An HTTP app: what a host (API Gateway's adapter, the laptop's gateway) calls per request. */
import type { HttpRequest, HttpResponse } from '../core/http/messages.js';
import { problemResponse, problems } from '../core/http/problems.js';

export type HttpApp = (request: HttpRequest) => Promise<HttpResponse>;

export function methodNotAllowed(allowed: readonly string[]): HttpResponse {
  return problemResponse(problems.methodNotAllowed(allowed), { allow: allowed.join(', ') });
}
