/**
 * Logius API Design Rules /core/version-header (API-57): every answer of the API carries the full
 * version in `API-Version`, whatever route and status, on the laptop host (the HTTP adapter,
 * functions/handlers/shared/api-gateway.ts, sets it for every app). Issue 14, item 5.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION } from '../../functions/core/api-description/components.js';
import { routeTable, servedPath } from '../../functions/config/resources.js';
import { startTestHost, type TestHost } from '../support/host.js';

let koerier: TestHost;
let token: string;

beforeAll(async () => {
  koerier = await startTestHost({}, { queueTriggers: false });
  token = await koerier.host.issueToken('dev-subscriber');
});
afterAll(() => koerier?.stop());

const urlOf = (path: string) => `${koerier.origin}${servedPath(path).replace(/\{[^}]+\}/g, 'unknown-id')}`;

describe('ADR /core/version-header: API-Version on every answer of every route', () => {
  it('ADR /core/version-header: every route of functions/config/resources.ts answers with API-Version, without a token and with one (401, 400, 404, 2xx…)', async () => {
    const seen = new Set<number>();
    for (const route of routeTable) {
      for (const authorization of [undefined, `Bearer ${token}`]) {
        const withBody = route.method !== 'GET' && route.method !== 'OPTIONS';
        const response = await fetch(urlOf(route.path), {
          method: route.method,
          headers: {
            ...(authorization ? { authorization } : {}),
            ...(withBody ? { 'content-type': 'application/json' } : {}),
          },
          ...(withBody ? { body: '{}' } : {}),
        });
        await response.arrayBuffer();
        seen.add(response.status);
        expect(response.headers.get('api-version'), `${route.method} ${route.path} → ${response.status}`).toBe(
          API_VERSION,
        );
      }
    }
    // The sweep reached successes and refusals of several kinds, not one answer over and over.
    expect([...seen].some((status) => status < 300)).toBe(true);
    expect([...seen].filter((status) => status >= 400).length).toBeGreaterThanOrEqual(3);
  });

  it('ADR /core/version-header: the 404 and 405 of the default route carry it too, also for a path outside the versioned API', async () => {
    for (const [method, url] of [
      ['GET', `${koerier.url}/no/such/thing`],
      ['DELETE', `${koerier.url}/events`],
      ['POST', `${koerier.origin}/events`],
    ] as const) {
      const response = await fetch(url, { method });
      expect([404, 405]).toContain(response.status);
      expect(response.headers.get('api-version'), `${method} ${url}`).toBe(API_VERSION);
    }
  });

  it('issue 14 #6: each problem type has its page on the laptop host, and an unknown one is a 404 problem, both with API-Version', async () => {
    const page = await fetch(`${koerier.url}/problems/rate-limited`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(page.headers.get('api-version')).toBe(API_VERSION);
    expect(await page.text()).toContain('# Too Many Requests');
    const unknown = await fetch(`${koerier.url}/problems/no-such-type`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('application/problem+json');
    expect(unknown.headers.get('api-version')).toBe(API_VERSION);
  });
});
