/** Component schemas of the contract register's API (contracts-paths.ts). */
import { DOCUMENT_MEDIA_TYPES } from '../contracts/document-media-types.js';
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const contact = {
  type: 'object',
  required: ['name'],
  description: 'EDU-22: a name, and an e-mail address or a URL.',
  properties: {
    name: { type: 'string' },
    email: { type: 'string', format: 'email' },
    url: { type: 'string', format: 'uri' },
  },
} as const;
const finding = {
  type: 'object',
  required: ['direction', 'pointer', 'change', 'message'],
  properties: {
    direction: {
      type: 'string',
      enum: ['backward', 'forward'],
      description: '`backward`: old events against the new schema; `forward`: new events against the old.',
    },
    pointer: {
      type: 'string',
      description: 'JSON Pointer into the instance (`/*` every array item, `/{additional}` undeclared members).',
    },
    change: { type: 'string' },
    message: { type: 'string' },
  },
} as const;

export const contractsSchemas = {
  ContactPoint: contact,
  Contract: {
    type: 'object',
    required: ['name', 'kind', 'owner', 'contact', 'latestVersion', 'createdAt', 'updatedAt', 'updatedBy', 'href'],
    properties: {
      name: { type: 'string' },
      kind: {
        type: 'string',
        enum: ['openapi-webhook', 'asyncapi-data'],
        description: 'EDU-21: the OpenAPI document of a webhook, or the AsyncAPI document of business data.',
      },
      description: { type: 'string' },
      owner: ref('ContactPoint'),
      contact: ref('ContactPoint'),
      latestVersion: { type: 'string' },
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
      updatedBy: { type: 'string' },
      maintainer: {
        type: 'string',
        description:
          'The client that published the first version: it and operators (admin) may change the contract and bind it; absent on contracts from before.',
      },
      href: { type: 'string', format: 'uri' },
    },
  },
  ContractDetail: {
    allOf: [
      ref('Contract'),
      {
        type: 'object',
        required: ['versions', 'consumers'],
        properties: {
          versions: { type: 'array', items: ref('ContractVersion') },
          consumers: {
            type: 'array',
            description:
              'The caller’s own subscriptions whose `types` name any of the contract’s event types; an operator (`admin`) sees every client’s (issue 28).',
            items: {
              type: 'object',
              properties: {
                subscriptionId: { type: 'string' },
                owner: { type: 'string' },
                types: { type: 'array', items: { type: 'string' } },
              },
            },
          },
        },
      },
    ],
  },
  ContractVersion: {
    type: 'object',
    required: [
      'contract',
      'version',
      'status',
      'eventTypes',
      'checksum',
      'mediaType',
      'size',
      'specVersion',
      'messages',
      'createdAt',
      'updatedAt',
      'document',
    ],
    properties: {
      contract: { type: 'string' },
      version: { type: 'string' },
      status: { type: 'string', enum: ['draft', 'active', 'deprecated', 'retired'] },
      sunset: { type: 'string', format: 'date-time', description: 'Set while deprecated.' },
      eventTypes: { type: 'array', items: { type: 'string' } },
      checksum: { type: 'string', description: 'RFC 9530 form of the SHA-256 of the document: `sha-256=:<base64>:`.' },
      mediaType: { type: 'string', description: 'The media type the document was published in, and is served in.' },
      size: { type: 'integer' },
      specVersion: { type: 'string' },
      messages: {
        type: 'array',
        items: {
          type: 'object',
          properties: { id: { type: 'string' }, name: { type: 'string' }, hasPayload: { type: 'boolean' } },
        },
      },
      compatibility: {
        type: 'object',
        description: 'AsyncAPI: each message’s payload schema against the version before this one.',
        properties: {
          previous: { type: 'string' },
          verdict: { type: 'string', enum: ['identical', 'full', 'backward', 'forward', 'breaking'] },
          forcedBy: {
            type: 'string',
            description: 'The admin who published a breaking change within the major version.',
          },
          messages: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                message: { type: 'string' },
                verdict: { type: 'string' },
                findings: { type: 'array', items: finding },
              },
            },
          },
        },
      },
      createdAt: { type: 'string', format: 'date-time' },
      updatedAt: { type: 'string', format: 'date-time' },
      publishedBy: { type: 'string' },
      updatedBy: { type: 'string' },
      document: { type: 'string', format: 'uri', description: 'Where the document is fetched as published.' },
    },
  },
  ContractVersionInput: {
    type: 'object',
    required: ['kind', 'document'],
    additionalProperties: false,
    properties: {
      kind: { type: 'string', enum: ['openapi-webhook', 'asyncapi-data'] },
      description: { type: 'string', maxLength: 1024 },
      owner: ref('ContactPoint'),
      contact: ref('ContactPoint'),
      status: { type: 'string', enum: ['draft', 'active', 'deprecated', 'retired'], default: 'active' },
      sunset: { type: 'string', description: 'RFC 3339 date or date-time; required with `deprecated`.' },
      eventTypes: {
        type: 'array',
        maxItems: 100,
        items: { type: 'string' },
        description: 'Default: the AsyncAPI messages’ names.',
      },
      document: {
        description:
          'The OpenAPI 3.x or AsyncAPI 3.x document: a JSON object, or its text in JSON or YAML. The checksum covers the text as sent ' +
          '(UTF-8); the version serves it back as sent, in `mediaType`. External `$ref`s are not followed; YAML aliases are bounded.',
        oneOf: [{ type: 'object' }, { type: 'string' }],
      },
      mediaType: {
        type: 'string',
        enum: DOCUMENT_MEDIA_TYPES,
        description:
          'The media type of `document`, kept and served back with it. Default: the kind’s own JSON media type for an object or text starting ' +
          'with `{`, its YAML media type for other text.',
      },
    },
  },
  ContractPatch: {
    type: 'object',
    additionalProperties: false,
    properties: { description: { type: 'string' }, owner: ref('ContactPoint'), contact: ref('ContactPoint') },
  },
  ContractVersionPatch: {
    type: 'object',
    additionalProperties: false,
    properties: {
      status: { type: 'string', enum: ['draft', 'active', 'deprecated', 'retired'] },
      sunset: { type: 'string' },
      eventTypes: { type: 'array', items: { type: 'string' } },
    },
  },
  ContractBindingInput: {
    type: 'object',
    required: ['contract', 'version', 'mode'],
    additionalProperties: false,
    properties: {
      contract: { type: 'string' },
      version: { type: 'string' },
      message: {
        type: 'string',
        description: 'The AsyncAPI message id; default the message named after the type, or the only one.',
      },
      mode: {
        type: 'string',
        enum: ['off', 'warn', 'enforce'],
        description: '`enforce`: 400 for data that breaks the schema; `warn`: 202 with the findings.',
      },
    },
  },
  ContractBinding: {
    type: 'object',
    required: ['type', 'contract', 'version', 'message', 'mode', 'updatedAt', 'updatedBy'],
    properties: {
      type: { type: 'string' },
      contract: { type: 'string' },
      version: { type: 'string' },
      message: { type: 'string' },
      mode: { type: 'string', enum: ['off', 'warn', 'enforce'] },
      scope: {
        type: 'string',
        enum: ['publisher', 'every-publisher'],
        description:
          'Whose events are checked: `publisher`, only those `publisher` sends (the sources it is granted); `every-publisher`, every event of the type (bound by an operator). Absent on a binding made before issue 28, which checks every publisher’s events.',
      },
      publisher: {
        type: 'string',
        description: 'With scope `publisher`: the client whose events are checked, which bound it.',
      },
      updatedAt: { type: 'string', format: 'date-time' },
      updatedBy: { type: 'string' },
    },
  },
} as const;
