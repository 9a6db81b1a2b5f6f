/**
 * OpenAPI paths of the contract register (issue 14; EDU-6, EDU-21, EDU-22): contracts and their
 * immutable versions, read with `contracts:read`, published and maintained with `contracts:write`,
 * and the event type bindings the ingest checks `data` against.
 */
import { contractsSchemas } from './contracts-schemas.js';
import {
  authProblems,
  commonProblems,
  idempotencyKeyParameter,
  idempotencyProblems,
  problemResponse,
  versionHeader,
} from './components.js';

const read = [{ oauth2: ['contracts:read'] }];
const write = [{ oauth2: ['contracts:write'] }];
const tags = ['Contracts'];
const nameParameter = {
  name: 'name',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[a-z0-9](?:[a-z0-9.-]{0,126}[a-z0-9])?$' },
} as const;
const versionParameter = {
  name: 'version',
  in: 'path',
  required: true,
  description: 'A semantic version, MAJOR.MINOR.PATCH[-prerelease].',
  schema: { type: 'string' },
} as const;
const typeParameter = {
  name: 'type',
  in: 'path',
  required: true,
  description: 'A CloudEvents `type`.',
  schema: { type: 'string', minLength: 1, maxLength: 256 },
} as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (description: string, schema: unknown, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { ...versionHeader, ...headers },
  content: { 'application/json': { schema } },
});
const notFound = (what: string) => ({ '404': problemResponse(`No such ${what}.`) }) as const;
const readProblems = {
  '400': problemResponse('Invalid name, version or type in the path.'),
  ...authProblems,
  ...commonProblems,
} as const;
const changeProblems = {
  '400': problemResponse(
    'Invalid body, path or Idempotency-Key; for a document, `errors` lists the parser’s findings (`contract-document-invalid`).',
  ),
  ...authProblems,
  '409': problemResponse(
    'The version exists with another document (`contract-version-immutable`), the status cannot make this move (`contract-status-move`), ' +
      'the contract changed meanwhile, or a request with this Idempotency-Key is still in progress.',
  ),
  '415': problemResponse('The body is not application/json.'),
  '422': idempotencyProblems['422'],
  ...commonProblems,
} as const;

export { contractsSchemas };

