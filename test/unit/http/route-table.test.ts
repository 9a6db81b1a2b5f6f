import { describe, expect, it } from 'vitest';
import { allowedMethods, compileRoutes, matchRoute, routeKeyOf } from '../../../functions/core/http/route-table.js';
import { functions, routeTable } from '../../../functions/config/resources.js';

// Compiled inside each test rather than once at import: a mutation run activates its mutant per
// test, so a table compiled while the file loads would never see the compiler mutated.
const tableOf = () =>
  compileRoutes(
    [
      { method: 'GET', path: '/things/{id}' },
      { method: 'DELETE', path: '/things/{id}' },
      { method: 'GET', path: '/things/mine' },
      { method: 'POST', path: '/things' },
      { method: 'GET', path: '/things' },
      { method: 'GET', path: '/files/{path+}' },
      { method: 'GET', path: '/things/{id}/parts/{part}' },
    ].map((route) => ({ ...route, tag: routeKeyOf(route) })),
  );

describe('route table (issue 9: one route table keyed by routeKey)', () => {
  it('matches a template and hands its decoded path parameters', () => {
    const table = tableOf();
    expect(matchRoute(table, 'GET', '/things/a%20b')).toEqual({
      routeKey: 'GET /things/{id}',
      tag: 'GET /things/{id}',
      pathParameters: { id: 'a b' },
    });
    expect(matchRoute(table, 'GET', '/things/7/parts/9')?.pathParameters).toEqual({ id: '7', part: '9' });
    expect(matchRoute(table, 'POST', '/things')).toEqual({
      routeKey: 'POST /things',
      tag: 'POST /things',
      pathParameters: {},
    });
  });

  it('a literal segment takes precedence over a parameter, whatever the order written', () => {
    const table = tableOf();
    expect(matchRoute(table, 'GET', '/things/mine')?.routeKey).toBe('GET /things/mine');
    expect(matchRoute(table, 'DELETE', '/things/mine')?.routeKey).toBe('DELETE /things/{id}');
  });

  it('a greedy {proxy+} takes the rest of the path, and needs at least one segment', () => {
    const table = tableOf();
    expect(matchRoute(table, 'GET', '/files/a/b/c.json')).toMatchObject({
      routeKey: 'GET /files/{path+}',
      pathParameters: { path: 'a/b/c.json' },
    });
    expect(matchRoute(table, 'GET', '/files/')).toBeUndefined();
    expect(matchRoute(table, 'GET', '/files')).toBeUndefined();
  });

  it('trailing slashes and empty segments match no route (as API Gateway: they go to $default)', () => {
    const table = tableOf();
    expect(matchRoute(table, 'GET', '/things/')).toBeUndefined();
    expect(matchRoute(table, 'POST', '/things/')).toBeUndefined();
    expect(matchRoute(table, 'GET', '/things//parts/9')).toBeUndefined();
    expect(allowedMethods(table, '/things/')).toEqual([]);
  });

  it('an unknown method on a known path: 405 with the methods of the matching templates, in table order; an unknown path: 404', () => {
    const table = tableOf();
    expect(matchRoute(table, 'PUT', '/things/7')).toBeUndefined();
    expect(allowedMethods(table, '/things/7')).toEqual(['GET', 'DELETE']);
    expect(allowedMethods(table, '/things')).toEqual(['POST', 'GET']);
    expect(allowedMethods(table, '/things/mine')).toEqual(['GET', 'DELETE', 'GET']);
    expect(allowedMethods(table, '/nothing/here')).toEqual([]);
  });

  it('issue 9: a greedy {proxy+} is tried last, after templates with fewer literal segments and whatever the order written', () => {
    const routes = compileRoutes([
      { method: 'GET', path: '/assets/v1/{path+}', tag: 'greedy' },
      { method: 'GET', path: '/assets/{version}/{name}', tag: 'named' },
      { method: 'GET', path: '/{anything+}', tag: 'catch-all' },
      { method: 'GET', path: '/assets', tag: 'literal' },
    ]);
    expect(matchRoute(routes, 'GET', '/assets/v1/logo.svg')).toEqual({
      routeKey: 'GET /assets/{version}/{name}',
      tag: 'named',
      pathParameters: { version: 'v1', name: 'logo.svg' },
    });
    expect(matchRoute(routes, 'GET', '/assets/v1/img/logo.svg')?.tag).toBe('greedy');
    expect(matchRoute(routes, 'GET', '/assets')?.tag).toBe('literal');
    expect(matchRoute(routes, 'GET', '/other/x')?.tag).toBe('catch-all');
  });

  it('issue 9: a path parameter that is not valid percent-encoding is handed as written', () => {
    expect(matchRoute(tableOf(), 'GET', '/things/%E0%A4%A')?.pathParameters).toEqual({ id: '%E0%A4%A' });
    expect(matchRoute(tableOf(), 'GET', '/files/a/%zz')?.pathParameters).toEqual({ path: 'a/%zz' });
  });

  it('a route claimed twice is refused', () => {
    expect(() =>
      compileRoutes([
        { method: 'GET', path: '/a', tag: 1 },
        { method: 'GET', path: '/a', tag: 2 },
      ]),
    ).toThrow(/claimed twice/);
  });

  it('functions/config/resources.ts: routeTable lists every route of every function, in order, as the CDK reads them', () => {
    const written = Object.entries(functions).flatMap(([name, fn]) =>
      ('routes' in fn ? fn.routes : []).map((route) => `${name} ${route.method} ${route.path}`),
    );
    expect(routeTable.map((route) => `${route.function} ${route.method} ${route.path}`)).toEqual(written);
    expect(written.length).toBeGreaterThan(10);
  });
});
