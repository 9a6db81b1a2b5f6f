/**
 * GET /openapi.json (no authentication), and API Gateway's `$default` route: whatever no route
 * matches is answered here as a 404 or 405 problem, so even unknown paths get RFC 9457 errors.
 */
import { openApiDocument } from '../core/api-description/openapi-document.js';
import { problemResponse, problems } from '../core/http/problems.js';
import { functions } from '../../lib/resources.js';
import { httpHandler } from './shared/api-gateway.js';
import { runtimeConfig } from './shared/runtime.js';

interface KnownRoute {
  readonly method: string;
  readonly pattern: RegExp;
}

const knownRoutes: KnownRoute[] = Object.values(functions).flatMap((fn) =>
  ('routes' in fn ? fn.routes : []).map((route) => ({ method: route.method, pattern: pathPattern(route.path) })),
);

let document: string | undefined;

export const handler = httpHandler(async (request) => {
  if (request.method === 'GET' && request.path === '/openapi.json') {
    const config = runtimeConfig();
    document ??= JSON.stringify(openApiDocument({ serverUrl: config.publicBaseUrl || undefined, tokenUrl: config.auth.tokenUrl }));
    return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }, body: document };
  }
  const allowed = knownRoutes.filter((route) => route.pattern.test(request.path)).map((route) => route.method);
  if (allowed.length === 0) return problemResponse(problems.notFound(`There is no resource at ${request.path}.`));
  return problemResponse(problems.methodNotAllowed(allowed), { allow: allowed.join(', ') });
});

function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}
