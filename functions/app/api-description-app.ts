/**
 * GET /openapi.json and GET /problems/{type} (no authentication), and API Gateway's `$default` route: whatever no route
 * matches is answered here as a 404 or 405 problem, so even unknown paths get RFC 9457 errors.
 */
import { openApiDocument } from '../core/api-description/openapi-document.js';
import { problemTypePage } from '../core/api-description/problem-pages.js';
import type { RouteKey } from '../config/resources.js';
import type { KoerierDependencies } from './dependencies.js';
import { unroutedAnswer, type HttpApp } from './http-app.js';

/** What the app reads: its handler (functions/handlers/api-description.ts) must compose a builder for each. */
export type ApiDescriptionAppDependencies = Pick<KoerierDependencies, 'config'>;

export function apiDescriptionApp(deps: ApiDescriptionAppDependencies): HttpApp {
  let document: string | undefined;
  return async (request) => {
    const route = request.routeKey as RouteKey<'apiDescription'>;
    switch (route) {
      case 'GET /openapi.json': {
        const { config } = deps;
        document ??= JSON.stringify(
          openApiDocument({ serverUrl: config.publicBaseUrl || undefined, tokenUrl: config.auth.tokenUrl }),
        );
        return {
          status: 200,
          headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' },
          body: document,
        };
      }
      case 'GET /problems/{type}':
        return problemTypePage(request.pathParameters['type'] ?? '');
      default:
        // `$default`: whatever no route matches.
        return unroutedAnswer(request);
    }
  };
}
