/** Review #20: the origin guard that keeps callers from going around CloudFront and its WAF rules. */
import { describe, expect, it } from 'vitest';
import type { HttpRequest } from '../../../functions/core/http/messages.js';
import { KoerierError } from '../../../functions/core/http/problems.js';
import { ORIGIN_VERIFY_HEADER, requireEdgeOrigin } from '../../../functions/app/origin-guard.js';
import { problemTypeUri } from '../../support/problem-types.js';

const request = (headers: Record<string, string>): HttpRequest => ({
  method: 'GET',
  path: '/openapi.json',
  headers,
  query: {},
  routeKey: 'GET /openapi.json',
  pathParameters: {},
  body: Buffer.alloc(0),
});
const SECRET = 'k3Jx9vQ2mW7pL4tR8nB6yH1cF5dG0sZa';

describe('requireEdgeOrigin', () => {
  it('review #20: without a configured secret (laptop, no edge) every request passes', () => {
    expect(() => requireEdgeOrigin(request({}), undefined)).not.toThrow();
  });

  it('review #20: with a secret, only the exact header value passes; a missing, wrong, longer or shorter one is 403 edge-bypassed', () => {
    expect(() => requireEdgeOrigin(request({ [ORIGIN_VERIFY_HEADER]: SECRET }), SECRET)).not.toThrow();
    for (const presented of [undefined, '', 'guess', `${SECRET}x`, SECRET.slice(0, -1), SECRET.toUpperCase()]) {
      const headers: Record<string, string> = presented === undefined ? {} : { [ORIGIN_VERIFY_HEADER]: presented };
      let thrown: unknown;
      try {
        requireEdgeOrigin(request(headers), SECRET);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, String(presented)).toBeInstanceOf(KoerierError);
      expect((thrown as KoerierError).problem).toMatchObject({ status: 403, type: problemTypeUri('edge-bypassed') });
      // The answer never echoes what was expected.
      expect(JSON.stringify((thrown as KoerierError).problem)).not.toContain(SECRET);
    }
  });
});
