/** An HTTP app: what a host (API Gateway's adapter, the laptop's gateway) calls per request. */
import type { HttpRequest, HttpResponse } from '../core/http/messages.js';
import { KoerierError, problemAnswer, problems } from '../core/http/problems.js';
import { allowedMethods, compileRoutes } from '../core/http/route-table.js';
import { routeTable, servedPath } from '../config/resources.js';

export type HttpApp = (request: HttpRequest) => Promise<HttpResponse>;

export function methodNotAllowed(allowed: readonly string[]): HttpResponse {
  return problemAnswer(
    new KoerierError(problems.methodNotAllowed(allowed), { headers: { allow: allowed.join(', ') } }),
  );
}

// Matched against the path as requested, so a route's path without the base path is a 404 like any other.
const apiRoutes = compileRoutes(
  routeTable.map((route) => ({ ...route, path: servedPath(route.path), tag: undefined })),
);

/**
 * API Gateway's `$default` answer, from the same route table: a path some route template matches
 * gets a 405 with those routes' methods in `Allow`, any other a 404. Apps answer a route key that
 * is not theirs with it too (only a host that routes wrongly sends one).
 */
export function unroutedAnswer(request: HttpRequest): HttpResponse {
  const allowed = allowedMethods(apiRoutes, request.path);
  if (allowed.length === 0)
    return problemAnswer(new KoerierError(problems.notFound(`There is no resource at ${request.path}.`)));
  return methodNotAllowed(allowed);
}
