/**
 * The contract register's HTTP side: reading publish, metadata and binding requests. The refusals
 * the use case throws are in ./contract-refusals.ts, re-exported here for its callers.
 */
import { jsonNestingDepth, MAX_JSON_BODY_BYTES } from '../subscriptions/json-bounds.js';
import { readJsonBody } from '../http/json-body.js';
import { mediaTypeOf, type HttpRequest } from '../http/messages.js';
import { publishedMediaType } from './document-media-types.js';
import { KoerierError, problems } from '../http/problems.js';
import {
  BINDING_BODY,
  CONTRACT_PATCH_BODY,
  MAX_TYPE_CHARACTERS,
  PUBLISH_BODY,
  VERSION_PATCH_BODY,
} from './contract-bodies.js';
import {
  CONTRACT_NAME,
  isSemver,
  type ContactPoint,
  type ContractKind,
  type ValidationMode,
  type VersionStatus,
} from './contract.js';
import { contactOf, invalidContract, optional, textOf } from './contract-fields.js';

export { invalidContract } from './contract-fields.js';

/** Contract documents nest deeper than API bodies do (schemas in schemas). */
const MAX_DOCUMENT_DEPTH = 64;

export interface PublishInput {
  readonly kind: ContractKind;
  readonly description?: string;
  readonly owner?: ContactPoint;
  readonly contact?: ContactPoint;
  readonly status: VersionStatus;
  readonly sunset?: string;
  readonly eventTypes: readonly string[];
  /** The document as published: its text is what the checksum covers. */
  readonly document: string;
  /** The media type it is published in, and served back in (`document-media-types.ts`). */
  readonly mediaType: string;
}

export interface ContractPatch {
  readonly description?: string;
  readonly owner?: ContactPoint;
  readonly contact?: ContactPoint;
}

export interface VersionPatch {
  readonly status?: VersionStatus;
  readonly sunset?: string;
  readonly eventTypes?: readonly string[];
}

export interface BindingInput {
  readonly contract: string;
  readonly version: string;
  readonly message?: string;
  readonly mode: ValidationMode;
}

export function checkedName(name: string): string {
  if (!CONTRACT_NAME.test(name))
    throw invalidContract(
      'A contract name is 1 to 128 characters: lower-case letters, digits, "." and "-", starting and ending with a letter or digit.',
    );
  return name;
}

export function checkedVersion(version: string): string {
  if (!isSemver(version))
    throw invalidContract(
      `"${version.slice(0, 64)}" is not a semantic version (MAJOR.MINOR.PATCH, optionally -prerelease).`,
    );
  return version;
}

export function checkedType(type: string): string {
  // eslint-disable-next-line no-control-regex
  if (type === '' || type.length > MAX_TYPE_CHARACTERS || /[\u0000-\u001f\u007f]/.test(type)) {
    throw invalidContract(`An event type is 1 to ${MAX_TYPE_CHARACTERS} characters without control characters.`);
  }
  return type;
}

export function readPublishInput(request: HttpRequest): PublishInput {
  const fields = readJsonBody(boundedText(request), PUBLISH_BODY);
  const { kind, document } = fields;
  const mediaType = publishedMediaType(kind, document, fields.mediaType);
  if (typeof mediaType !== 'string') throw invalidContract(mediaType.refused);
  const status = fields.status ?? 'active';
  const sunset = sunsetOf(fields.sunset);
  if (status === 'deprecated' && sunset === undefined)
    throw invalidContract('A deprecated version needs a sunset date (RFC 3339).');
  return {
    kind,
    ...optional('description', textOf(fields.description, 'description')),
    ...optional('owner', contactOf(fields.owner, 'owner')),
    ...optional('contact', contactOf(fields.contact, 'contact')),
    status,
    ...optional('sunset', sunset),
    eventTypes: typesOf(fields.eventTypes) ?? [],
    document: typeof document === 'string' ? document : JSON.stringify(document),
    mediaType,
  };
}

export function readContractPatch(request: HttpRequest): ContractPatch {
  const fields = readJsonBody(boundedText(request), CONTRACT_PATCH_BODY);
  return {
    ...optional('description', textOf(fields.description, 'description')),
    ...optional('owner', contactOf(fields.owner, 'owner')),
    ...optional('contact', contactOf(fields.contact, 'contact')),
  };
}

export function readVersionPatch(request: HttpRequest): VersionPatch {
  const fields = readJsonBody(boundedText(request), VERSION_PATCH_BODY);
  return {
    ...optional('status', fields.status),
    ...optional('sunset', sunsetOf(fields.sunset)),
    ...optional('eventTypes', typesOf(fields.eventTypes)),
  };
}

export function readBindingInput(request: HttpRequest): BindingInput {
  const { contract, version, message, mode } = readJsonBody(boundedText(request), BINDING_BODY);
  return {
    contract: checkedName(contract),
    version: checkedVersion(version),
    ...optional('message', message),
    mode,
  };
}

/** The body's text within its bounds, before the parser, which would recurse as deep as the body nests. */
function boundedText(request: HttpRequest): string {
  if (mediaTypeOf(request.headers['content-type']) !== 'application/json')
    throw new KoerierError(problems.unsupportedMediaType('Send application/json.'));
  if (request.body.length > MAX_JSON_BODY_BYTES)
    throw new KoerierError(problems.payloadTooLarge(`A request body is at most ${MAX_JSON_BODY_BYTES} bytes.`));
  const text = request.body.toString('utf8');
  if (jsonNestingDepth(text, MAX_DOCUMENT_DEPTH) > MAX_DOCUMENT_DEPTH)
    throw invalidContract(`Objects and arrays nest at most ${MAX_DOCUMENT_DEPTH} levels.`);
  return text;
}

/** The sunset's instant; its form is the schema's, the date itself is checked here. */
function sunsetOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Number.isNaN(Date.parse(value))) throw invalidContract('sunset is an RFC 3339 date or date-time.');
  return new Date(Date.parse(value)).toISOString();
}

function typesOf(value: readonly string[] | undefined): string[] | undefined {
  return value === undefined ? undefined : [...new Set(value.map(checkedType))];
}

export * from './contract-refusals.js';
