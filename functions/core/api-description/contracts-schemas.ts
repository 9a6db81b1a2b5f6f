/** Component schemas of the contract register's API (contracts-paths.ts). */
import {
  BINDING_BODY,
  CONTACT_POINT,
  CONTRACT_PATCH_BODY,
  PUBLISH_BODY,
  VERSION_PATCH_BODY,
} from '../contracts/contract-bodies.js';
import { describedSchema } from '../http/json-body.js';
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

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
  ContactPoint: describedSchema(CONTACT_POINT),
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
  // The request bodies, from the schemas they are checked with (issue 29 item 2).
  ContractVersionInput: describedSchema(PUBLISH_BODY),
  ContractPatch: describedSchema(CONTRACT_PATCH_BODY),
  ContractVersionPatch: describedSchema(VERSION_PATCH_BODY),
  ContractBindingInput: describedSchema(BINDING_BODY),
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
