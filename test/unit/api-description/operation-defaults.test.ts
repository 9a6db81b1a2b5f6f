/**
 * What every operation of the API description carries, whichever area describes it (issue 14,
 * items 5 and 6): checked over the whole document, and on a bare operation as a new area would
 * write it, so routes added later comply by construction.
 */
import { describe, expect, it } from 'vitest';
import { describedPathOf, openApiDocument } from '../../../functions/core/api-description/openapi-document.js';
import { withOperationDefaults } from '../../../functions/core/api-description/operation-defaults.js';
import { routeTable, ZGW_BASE_PATH } from '../../../functions/config/resources.js';
import { zgwApiDescription } from '../../../functions/core/zgw/zgw-api-description.js';

interface Response {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: Record<string, unknown> }>;
}
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  responses: Record<string, Response>;
}

const document = openApiDocument({
  serverUrl: 'https://api.example.org/v1',
  tokenUrl: 'https://issuer.test/oauth/token',
});
const paths = document.paths as unknown as Record<string, Record<string, Operation>>;
const operations = Object.entries(paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => method !== 'servers' && method !== 'parameters')
    .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
);
const isSecured = (operation: Operation) =>
  (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0);

describe('every operation of the API description', () => {
  it('every route of functions/config/resources.ts is described, in the API or under the well-known server', () => {
    // Issue 34: the ZGW Notificaties API has a description of its own (GET /zgw/api/v1/schema/openapi.json).
    const zgwPaths = zgwApiDescription(ZGW_BASE_PATH).paths as Record<string, Record<string, unknown>>;
    for (const route of routeTable)
      expect(
        route.path.startsWith(`${ZGW_BASE_PATH}/`)
          ? zgwPaths[route.path.slice(ZGW_BASE_PATH.length)]?.[route.method.toLowerCase()]
          : paths[describedPathOf(route.path)]?.[route.method.toLowerCase()],
        `${route.method} ${route.path}`,
      ).toBeDefined();
  });

  it('ADR /core/version-header: every response, errors too, names the API-Version header', () => {
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.headers?.['API-Version'], `${name} ${status}`).toEqual({
          $ref: '#/components/headers/API-Version',
        });
      }
    }
  });

  it('ADR /core/error-handling/invalid-input and problem-details: every operation can answer 400 and 500 as problem+json', () => {
    for (const { name, operation } of operations) {
      for (const status of ['400', '500']) {
        expect(operation.responses[status]?.content?.['application/problem+json']?.schema, `${name} ${status}`).toEqual(
          {
            $ref: '#/components/schemas/Problem',
          },
        );
      }
    }
  });

  it('EDU-20: every operation that needs a token can answer 401, 403 and 429 (the per-client throttle), 429 with Retry-After', () => {
    const secured = operations.filter(({ operation }) => isSecured(operation));
    expect(secured.map(({ name }) => name)).toContain('POST /events');
    for (const { name, operation } of secured) {
      for (const status of ['401', '403', '429'])
        expect(operation.responses[status]?.content?.['application/problem+json'], `${name} ${status}`).toBeDefined();
      expect(operation.responses['429']?.headers, name).toHaveProperty('Retry-After');
    }
  });

  it('every 2xx JSON body is a named component schema, and every schema reference resolves', () => {
    const schemas = document.components.schemas as Record<string, unknown>;
    for (const { name, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!status.startsWith('2')) continue;
        for (const [mediaType, media] of Object.entries(response.content ?? {})) {
          if (!/json/.test(mediaType)) continue;
          expect(media.schema, `${name} ${status} ${mediaType}`).toEqual({
            $ref: expect.stringMatching(/^#\/components\/schemas\/[A-Z][A-Za-z0-9]+$/),
          });
        }
      }
    }
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    for (const ref of new Set(refs)) expect(schemas[ref], ref).toBeDefined();
  });

  it('CE-3, HTTP binary mode: POST /events names every binary-mode ce- header and its 429 with Retry-After', () => {
    const publish = paths['/events']!['post'] as unknown as Operation & { parameters: { name: string; in: string }[] };
    const headers = publish.parameters.filter((p) => p.in === 'header').map((p) => p.name);
    for (const attribute of [
      'specversion',
      'id',
      'source',
      'type',
      'subject',
      'time',
      'dataschema',
      'dataref',
      'sequence',
      'sequencetype',
    ]) {
      expect(headers).toContain(`ce-${attribute}`);
    }
    expect(publish.responses['429']?.description).toContain('KOERIER_PUBLISH_RATE_PER_MINUTE');
    expect(publish.responses['429']?.headers).toHaveProperty('Retry-After');
  });

  it('the OAuth scopes listed are exactly those some operation asks for (no scope of a feature not built)', () => {
    const named = new Set(
      operations.flatMap(({ operation }) =>
        (operation.security ?? []).flatMap((requirement) => requirement['oauth2'] ?? []),
      ),
    );
    const listed = Object.keys(document.components.securitySchemes.oauth2.flows.clientCredentials.scopes);
    expect(listed.sort()).toEqual([...named].sort());
    // The register's scopes are listed because its operations (issue 14) ask for them.
    expect(listed).toEqual(expect.arrayContaining(['contracts:read', 'contracts:write']));
  });

  it('ADR /core/uri-version: the server URL carries the major version; the well-known resources stay at the origin root (RFC 8615)', () => {
    expect(document.servers).toEqual([expect.objectContaining({ url: 'https://api.example.org/v1' })]);
    expect((paths['/http-message-signatures-directory'] as unknown as { servers: unknown }).servers).toEqual([
      expect.objectContaining({ url: 'https://api.example.org/.well-known' }),
    ]);
    const relative = openApiDocument({ tokenUrl: 'https://issuer.test/oauth/token' });
    expect(relative.servers).toEqual([expect.objectContaining({ url: '/v1' })]);
  });
});

describe('a route an area describes barely', () => {
  const { paths: completed, liftedSchemas } = withOperationDefaults({
    '/replays': {
      post: {
        operationId: 'createReplay',
        security: [{ oauth2: ['subscriptions:manage'] }],
        responses: {
          '202': {
            description: 'Accepted.',
            content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } } },
          },
        },
      },
    },
  });
  const operation = (completed['/replays'] as Record<string, Operation>)['post']!;

  it('gets API-Version on every response, the 400, 401, 403, 429 and 500 problems, and its inline body named after it', () => {
    expect(Object.keys(operation.responses).sort()).toEqual(['202', '400', '401', '403', '429', '500']);
    for (const response of Object.values(operation.responses)) expect(response.headers).toHaveProperty('API-Version');
    expect(operation.responses['202']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/CreateReplayResponse',
    });
    expect(liftedSchemas['CreateReplayResponse']).toEqual({ type: 'object', properties: { id: { type: 'string' } } });
  });
});
