import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { functions } from '../../../functions/config/resources.js';

const document = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });
type Operation = {
  parameters?: { name: string; required?: boolean }[];
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
};
const paths = document.paths as unknown as Record<string, Record<string, Operation>>;

describe('push delivery administration in the API description', () => {
  it('EDU-18: every route of the delivery-admin function is described', () => {
    for (const route of functions.deliveryAdmin.routes) {
      expect(paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    }
  });

  it('EDU-IDEM-3: redrive and resume require an Idempotency-Key', () => {
    for (const route of functions.deliveryAdmin.routes.filter((r) => r.method === 'POST')) {
      expect(paths[route.path]!['post']!.parameters).toContainEqual(
        expect.objectContaining({ name: 'Idempotency-Key', required: true }),
      );
    }
  });

  it('the dead-letter queue redrive is for admin clients only', () => {
    expect(paths['/deliveries/dead-letter-queue/redrive']!['post']!.security).toEqual([{ oauth2: ['admin'] }]);
  });

  it('every schema reference resolves', () => {
    const schemas = document.components.schemas as Record<string, unknown>;
    for (const ref of new Set(
      [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!),
    )) {
      expect(schemas[ref], ref).toBeDefined();
    }
    expect(schemas['DeadLetter']).toBeDefined();
    expect(schemas['DeliveryAttempt']).toBeDefined();
  });
});
