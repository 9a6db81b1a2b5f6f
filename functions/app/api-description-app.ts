/**
 * GET /openapi.json (no authentication), and API Gateway's `$default` route: whatever no route
 * matches is answered here as a 404 or 405 problem, so even unknown paths get RFC 9457 errors.
 */
import { openApiDocument } from '../core/api-description/openapi-document.js';
import { problemResponse, problems } from '../core/http/problems.js';
import { functions } from '../../lib/resources.js';
import type { KoerierDependencies } from './dependencies.js';
import { methodNotAllowed, type HttpApp } from './http-app.js';

interface KnownRoute {
  readonly method: string;
  readonly pattern: RegExp;
}

const knownRoutes: KnownRoute[] = Object.values(functions).flatMap((fn) =>
  ('routes' in fn ? fn.routes : []).map((route) => ({ method: route.method, pattern: pathPattern(route.path) })),
);

export function apiDescriptionApp(deps: Pick<KoerierDependencies, 'config'>): HttpApp {
  let document: string | undefined;
  return async (request) => {
    if (request.method === 'GET' && request.path === '/openapi.json') {
      const { config } = deps;
      document ??= JSON.stringify(openApiDocument({ serverUrl: config.publicBaseUrl || undefined, tokenUrl: config.auth.tokenUrl }));
      return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }, body: document };
    }
    const allowed = knownRoutes.filter((route) => route.pattern.test(request.path)).map((route) => route.method);
    if (allowed.length === 0) return problemResponse(problems.notFound(`There is no resource at ${request.path}.`));
    return methodNotAllowed(allowed);
  };
}

function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}