export const contractsPaths = {
  '/contracts': {
    get: {
      operationId: 'listContracts',
      summary: 'Every contract in the register (EDU-6)',
      tags,
      security: read,
      responses: {
        '200': json('The contracts, by name.', {
          type: 'object',
          required: ['contracts'],
          properties: { contracts: { type: 'array', items: ref('Contract') } },
        }),
        ...readProblems,
      },
    },
  },
  '/contracts/{name}': {
    parameters: [nameParameter],
    get: {
      operationId: 'getContract',
      summary: 'A contract with its versions and its consumers',
      tags,
      security: read,
      responses: { '200': json('The contract.', ref('ContractDetail')), ...notFound('contract'), ...readProblems },
    },
    patch: {
      operationId: 'changeContract',
      summary: 'Change a contract’s description, owner or contact point (EDU-22)',
      tags,
      security: write,
      parameters: [idempotencyKeyParameter],
      requestBody: { required: true, content: { 'application/json': { schema: ref('ContractPatch') } } },
      responses: { '200': json('Changed.', ref('Contract')), ...notFound('contract'), ...changeProblems },
    },
  },
  '/contracts/{name}/versions': {
    parameters: [nameParameter],
    get: {
      operationId: 'listContractVersions',
      summary: 'A contract’s versions, in semver order (EDU-6)',
      tags,
      security: read,
      responses: {
        '200': json('The versions.', {
          type: 'object',
          required: ['versions'],
          properties: { versions: { type: 'array', items: ref('ContractVersion') } },
        }),
        ...notFound('contract'),
        ...readProblems,
      },
    },
  },
  '/contracts/{name}/versions/{version}': {
    parameters: [nameParameter, versionParameter],
    get: {
      operationId: 'getContractVersion',
      summary: 'One version’s metadata (EDU-6)',
      tags,
      security: read,
      responses: { '200': json('The version.', ref('ContractVersion')), ...notFound('version'), ...readProblems },
    },
    put: {
      operationId: 'publishContractVersion',
      summary: 'Publish a version (immutable once published)',
      description:
        'The document is checked by its ecosystem’s parser (400 with the findings). An AsyncAPI version is compared with the version before it; ' +
        'a breaking change within the same major version is 422 unless an admin sends `force=true`. The same document again answers 200.',
      tags,
      security: write,
      parameters: [
        idempotencyKeyParameter,
        {
          name: 'force',
          in: 'query',
          required: false,
          description: 'Admin only: publish a breaking change within the major version.',
          schema: { type: 'boolean' },
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: ref('ContractVersionInput') } } },
      responses: {
        '200': json('This document was published under this version already.', ref('ContractVersion')),
        '201': json('Published.', ref('ContractVersion'), { Location: { schema: { type: 'string', format: 'uri' } } }),
        ...changeProblems,
        '413': problemResponse('The body is larger than 1 MiB.'),
        '422': problemResponse(
          'A breaking change within the major version (`contract-change-breaking`, the findings in `errors`), or an Idempotency-Key used before with another request.',
        ),
      },
    },
    patch: {
      operationId: 'changeContractVersion',
      summary: 'Change a version’s status, sunset date or event types',
      description: 'A deprecation tells the consumers (the subscriptions naming its event types).',
      tags,
      security: write,
      parameters: [idempotencyKeyParameter],
      requestBody: { required: true, content: { 'application/json': { schema: ref('ContractVersionPatch') } } },
      responses: { '200': json('Changed.', ref('ContractVersion')), ...notFound('version'), ...changeProblems },
    },
  },
  '/contracts/{name}/versions/{version}/document': {
    parameters: [nameParameter, versionParameter],
    get: {
      operationId: 'getContractDocument',
      summary: 'The document as published, byte for byte (EDU-6, also for automated processes)',
      tags,
      security: read,
      responses: {
        '200': {
          description: 'The document; `Repr-Digest` is its checksum.',
          headers: {
            ...versionHeader,
            'Repr-Digest': { schema: { type: 'string' } },
            ETag: { schema: { type: 'string' } },
          },
          content: {
            'application/vnd.aai.asyncapi+json': { schema: { type: 'object' } },
            'application/vnd.aai.asyncapi+yaml': { schema: { type: 'string' } },
            'application/vnd.oai.openapi+json': { schema: { type: 'object' } },
          },
        },
        ...notFound('version'),
        ...readProblems,
      },
    },
  },
  '/contract-bindings': {
    get: {
      operationId: 'listContractBindings',
      summary: 'The event types whose data is checked against a contract message',
      tags,
      security: read,
      responses: {
        '200': json('The bindings.', {
          type: 'object',
          required: ['bindings'],
          properties: { bindings: { type: 'array', items: ref('ContractBinding') } },
        }),
        ...readProblems,
      },
    },
  },
  '/contract-bindings/{type}': {
    parameters: [typeParameter],
    get: {
      operationId: 'getContractBinding',
      summary: 'The contract message an event type is bound to',
      tags,
      security: read,
      responses: { '200': json('The binding.', ref('ContractBinding')), ...notFound('binding'), ...readProblems },
    },
    put: {
      operationId: 'bindContract',
      summary: 'Bind an event type to an AsyncAPI message: the ingest checks `data` against its payload schema',
      description:
        'A client granted sources to publish under binds for its own events only (`scope: publisher`); an operator (`admin`) binds for every publisher (`scope: every-publisher`). A client granted no source may not bind (403). Only the binding’s publisher, or an operator, replaces or removes it (issue 28). Takes effect in every ingest function within its refresh interval (`KOERIER_PARTNERS_REFRESH_SECONDS`, 30 s by default).',
      tags,
      security: write,
      parameters: [idempotencyKeyParameter],
      requestBody: { required: true, content: { 'application/json': { schema: ref('ContractBindingInput') } } },
      responses: {
        '200': json('Bound.', ref('ContractBinding')),
        ...notFound('contract or version'),
        ...changeProblems,
      },
    },
    delete: {
      operationId: 'unbindContract',
      summary: 'Stop checking an event type’s data',
      tags,
      security: write,
      parameters: [idempotencyKeyParameter],
      responses: {
        '204': { description: 'Removed.', headers: versionHeader },
        ...notFound('binding'),
        ...changeProblems,
      },
    },
  },
} as const;
