import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { functions } from '../../../functions/config/resources.js';

const document = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });

describe('subscriptions in the API description', () => {
  it('EDU-14: every route of the subscriptions function is described', () => {
    const paths = document.paths as Record<string, Record<string, unknown>>;
    for (const route of functions.subscriptions.routes) {
      expect(paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    }
  });

  it('EDU-IDEM-3, EDU-IDEM-5: POST, PATCH and DELETE require an Idempotency-Key; the callback needs no token', () => {
    const paths = document.paths as unknown as Record<
      string,
      Record<string, { parameters?: { name: string; required?: boolean }[]; security?: unknown[] }>
    >;
    for (const [path, method] of [
      ['/subscriptions', 'post'],
      ['/subscriptions/{id}', 'patch'],
      ['/subscriptions/{id}', 'delete'],
    ] as const) {
      expect(paths[path]![method]!.parameters).toContainEqual(
        expect.objectContaining({ name: 'Idempotency-Key', required: true }),
      );
    }
    expect(paths['/subscriptions/{id}/validation']!['get']!.security).toEqual([]);
  });

  it('WH-3: the description says a push subscription request needs a sinkcredential, and shows why one is suspended', () => {
    const schemas = document.components.schemas as unknown as Record<
      string,
      { required?: readonly string[]; else?: { required?: readonly string[] }; properties?: Record<string, unknown> }
    >;
    // Required unless the request is for pull delivery, which has no sink (docs/PULL.md).
    expect(schemas['SubscriptionRequest']!.else?.required).toEqual(['sink', 'sinkcredential']);
    expect(schemas['Subscription']!.properties).toHaveProperty('suspendedfor');
  });

  it('every schema reference resolves', () => {
    const schemas = document.components.schemas as Record<string, unknown>;
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) expect(schemas[ref], ref).toBeDefined();
  });
});
