/**
 * One schema per request body (issue 29 item 2). A `RequestBody` is the JSON Schema of a route's
 * body (json-schema.ts), and the same object does two things: `readJsonBody` checks a body
 * against it (one answer for malformed JSON, one wording for a wrong shape), and the API
 * description puts it in the operation's `requestBody` (`describedSchema`), so a limit the code
 * enforces is the limit `/openapi.json` states. What a schema cannot say (one member against
 * another, the URL policy, entitlement) the area checks in code after the schema, and refuses
 * with `bodyRefusal` so that it reads like a schema's refusal.
 */
import { malformedJsonProblem } from './malformed-json.js';
import type { Infer, JsonSchema } from './json-schema.js';
import { schemaErrors, type SchemaError } from './json-schema-check.js';
import { catalogued, KoerierError, type ValidationIssue } from './problems.js';
import type { ProblemSlug } from './problem-titles.js';

export interface RequestBody<T extends JsonSchema = JsonSchema> {
  /** The JSON Schema: what is checked, and what the API description shows. */
  readonly schema: T;
  /** The problem type of a body of the wrong shape: the one the area's other refusals of the body carry. */
  readonly problemType: ProblemSlug;
  /** The requirement each issue names. */
  readonly requirement: string;
  /** What an empty (or blank) body stands for; without it an empty body is malformed JSON. */
  readonly whenEmpty?: Infer<T>;
}

export function requestBody<T extends JsonSchema>(body: RequestBody<T>): RequestBody<T> {
  return body;
}

/** The schema as JSON, for the API description: the symbol-keyed markers of json-schema.ts left out. */
export function describedSchema(body: RequestBody): Record<string, unknown> {
  return JSON.parse(JSON.stringify(body.schema)) as Record<string, unknown>;
}

const MAX_UNKNOWN_MEMBERS = 10;
const MAX_MEMBER_NAME = 64;

/**
 * The body parsed and checked against its schema; throws the 400 `malformed-json` for a body that
 * is not JSON, and the body's own 400 (`problemType`) naming every wrong member otherwise.
 */
export function readJsonBody<T extends JsonSchema>(body: Buffer | string, definition: RequestBody<T>): Infer<T> {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (definition.whenEmpty !== undefined && text.trim() === '') return definition.whenEmpty;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new KoerierError(malformedJsonProblem(), { cause: error });
  }
  const issues = schemaIssues(definition, value);
  if (issues.length > 0) throw bodyRefusal(definition, issues);
  return value as Infer<T>;
}

/**
 * What is wrong with `value` by the schema, one issue per member; `prefix` names where the value
 * sits when it is one member of a larger body (`sinkcredential`).
 */
export function schemaIssues(definition: RequestBody, value: unknown, prefix?: string): ValidationIssue[] {
  const issues = new Map<string, ValidationIssue>();
  let unknownMembers = 0;
  for (const error of schemaErrors(definition.schema, value, prefix === undefined ? '' : `/${prefix}`)) {
    // One issue per member: a member of the wrong type breaks its other keywords too, which says nothing more.
    if (issues.has(error.pointer)) continue;
    // Unknown members echo the request's own names: a few of them, cut short, say enough, and a
    // body full of them cannot inflate its own answer.
    if (error.keyword === 'additionalProperties' && ++unknownMembers > MAX_UNKNOWN_MEMBERS) continue;
    const attribute = memberName(error.pointer)?.slice(0, MAX_MEMBER_NAME);
    issues.set(error.pointer, {
      ...(attribute === undefined ? {} : { attribute }),
      rule: ruleOf(error),
      requirement: definition.requirement,
      message: messageOf(error, attribute),
      pointer: error.pointer,
    });
  }
  return [...issues.values()];
}

/** The body's 400, for the schema's issues and for those the area finds in code after it. */
export function bodyRefusal(definition: RequestBody, issues: readonly ValidationIssue[]): KoerierError {
  const count = issues.length;
  return new KoerierError(
    catalogued(
      400,
      definition.problemType,
      `${count} member${count === 1 ? '' : 's'} of the body ${count === 1 ? 'is' : 'are'} not as the API description says; see errors.`,
      { errors: issues },
    ),
  );
}

