/**
 * One route table, three readers: API Gateway (functions/config/resources.ts gives the CDK its routes), the
 * laptop gateway (local/api-gateway.ts matches requests with it, as API Gateway would) and the
 * `$default` answer (404, or 405 with `Allow`). A route's key is API Gateway's `routeKey`,
 * `METHOD /path/{param}`; the apps dispatch on it and it names the idempotency operation.
 *
 * Plain data in, plain data out: the table itself lives in functions/config/resources.ts, which core must not
 * import, so callers hand it in.
 */

export interface RouteTemplate {
  readonly method: string;
  /** API Gateway HTTP API path: `{name}` for a path parameter, a last `{name+}` for a greedy one. */
  readonly path: string;
}

export interface CompiledRoute<Tag = undefined> {
  readonly routeKey: string;
  readonly method: string;
  readonly segments: readonly string[];
  readonly literalSegments: number;
  readonly greedy: boolean;
  /** Position in the table as written. */
  readonly order: number;
  /** What the caller attached to the route (the laptop gateway: the function serving it). */
  readonly tag: Tag;
}

export interface RouteMatch<Tag = undefined> {
  readonly routeKey: string;
  readonly tag: Tag;
  /** Decoded, as API Gateway hands them; empty when the template has none. */
  readonly pathParameters: Record<string, string>;
}

export const DEFAULT_ROUTE_KEY = '$default';

export function routeKeyOf(route: RouteTemplate): string {
  return `${route.method} ${route.path}`;
}

/** Compiles routes, most specific first as API Gateway picks them: more literal segments first, greedy paths last. */
export function compileRoutes<Tag>(routes: readonly (RouteTemplate & { readonly tag: Tag })[]): CompiledRoute<Tag>[] {
  const compiled = routes.map((route, order) => {
    const segments = route.path.split('/').slice(1);
    return {
      routeKey: routeKeyOf(route),
      method: route.method,
      segments,
      literalSegments: segments.filter((s) => !s.startsWith('{')).length,
      greedy: segments.at(-1)?.endsWith('+}') ?? false,
      order,
      tag: route.tag,
    };
  });
  const seen = new Set<string>();
  for (const route of compiled) {
    if (seen.has(route.routeKey))
      throw new Error(`route ${route.routeKey} is claimed twice in functions/config/resources.ts`);
    seen.add(route.routeKey);
  }
  // Array.prototype.sort is stable: routes equally specific keep the table's order.
  return compiled.sort((a, b) => Number(a.greedy) - Number(b.greedy) || b.literalSegments - a.literalSegments);
}

/** The route a request takes, or undefined: then API Gateway hands it to `$default`. */
export function matchRoute<Tag>(
  routes: readonly CompiledRoute<Tag>[],
  method: string,
  path: string,
): RouteMatch<Tag> | undefined {
  const parts = path.split('/').slice(1);
  for (const route of routes) {
    if (route.method !== method) continue;
    const pathParameters = matchSegments(route.segments, parts);
    if (pathParameters) return { routeKey: route.routeKey, tag: route.tag, pathParameters };
  }
  return undefined;
}

/**
 * For the `$default` answer: the methods of the templates the path matches, in the table's order.
 * None: 404; some: 405 with these in `Allow`.
 */
export function allowedMethods(routes: readonly CompiledRoute<unknown>[], path: string): string[] {
  const parts = path.split('/').slice(1);
  const byTableOrder = [...routes].sort((a, b) => a.order - b.order);
  return byTableOrder
    .filter((route) => matchSegments(route.segments, parts) !== undefined)
    .map((route) => route.method);
}

function matchSegments(segments: readonly string[], parts: readonly string[]): Record<string, string> | undefined {
  const parameters: Record<string, string> = {};
  for (const [index, segment] of segments.entries()) {
    const part = parts[index];
    if (segment.startsWith('{') && segment.endsWith('+}')) {
      const rest = parts.slice(index).join('/');
      if (rest === '') return undefined;
      parameters[segment.slice(1, -2)] = decodeSegment(rest);
      return parameters;
    }
    if (part === undefined) return undefined;
    if (segment.startsWith('{')) {
      if (part === '') return undefined;
      parameters[segment.slice(1, -1)] = decodeSegment(part);
    } else if (segment !== part) {
      return undefined;
    }
  }
  return parts.length === segments.length ? parameters : undefined;
}

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
