/**
 * OpenAPI paths of the partners admin API (issue 12, item 3): clients with their publish grants
 * (EDU-IN) and entitlements (EDU-7), changed at run time, scope `admin`.
 */
import {
  adminOnlySecurity,
  authProblems,
  commonProblems,
  idempotencyKeyParameter,
  idempotencyProblems,
  problemResponse,
  versionHeader,
} from './components.js';
import { describedSchema } from '../http/json-body.js';
import { CLIENT_INPUT_BODY } from '../partners/partner-input.js';

const security = adminOnlySecurity;
const clientIdParameter = {
  name: 'clientId',
  in: 'path',
  required: true,
  schema: { type: 'string', minLength: 1, maxLength: 256 },
} as const;
const etagHeader = {
  ETag: { description: 'The client’s version, for `If-Match`.', schema: { type: 'string' } },
} as const;
const effect =
  'A change takes effect in every function within its refresh interval (`KOERIER_PARTNERS_REFRESH_SECONDS`, 30 s by default, at most a minute), without a redeploy.';
const clientResponse = (description: string) => ({
  description,
  headers: { ...versionHeader, ...etagHeader },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Client' } } },
});
const notFound = { '404': problemResponse('No such client in the partner directory.') } as const;

/** The body of PUT /clients/{clientId}: the schema the code checks it with. */
const clientInputSchema = describedSchema(CLIENT_INPUT_BODY) as { properties: Record<string, unknown> };

const clientSchema = {
  type: 'object',
  required: ['clientId', 'publishGrants', 'entitlements', 'version', 'createdAt', 'updatedAt', 'updatedBy'],
  properties: {
    clientId: { type: 'string' },
    ...clientInputSchema.properties,
    version: { type: 'integer', minimum: 1 },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
    updatedBy: {
      type: 'string',
      description: 'The admin client that made the last change, or `deployment` when seeded from the configuration.',
    },
  },
} as const;

export const partnersSchemas = { ClientInput: clientInputSchema, Client: clientSchema } as const;

const changeProblems = {
  '400': problemResponse('Invalid client id, body or Idempotency-Key.'),
  ...authProblems,
  '409': problemResponse(
    'The publish grants overlap another client’s (`publish-grants-overlap`), the directory changed meanwhile (`directory-changed`: send again), ' +
      'or a request with this Idempotency-Key is still in progress.',
  ),
  '412': problemResponse('If-Match names another version, or If-None-Match: * found the client.'),
  '422': idempotencyProblems['422'],
  ...commonProblems,
} as const;

export const partnersPaths = {
  '/clients': {
    get: {
      operationId: 'listClients',
      summary: 'Every client in the partner directory',
      tags: ['Administration'],
      security,
      responses: {
        '200': {
          description: 'The clients, by client id.',
          headers: versionHeader,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['clients'],
                properties: { clients: { type: 'array', items: { $ref: '#/components/schemas/Client' } } },
              },
            },
          },
        },
        ...authProblems,
        ...commonProblems,
      },
    },
  },
  '/clients/{clientId}': {
    parameters: [clientIdParameter],
    get: {
      operationId: 'getClient',
      summary: 'One client with its grants and entitlements',
      tags: ['Administration'],
      security,
      responses: { '200': clientResponse('The client.'), ...authProblems, ...notFound, ...commonProblems },
    },
    put: {
      operationId: 'putClient',
      summary: 'Add a client or replace its grants and entitlements',
      description: `Audited (who, what, when). ${effect}`,
      tags: ['Administration'],
      security,
      parameters: [
        idempotencyKeyParameter,
        {
          name: 'If-Match',
          in: 'header',
          required: false,
          description: 'Replace only this version.',
          schema: { type: 'string' },
        },
        {
          name: 'If-None-Match',
          in: 'header',
          required: false,
          description: '`*`: add only, never replace.',
          schema: { type: 'string', const: '*' },
        },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ClientInput' } } },
      },
      responses: { '200': clientResponse('Replaced.'), '201': clientResponse('Added.'), ...changeProblems },
    },
    delete: {
      operationId: 'deleteClient',
      summary: 'Remove a client: it may publish and receive nothing (its subscriptions stay, and get nothing)',
      description: `Audited (who, what, when). ${effect}`,
      tags: ['Administration'],
      security,
      parameters: [
        idempotencyKeyParameter,
        {
          name: 'If-Match',
          in: 'header',
          required: false,
          description: 'Remove only this version.',
          schema: { type: 'string' },
        },
      ],
      responses: { '204': { description: 'Removed.', headers: versionHeader }, ...notFound, ...changeProblems },
    },
  },
} as const;
