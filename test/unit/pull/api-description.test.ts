import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { functions } from '../../../functions/config/resources.js';

const document = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });
type Operation = {
  parameters?: { name: string }[];
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
};
const paths = document.paths as unknown as Record<string, Record<string, Operation>>;

describe('pull delivery in the API description (CARD-7)', () => {
  it('CARD-7: every route of the pull function is described, for scope events:consume, with its 404 and per-token answer', () => {
    for (const route of functions.pull.routes) {
      const operation = paths[route.path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      expect(operation!.security).toEqual([{ oauth2: ['events:consume'] }]);
      expect(Object.keys(operation!.responses)).toEqual(
        expect.arrayContaining(['200', '400', '401', '403', '404', '409']),
      );
    }
  });

  it('EDU-IDEM-3, issue 36 item 4: every pull route takes an optional Idempotency-Key and describes the 422 of a reused one', () => {
    const pathItems = document.paths as unknown as Record<
      string,
      { parameters?: { name: string; required?: boolean }[] }
    >;
    for (const route of functions.pull.routes) {
      expect(pathItems[route.path]!.parameters, route.path).toContainEqual(
        expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
      );
      expect(Object.keys(paths[route.path]![route.method.toLowerCase()]!.responses), route.path).toContain('422');
    }
  });

  it('EDU-17: the subscription schema offers pull with its settings', () => {
    const request = (
      document.components.schemas as unknown as Record<string, { properties: Record<string, { enum?: string[] }> }>
    )['SubscriptionRequest']!;
    expect(request.properties['delivery']!.enum).toEqual(['push', 'pull']);
    expect(request.properties).toHaveProperty('maxdeliverycount');
    expect(request.properties).toHaveProperty('retentionseconds');
  });
});
