/** The JWKS route (issue 12, item 6): its answer, and its place in the API description. */
import { describe, expect, it } from 'vitest';
import { signingKeysApp } from '../../../functions/app/signing-keys-app.js';
import { describedPathOf, openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import type { PublicJwk } from '../../../functions/core/signatures/message-signature.js';
import { functions } from '../../../functions/config/resources.js';

const request = (routeKey: string) => ({
  method: 'GET',
  path: '/x',
  headers: {},
  query: {},
  routeKey,
  pathParameters: {},
  body: Buffer.alloc(0),
});

describe('GET /.well-known/http-message-signatures-directory (issue 12, item 6)', () => {
  const published: PublicJwk[] = [
    { kty: 'OKP', crv: 'Ed25519', x: 'new', kid: 'k2', use: 'sig', alg: 'EdDSA' },
    { kty: 'OKP', crv: 'Ed25519', x: 'old', kid: 'k1', use: 'sig', alg: 'EdDSA' },
  ];
  const app = signingKeysApp({
    signingKeys: { current: () => Promise.reject(new Error('not asked')), publicKeys: async () => published },
  });

  it('issue 12 #6: answers the published keys in order as a JWK Set, cacheable for five minutes', async () => {
    const answer = await app(request('GET /.well-known/http-message-signatures-directory'));
    expect(answer.status).toBe(200);
    expect(answer.headers).toEqual({
      'content-type': 'application/jwk-set+json',
      'cache-control': 'public, max-age=300',
    });
    expect(JSON.parse(String(answer.body))).toEqual({ keys: published });
  });

  it('issue 12 #6: the route is described without security, and signdeliveries is a member of a subscription', () => {
    const document = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });
    const [route] = functions.signingKeys.routes;
    const operation = (document.paths as unknown as Record<string, Record<string, { security?: unknown }>>)[
      describedPathOf(route.path)
    ]?.['get'];
    expect(operation?.security).toEqual([]);
    const schemas = document.components.schemas as unknown as Record<string, { properties?: Record<string, unknown> }>;
    expect(schemas['SubscriptionRequest']!.properties).toHaveProperty('signdeliveries');
  });
});