/** `/sinkcredential/accesstoken` → `sinkcredential.accesstoken`, `/locktokens/0` → `locktokens[0]`. */
function memberName(pointer: string): string | undefined {
  if (pointer === '') return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name === '' ? part : `${name}.${part}`), '');
}

/** The rule an issue names: one set for every body. */
const RULES: Readonly<Record<string, string>> = {
  additionalProperties: 'unknown-member',
  required: 'required',
  minimum: 'range',
  maximum: 'range',
  multipleOf: 'range',
  minLength: 'length',
  maxLength: 'length',
  minItems: 'items',
  maxItems: 'items',
  pattern: 'pattern',
  const: 'one-of',
  anyOf: 'one-of',
};

function ruleOf(error: SchemaError): string {
  // A value of the wrong type: the rule is the type it must be (`object`, `array`, `string`, …);
  // a format: its name (`date-time`).
  if (error.keyword === 'type' || error.keyword === 'format') return String(error.schema[error.keyword]);
  return RULES[error.keyword] ?? error.keyword;
}

/** One wording for every wrong shape: the member, and what it must be, from its schema. */
function messageOf(error: SchemaError, attribute: string | undefined): string {
  const schema = error.schema;
  if (error.keyword === 'additionalProperties') {
    const members = Object.keys((schema['properties'] as object | undefined) ?? {});
    return `unknown member "${attribute ?? ''}"; members: ${members.join(', ')}`;
  }
  const what = attribute === undefined ? 'the body' : attribute;
  const required = error.keyword === 'required' ? ' and is required' : '';
  return `${what} must be ${described(schema)}${required}`;
}

function described(schema: JsonSchema): string {
  if ('const' in schema) return JSON.stringify(schema['const']);
  const text = typeof schema['description'] === 'string' ? ` (${schema['description'].replace(/\.$/, '')})` : '';
  const variants = schema['anyOf'] as Record<string, unknown>[] | undefined;
  if (variants?.every((variant) => 'const' in variant))
    return `one of ${variants.map((variant) => JSON.stringify(variant['const'])).join(', ')}`;
  if (variants) return `one of the forms the API description gives${text}`;
  switch (schema['type']) {
    case 'integer':
    case 'number':
      return `${schema['type'] === 'integer' ? 'an integer' : 'a number'}${bounds(schema['minimum'], schema['maximum'], '')}${
        typeof schema['multipleOf'] === 'number' ? `, a multiple of ${schema['multipleOf']}` : ''
      }`;
    case 'string':
      return `a string${bounds(schema['minLength'], schema['maxLength'], ' characters')}${
        typeof schema['pattern'] === 'string' ? ` matching ${schema['pattern']}` : ''
      }${typeof schema['format'] === 'string' ? ` in the format ${schema['format']}` : ''}${text}`;
    case 'array':
      return `a list of${bounds(schema['minItems'], schema['maxItems'], '') || ' any number of'} ${plural(
        (schema['items'] as Record<string, unknown> | undefined) ?? {},
      )}`;
    case 'object':
      return `an object${text}`;
    case 'boolean':
      return 'true or false';
    default:
      return `as the API description says${text}`;
  }
}

function bounds(min: unknown, max: unknown, unit: string): string {
  if (typeof min === 'number' && typeof max === 'number') return ` of ${min} to ${max}${unit}`;
  if (typeof min === 'number') return ` of at least ${min}${unit}`;
  if (typeof max === 'number') return ` of at most ${max}${unit}`;
  return '';
}

function plural(items: Record<string, unknown>): string {
  const kind = items['type'] === 'string' ? 'strings' : items['type'] === 'object' ? 'objects' : 'values';
  return `${kind}${bounds(items['minLength'], items['maxLength'], ' characters')}`.replace(' of ', ', each of ');
}
