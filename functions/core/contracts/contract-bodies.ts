/**
 * The contract register's JSON request bodies, one schema each (issue 29 item 2): what
 * http-mapping.ts reads them with (`readJsonBody`) and what /openapi.json shows as
 * ContractVersionInput, ContractPatch, ContractVersionPatch, ContractBindingInput and ContactPoint.
 * The contract documents themselves are OpenAPI and AsyncAPI texts, read by their own parsers.
 * What no schema says is checked in code after it, naming the member in `detail` as it always did:
 * control characters in the metadata and a contact point's e-mail address or URL
 * (contract-fields.ts), a sunset's date, the document's media type (document-media-types.ts).
 */
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (core/http/json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { refusedAs, requestBody, stringEnum } from '../http/json-body.js';
import { CONTRACT_NAME, contractKinds, SEMVER, validationModes, versionStatuses } from './contract.js';
import { MAX_EMAIL, MAX_TEXT } from './contract-fields.js';
import { DOCUMENT_MEDIA_TYPES } from './document-media-types.js';

const MAX_EVENT_TYPES = 100;
export const MAX_TYPE_CHARACTERS = 256;
const MAX_SUNSET_CHARACTERS = 64;

/** EDU-22: checked by contactOf (contract-fields.ts), which names the member in `detail`. */
export const CONTACT_POINT = requestBody({
  schema: Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: MAX_TEXT, pattern: '\\S' }),
      email: Type.Optional(Type.String({ maxLength: MAX_EMAIL, format: 'email' })),
      url: Type.Optional(Type.String({ maxLength: MAX_TEXT, pattern: '^https?://\\S+$' })),
    },
    {
      additionalProperties: false,
      description: 'EDU-22: a name, and an e-mail address or a URL. No control characters (issue 28).',
    },
  ),
  problemType: 'invalid-contract',
  requirement: 'EDU-22',
});

const contactPoint = () => refusedAs('in-code', Type.Unknown({ $ref: '#/components/schemas/ContactPoint' }));
const description = () =>
  refusedAs(
    'in-code',
    Type.String({ maxLength: MAX_TEXT, description: 'No control characters but tabs and line breaks (issue 28).' }),
  );
const sunset = (text: string) =>
  Type.String({
    maxLength: MAX_SUNSET_CHARACTERS,
    pattern: '^\\d{4}-\\d{2}-\\d{2}(T[\\d:.]+(Z|[+-]\\d{2}:\\d{2}))?$',
    description: text,
  });
const eventTypes = (text: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: MAX_TYPE_CHARACTERS, pattern: '^[^\\u0000-\\u001f\\u007f]+$' }), {
    maxItems: MAX_EVENT_TYPES,
    description: text,
  });

/** PUT /contracts/{name}/versions/{version}. */
export const PUBLISH_BODY = requestBody({
  schema: Type.Object(
    {
      kind: stringEnum(contractKinds),
      description: Type.Optional(description()),
      owner: Type.Optional(contactPoint()),
      contact: Type.Optional(contactPoint()),
      status: Type.Optional(stringEnum(versionStatuses, { default: 'active' })),
      sunset: Type.Optional(sunset('RFC 3339 date or date-time; required with `deprecated`.')),
      eventTypes: Type.Optional(eventTypes('Default: the AsyncAPI messages’ names.')),
      document: Type.Union([Type.Object({}), Type.String()], {
        description:
          'The OpenAPI 3.x or AsyncAPI 3.x document: a JSON object, or its text in JSON or YAML. The checksum covers the text as sent ' +
          '(UTF-8); the version serves it back as sent, in `mediaType`. External `$ref`s are not followed; YAML aliases are bounded.',
      }),
      // Read case-insensitively and with parameters by publishedMediaType, which names the refusal.
      mediaType: Type.Optional(
        refusedAs(
          'in-code',
          stringEnum(DOCUMENT_MEDIA_TYPES, {
            description:
              'The media type of `document`, kept and served back with it. Default: the kind’s own JSON media type for an object or text starting ' +
              'with `{`, its YAML media type for other text.',
          }),
        ),
      ),
    },
    { additionalProperties: false },
  ),
  problemType: 'invalid-contract',
  requirement: 'EDU-21',
});

/** PATCH /contracts/{name}. */
export const CONTRACT_PATCH_BODY = requestBody({
  schema: Type.Object(
    {
      description: Type.Optional(description()),
      owner: Type.Optional(contactPoint()),
      contact: Type.Optional(contactPoint()),
    },
    { additionalProperties: false },
  ),
  problemType: 'invalid-contract',
  requirement: 'EDU-22',
});

/** PATCH /contracts/{name}/versions/{version}. */
export const VERSION_PATCH_BODY = requestBody({
  schema: Type.Object(
    {
      status: Type.Optional(stringEnum(versionStatuses)),
      sunset: Type.Optional(sunset('RFC 3339 date or date-time; required with `deprecated`.')),
      eventTypes: Type.Optional(eventTypes('The types this version describes.')),
    },
    { additionalProperties: false },
  ),
  problemType: 'invalid-contract',
  requirement: 'EDU-21',
});

/** PUT /contract-bindings/{type}. */
export const BINDING_BODY = requestBody({
  schema: Type.Object(
    {
      contract: Type.String({ minLength: 1, maxLength: 128, pattern: CONTRACT_NAME.source }),
      version: Type.String({ maxLength: 64, pattern: SEMVER.source }),
      message: Type.Optional(
        Type.String({
          maxLength: MAX_TEXT,
          description: 'The AsyncAPI message id; default the message named after the type, or the only one.',
        }),
      ),
      mode: stringEnum(validationModes, {
        description: '`enforce`: 400 for data that breaks the schema; `warn`: 202 with the findings.',
      }),
    },
    { additionalProperties: false },
  ),
  problemType: 'invalid-contract',
  requirement: 'EDU-21',
});
