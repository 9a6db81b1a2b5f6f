/**
 * Koerier's API description, served at GET /openapi.json. Each area contributes its paths and
 * schemas; this file assembles them and completes every operation (./operation-defaults.ts).
 */
import { API_BASE_PATH, API_VERSION, problemSchema, validationIssueSchema } from './components.js';
import { contractsPaths, contractsSchemas } from './contracts-paths.js';
import { healthPaths, healthSchemas } from './health-paths.js';
import { withOperationDefaults } from './operation-defaults.js';
import { problemPagePaths } from './problem-pages.js';
import { eventsPaths, eventsSchemas } from './events-paths.js';
import { eventTracePaths } from './event-trace-paths.js';
import { filterTestPaths, filterTestSchemas } from './filter-test-paths.js';
import { deliveryPaths } from './delivery-paths.js';
import { deliverySchemas } from './delivery-schemas.js';
import { partnersPaths, partnersSchemas } from './partners-paths.js';
import { erasurePaths, erasureSchemas } from './erasure-paths.js';
import { payloadsPaths, payloadsSchemas } from './payloads-paths.js';
import { pullPaths, pullSchemas } from './pull-paths.js';
import { replayPaths, replaySchemas } from './replay-paths.js';
import { operationalWebhooks, operationsSchemas } from './operations-webhooks.js';
import { subscriptionsPaths } from './subscriptions-paths.js';
import { subscriptionsSchemas } from './subscriptions-schemas.js';

/** What each scope lets a client do; the document lists those its operations name (scopeDescriptions). */
export const scopeDescriptions: Readonly<Record<string, string>> = {
  'events:publish': 'Publish events, and upload and fetch the data of own events sent by reference',
  'events:consume': 'Pull events, and fetch the data of events sent by reference',
  'subscriptions:manage': 'Manage own subscriptions and their deliveries',
  'subscriptions:read':
    'Read own subscriptions, their deliveries, dead letters and replays (included in subscriptions:manage)',
  'contracts:read': 'Read the contract register',
  'contracts:write': 'Maintain the contract register',
  admin: 'Act on any subscription; manage the partner directory (clients, grants, entitlements)',
};

export interface ApiDescriptionOptions {
  /**
   * The API's base URL, with its major version (`https://api.example.org/v1`: KOERIER_PUBLIC_BASE_URL).
   * Absent: the base path alone, a server URL relative to where the document is served.
   */
  readonly serverUrl?: string | undefined;
  /** The path the API is served under; default `API_BASE_PATH` (`/v1`). */
  readonly basePath?: string;
  readonly tokenUrl: string;
}

export function openApiDocument(options: ApiDescriptionOptions) {
  const basePath = options.basePath ?? API_BASE_PATH;
  const serverUrl = options.serverUrl || basePath;
  // RFC 8615 puts well-known resources at the origin's root, outside the versioned API: their
  // path item names that server, and the path key stays kebab-case as the design rules ask.
  const origin = serverUrl.endsWith(basePath) ? serverUrl.slice(0, -basePath.length) : serverUrl;
  const { paths, liftedSchemas } = withOperationDefaults({
    ...describedPaths,
    ...wellKnownPaths(`${origin}${WELL_KNOWN}`),
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Koerier',
      version: API_VERSION,
      description:
        'CloudEvents gateway: the intermediary of the NL GOV profile for CloudEvents and the Edukoppeling CloudEvents profile. ' +
        'Errors are RFC 9457 problem details; every call except this document needs an OAuth 2.0 client-credentials access token.',
      contact: { name: 'Koerier maintainers', url: 'https://github.com/koerier/koerier', email: 'koerier@example.org' },
      license: { name: 'EUPL-1.2', identifier: 'EUPL-1.2' },
    },
    servers: [{ url: serverUrl, description: `Koerier API ${API_VERSION.split('.')[0]}.x` }],
    tags: [
      { name: 'Events', description: 'Publishing CloudEvents' },
      { name: 'Subscriptions', description: 'Subscribing to events (push and pull)' },
      { name: 'Pull', description: 'Receiving the events of a pull subscription, and settling them' },
      { name: 'Administration', description: 'Partners: clients, their publish grants and entitlements (scope admin)' },
      {
        name: 'Contracts',
        description: 'The contract register: OpenAPI webhook and AsyncAPI data contracts (EDU-6, EDU-21, EDU-22)',
      },
      { name: 'API', description: 'This description' },
      { name: 'Trust', description: "Koerier's public keys for signed deliveries" },
    ],
    // Koerier's own operational events, as a subscriber to them receives them (docs/OPERATIONS.md).
    webhooks: operationalWebhooks,
    paths,
    components: {
      headers: {
        'API-Version': {
          description: 'The full version of the Koerier API (semver).',
          schema: { type: 'string', example: API_VERSION },
        },
      },
      schemas: {
        ...liftedSchemas,
        Problem: problemSchema,
        OpenApiDocument: { type: 'object', description: 'An OpenAPI 3.1 document: this one.' },
        JwkSet: jwkSetSchema,
        ValidationIssue: validationIssueSchema,
        ...eventsSchemas,
        ...subscriptionsSchemas,
        ...deliverySchemas,
        ...pullSchemas,
        ...replaySchemas,
        ...filterTestSchemas,
        ...payloadsSchemas,
        ...partnersSchemas,
        ...erasureSchemas,
        ...operationsSchemas,
        ...contractsSchemas,
        ...healthSchemas,
      },
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 client credentials (EDU-2); tokens are JWTs from the organisation’s issuer.',
          flows: {
            clientCredentials: {
              tokenUrl: options.tokenUrl,
              scopes: scopesNamedIn(paths),
            },
          },
        },
      },
    },
  };
}

