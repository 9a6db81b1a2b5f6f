import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { functions } from '../../../functions/config/resources.js';

const document = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });
type Operation = {
  parameters?: { name: string }[];
  security?: Record<string, string[]>[];
  responses: Record<string, { headers?: Record<string, unknown> }>;
};
const paths = document.paths as unknown as Record<string, Record<string, Operation>>;

describe('the contract register in the API description (EDU-6)', () => {
  it('EDU-6: every route of the contracts function is described, reads for contracts:read, changes for contracts:write with an Idempotency-Key and 400', () => {
    for (const route of functions.contracts.routes) {
      const operation = paths[route.path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      const reading = route.method === 'GET';
      expect(operation!.security).toEqual([{ oauth2: [reading ? 'contracts:read' : 'contracts:write'] }]);
      expect(Object.keys(operation!.responses)).toEqual(expect.arrayContaining(['400', '401', '403', '500']));
      if (!reading) expect(operation!.parameters?.map((parameter) => parameter.name)).toContain('Idempotency-Key');
      for (const [status, response] of Object.entries(operation!.responses))
        expect(response.headers, `${route.method} ${route.path} ${status}`).toHaveProperty('API-Version');
    }
  });

  it('every schema reference resolves', () => {
    const text = JSON.stringify(document);
    const schemas = document.components.schemas as Record<string, unknown>;
    for (const [, name] of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g))
      expect(schemas, name).toHaveProperty(name!);
  });
});
