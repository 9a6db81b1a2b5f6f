import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { functions } from '../../../functions/config/resources.js';

const document = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });
type Operation = { parameters?: { name: string; required?: boolean }[]; responses: Record<string, unknown> };
const paths = document.paths as unknown as Record<string, Record<string, Operation>>;

describe('the claim check in the API description', () => {
  it('EDU-1: every route of the payloads function is described, the fetch with its 307, 404 and 410', () => {
    for (const route of functions.payloads.routes) {
      expect(paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    }
    expect(Object.keys(paths['/payloads/{id}']!['get']!.responses)).toEqual(
      expect.arrayContaining(['200', '304', '307', '404', '410']),
    );
  });

  it('EDU-IDEM-3: the upload route requires an Idempotency-Key', () => {
    expect(paths['/payloads']!['post']!.parameters).toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key', required: true }),
    );
  });

  it('every schema reference resolves', () => {
    const schemas = document.components.schemas as Record<string, unknown>;
    for (const ref of new Set(
      [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!),
    )) {
      expect(schemas[ref], ref).toBeDefined();
    }
  });
});