const describedPaths = {
  ...eventsPaths,
  ...eventTracePaths,
  ...subscriptionsPaths,
  ...deliveryPaths,
  ...healthPaths,
  ...pullPaths,
  ...replayPaths,
  ...filterTestPaths,
  ...payloadsPaths,
  ...partnersPaths,
  ...erasurePaths,
  ...contractsPaths,
  ...problemPagePaths,
  '/openapi.json': {
    get: {
      operationId: 'getApiDescription',
      summary: 'This API description',
      tags: ['API'],
      security: [],
      responses: {
        '200': {
          description: 'The OpenAPI document.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/OpenApiDocument' } } },
        },
      },
    },
  },
};

const WELL_KNOWN = '/.well-known';

/**
 * The key in `paths` that describes a route of functions/config/resources.ts: its path, except that a
 * well-known route is described under the well-known server, without its `/.well-known` prefix.
 */
export function describedPathOf(routePath: string): string {
  return routePath.startsWith(`${WELL_KNOWN}/`) ? routePath.slice(WELL_KNOWN.length) : routePath;
}

function wellKnownPaths(wellKnownUrl: string) {
  return {
    '/http-message-signatures-directory': {
      servers: [{ url: wellKnownUrl, description: 'RFC 8615 well-known resources, at the root of the origin' }],
      get: {
        operationId: 'getSigningKeys',
        summary: 'The public keys that sign deliveries',
        description:
          'A JWK Set (RFC 7517): the current key first, then previous keys still published during a rotation. `kid` is the RFC 7638 ' +
          'thumbprint and the `keyid` of a signed delivery. Cache it for at most max-age; fetch again when a delivery names an unknown keyid.',
        tags: ['Trust'],
        security: [],
        responses: {
          '200': {
            description: 'The JWK Set.',
            content: { 'application/jwk-set+json': { schema: { $ref: '#/components/schemas/JwkSet' } } },
          },
        },
      },
    },
  };
}

const jwkSetSchema = {
  type: 'object',
  required: ['keys'],
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kty', 'kid'],
        properties: {
          kty: { type: 'string', enum: ['OKP', 'EC'] },
          crv: { type: 'string', enum: ['Ed25519', 'P-256'] },
          kid: { type: 'string' },
          alg: { type: 'string', enum: ['EdDSA', 'ES256'] },
          use: { type: 'string', enum: ['sig'] },
        },
      },
    },
  },
} as const;

/** The scopes some operation asks for, and only those: a scope of a feature not built is not listed. */
function scopesNamedIn(paths: Record<string, Record<string, unknown>>): Record<string, string> {
  const named = new Set<string>();
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const security = (operation as { security?: Record<string, string[]>[] } | undefined)?.security;
      for (const requirement of Array.isArray(security) ? security : [])
        for (const scope of requirement['oauth2'] ?? []) named.add(scope);
    }
  }
  return Object.fromEntries(
    [...named].sort().map((scope) => {
      const description = scopeDescriptions[scope];
      if (!description) throw new Error(`scope ${scope} has no description in scopeDescriptions`);
      return [scope, description];
    }),
  );
}
