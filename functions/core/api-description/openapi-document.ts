/**
 * Koerier's API description, served at GET /openapi.json. Each area contributes its paths and
 * schemas; this file only assembles them.
 */
import { API_VERSION, problemSchema, validationIssueSchema } from './components.js';
import { contractsPaths, contractsSchemas } from './contracts-paths.js';
import { eventsPaths, eventsSchemas } from './events-paths.js';
import { deliveryPaths, deliverySchemas } from './delivery-paths.js';
import { partnersPaths, partnersSchemas } from './partners-paths.js';
import { payloadsPaths, payloadsSchemas } from './payloads-paths.js';
import { pullPaths, pullSchemas } from './pull-paths.js';
import { replayPaths, replaySchemas } from './replay-paths.js';
import { operationalWebhooks, operationsSchemas } from './operations-webhooks.js';
import { subscriptionsPaths } from './subscriptions-paths.js';
import { subscriptionsSchemas } from './subscriptions-schemas.js';

export function openApiDocument(options: { serverUrl?: string | undefined; tokenUrl: string }) {
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
    servers: options.serverUrl ? [{ url: options.serverUrl }] : [],
    tags: [
      { name: 'Events', description: 'Publishing CloudEvents' },
      { name: 'Subscriptions', description: 'Subscribing to events (push and pull)' },
      { name: 'Pull', description: 'Receiving the events of a pull subscription, and settling them' },
      { name: 'Administration', description: 'Partners: clients, their publish grants and entitlements (scope admin)' },
      { name: 'Contracts', description: 'The contract register: OpenAPI webhook and AsyncAPI data contracts (EDU-6, EDU-21, EDU-22)' },
      { name: 'API', description: 'This description' },
      { name: 'Trust', description: "Koerier's public keys for signed deliveries" },
    ],
    // Koerier's own operational events, as a subscriber to them receives them (docs/OPERATIONS.md).
    webhooks: operationalWebhooks,
    paths: {
      ...eventsPaths,
      ...subscriptionsPaths,
      ...deliveryPaths,
      ...pullPaths,
      ...replayPaths,
      ...payloadsPaths,
      ...partnersPaths,
      ...contractsPaths,
      '/openapi.json': {
        get: {
          operationId: 'getApiDescription',
          summary: 'This API description',
          tags: ['API'],
          security: [],
          responses: { '200': { description: 'The OpenAPI document.', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
      '/.well-known/http-message-signatures-directory': {
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
              content: {
                'application/jwk-set+json': {
                  schema: {
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
                  },
                },
              },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        Problem: problemSchema,
        ValidationIssue: validationIssueSchema,
        ...eventsSchemas,
        ...subscriptionsSchemas,
        ...deliverySchemas,
        ...pullSchemas,
        ...replaySchemas,
        ...payloadsSchemas,
        ...partnersSchemas,
        ...operationsSchemas,
        ...contractsSchemas,
      },
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 client credentials (EDU-2); tokens are JWTs from the organisation’s issuer.',
          flows: {
            clientCredentials: {
              tokenUrl: options.tokenUrl,
              scopes: {
                'events:publish': 'Publish events',
                'events:consume': 'Pull events, and fetch the data of events sent by reference',
                'subscriptions:manage': 'Manage own subscriptions',
                'contracts:read': 'Read the contract register',
                'contracts:write': 'Maintain the contract register',
                admin: 'Act on any subscription; manage the partner directory (clients, grants, entitlements)',
              },
            },
          },
        },
      },
    },
  };
}
