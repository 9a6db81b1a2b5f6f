/**
 * The contract register's HTTP side: reading publish, metadata and binding requests. The refusals
 * the use case throws are in ./contract-refusals.ts, re-exported here for its callers.
 */
import { jsonNestingDepth, MAX_JSON_BODY_BYTES } from '../subscriptions/json-bounds.js';
import { malformedJsonProblem } from '../http/malformed-json.js';
import { mediaTypeOf, type HttpRequest } from '../http/messages.js';
import { publishedMediaType } from './document-media-types.js';
import { KoerierError, problems } from '../http/problems.js';
import {
  CONTRACT_NAME,
  contractKinds,
  isSemver,
  validationModes,
  versionStatuses,
  type ContactPoint,
  type ContractKind,
  type ValidationMode,
  type VersionStatus,
} from './contract.js';
import { contactOf, invalidContract, MAX_TEXT, optional, textOf } from './contract-fields.js';

export { invalidContract } from './contract-fields.js';

/** Contract documents nest deeper than API bodies do (schemas in schemas). */
const MAX_DOCUMENT_DEPTH = 64;
const MAX_EVENT_TYPES = 100;
const MAX_TYPE_CHARACTERS = 256;

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
  const fields = jsonObjectOf(request, [
    'kind',
    'description',
    'owner',
    'contact',
    'status',
    'sunset',
    'eventTypes',
    'document',
    'mediaType',
  ]);
  const kind = oneOf(fields['kind'], contractKinds, 'kind');
  if (kind === undefined) throw invalidContract(`kind is required: ${contractKinds.join(' or ')}.`);
  const document = fields['document'];
  if (document === undefined || document === null || (typeof document !== 'string' && typeof document !== 'object')) {
    throw invalidContract(
      'document is required: the OpenAPI or AsyncAPI document, as a JSON object or as its text (JSON or YAML).',
    );
  }
  const mediaType = publishedMediaType(kind, document, fields['mediaType']);
  if (typeof mediaType !== 'string') throw invalidContract(mediaType.refused);
  const status = oneOf(fields['status'], versionStatuses, 'status') ?? 'active';
  const sunset = sunsetOf(fields['sunset']);
  if (status === 'deprecated' && sunset === undefined)
    throw invalidContract('A deprecated version needs a sunset date (RFC 3339).');
  return {
    kind,
    ...optional('description', textOf(fields['description'], 'description')),
    ...optional('owner', contactOf(fields['owner'], 'owner')),
    ...optional('contact', contactOf(fields['contact'], 'contact')),
    status,
    ...optional('sunset', sunset),
    eventTypes: typesOf(fields['eventTypes']) ?? [],
    document: typeof document === 'string' ? document : JSON.stringify(document),
    mediaType,
  };
}

export function readContractPatch(request: HttpRequest): ContractPatch {
  const fields = jsonObjectOf(request, ['description', 'owner', 'contact']);
  return {
    ...optional('description', textOf(fields['description'], 'description')),
    ...optional('owner', contactOf(fields['owner'], 'owner')),
    ...optional('contact', contactOf(fields['contact'], 'contact')),
  };
}

export function readVersionPatch(request: HttpRequest): VersionPatch {
  const fields = jsonObjectOf(request, ['status', 'sunset', 'eventTypes']);
  return {
    ...optional('status', oneOf(fields['status'], versionStatuses, 'status')),
    ...optional('sunset', sunsetOf(fields['sunset'])),
    ...optional('eventTypes', typesOf(fields['eventTypes'])),
  };
}

export function readBindingInput(request: HttpRequest): BindingInput {
  const fields = jsonObjectOf(request, ['contract', 'version', 'message', 'mode']);
  const mode = oneOf(fields['mode'], validationModes, 'mode');
  if (typeof fields['contract'] !== 'string' || typeof fields['version'] !== 'string' || mode === undefined) {
    throw invalidContract(
      `A binding names contract, version and mode (${validationModes.join(', ')}), and optionally the message.`,
    );
  }
  const message = fields['message'];
  if (message !== undefined && (typeof message !== 'string' || message.length > MAX_TEXT))
    throw invalidContract('message is the id of a message of the document.');
  return {
    contract: checkedName(fields['contract']),
    version: checkedVersion(fields['version']),
    ...optional('message', message as string | undefined),
    mode,
  };
}

function jsonObjectOf(request: HttpRequest, members: readonly string[]): Record<string, unknown> {
  if (mediaTypeOf(request.headers['content-type']) !== 'application/json')
    throw new KoerierError(problems.unsupportedMediaType('Send application/json.'));
  if (request.body.length > MAX_JSON_BODY_BYTES)
    throw new KoerierError(problems.payloadTooLarge(`A request body is at most ${MAX_JSON_BODY_BYTES} bytes.`));
  const text = request.body.toString('utf8');
  if (jsonNestingDepth(text, MAX_DOCUMENT_DEPTH) > MAX_DOCUMENT_DEPTH)
    throw invalidContract(`Objects and arrays nest at most ${MAX_DOCUMENT_DEPTH} levels.`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new KoerierError(malformedJsonProblem());
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalidContract('The body is a JSON object.');
  const unknown = Object.keys(body).filter((name) => !members.includes(name));
  if (unknown.length > 0)
    throw invalidContract(`Unknown member(s): ${unknown.join(', ')}; expected ${members.join(', ')}.`);
  return body as Record<string, unknown>;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], member: string): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !allowed.includes(value as T))
    throw invalidContract(`${member} is one of ${allowed.join(', ')}.`);
  return value as T;
}

function sunsetOf(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'string' ||
    value.length > 64 ||
    !/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(value) ||
    Number.isNaN(Date.parse(value))
  ) {
    throw invalidContract('sunset is an RFC 3339 date or date-time.');
  }
  return new Date(Date.parse(value)).toISOString();
}

function typesOf(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > MAX_EVENT_TYPES || !value.every((type) => typeof type === 'string')) {
    throw invalidContract(`eventTypes is a list of at most ${MAX_EVENT_TYPES} CloudEvents types.`);
  }
  return [...new Set((value as string[]).map(checkedType))];
}

export * from './contract-refusals.js';
