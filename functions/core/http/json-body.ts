/**
 * One schema per request body (issue 29 item 2). A `RequestBody` is the JSON Schema of a route's
 * body, written with TypeBox (`Type.*`: JSON Schema and its TypeScript type, `Static<>`, at once),
 * and the same object does two things: `readJsonBody` checks a body against it with TypeBox's own
 * checker (one answer for malformed JSON, one wording for a wrong shape), and the API description
 * puts it in the operation's `requestBody` (`describedSchema`), so a limit the code enforces is the
 * limit `/openapi.json` states. What a schema cannot say (one member against another, the URL
 * policy, entitlement) the area checks in code after the schema, and refuses with `bodyRefusal` so
 * that it reads like a schema's refusal.
 *
 * What a cold start pays for it (issue 27; lib/bundling.ts's options, bytes of index.mjs): TypeBox's
 * `Type` object holds every builder and bundles to 46 KB, so the areas import the builders one by
 * one (`import * as Type`, which esbuild tree-shakes: about 3 KB); the checker is TypeBox's
 * `Check`/`Errors` (about 31 KB), which interprets the schema. Its `TypeCompiler` was measured too
 * and left out: 20 KB more in each bundle, and a first check of 2 ms against 0.6 ms.
 *
 * TypeBox counts a string's length in UTF-16 code units where JSON Schema counts code points: a
 * string of astral characters (emoji) reaches maxLength at half the characters /openapi.json
 * promises. test/unit/http/body-checker-agrees-with-ajv.test.ts states the difference.
 */
import {
  Kind,
  TypeRegistry,
  Unsafe,
  type SchemaOptions,
  type Static,
  type TSchema,
  type TUnsafe,
} from '@sinclair/typebox';
import { Errors, ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { Check } from '@sinclair/typebox/value';
import { registerStringFormats } from './string-formats.js';
import { malformedJsonProblem } from './malformed-json.js';
import { problem, KoerierError, type ValidationIssue } from './problems.js';
import type { ProblemSlug } from './problem-titles.js';

export interface RequestBody<T extends TSchema = TSchema> {
  /** The JSON Schema: what is checked, and what the API description shows. */
  readonly schema: T;
  /** The problem type of a body of the wrong shape: the one the area's other refusals of the body carry. */
  readonly problemType: ProblemSlug;
  /** The requirement each issue names. */
  readonly requirement: string;
  /** What an empty (or blank) body stands for; without it an empty body is malformed JSON. */
  readonly whenEmpty?: Static<T>;
}

export function requestBody<T extends TSchema>(body: RequestBody<T>): RequestBody<T> {
  return body;
}

/**
 * The schema as JSON, for the API description: TypeBox's symbol-keyed markers (`[Kind]`,
 * `[OptionalKind]`, `MEMBER_ISSUE`) left out. A recursive schema (`Type.Recursive(…, { $id: 'Filter' })`)
 * is the component its `$id` names: the `$id` goes, and its references become `#/components/schemas/Filter`.
 */
export function describedSchema(body: RequestBody): Record<string, unknown> {
  const json = JSON.stringify(body.schema, (key, value: unknown) => {
    if (key === '$id') return undefined;
    if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) return `#/components/schemas/${value}`;
    return value;
  });
  return JSON.parse(json) as Record<string, unknown>;
}

/**
 * How a member whose schema carries it is refused: one issue for the member, whatever inside it is
 * wrong, in the words, rule and requirement its area has always given (the subscription's `types`
 * is `array-of-strings`, EDU-14). `'in-code'`: the area checks the member itself after the schema
 * (a sink by the outbound URL policy, the filters by their dialects), so the schema only describes
 * it. A symbol key, so TypeBox ignores it and the API description (JSON) never shows it.
 */
export const MEMBER_ISSUE = Symbol('koerier.memberIssue');
export type MemberIssue = Omit<ValidationIssue, 'attribute' | 'pointer'> | 'in-code';

/** `schema` with the issue its member is refused with (`MEMBER_ISSUE`). */
export function refusedAs<T extends TSchema>(issue: MemberIssue, schema: T): T {
  return { ...schema, [MEMBER_ISSUE]: issue };
}

const STRING_ENUM = 'KoerierStringEnum';

/**
 * One of a few strings, described as JSON Schema's `enum` (TypeBox's literals would show as an
 * `anyOf` of `const`s, which reads worse in /openapi.json and in the generated client types).
 */
export function stringEnum<const T extends string>(values: readonly T[], options: SchemaOptions = {}): TUnsafe<T> {
  return Unsafe<T>({ ...options, [Kind]: STRING_ENUM, type: 'string', enum: [...values] });
}

function registerStringEnum(): void {
  if (!TypeRegistry.Has(STRING_ENUM))
    TypeRegistry.Set<{ enum: readonly string[] }>(
      STRING_ENUM,
      (schema, value) => typeof value === 'string' && schema.enum.includes(value),
    );
}

const MAX_UNKNOWN_MEMBERS = 10;
const MAX_MEMBER_NAME = 64;

/**
 * The body parsed and checked against its schema; throws the 400 `malformed-json` for a body that
 * is not JSON, and the body's own 400 (`problemType`) naming every wrong member otherwise.
 */
export function readJsonBody<T extends TSchema>(body: Buffer | string, definition: RequestBody<T>): Static<T> {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (definition.whenEmpty !== undefined && text.trim() === '') return definition.whenEmpty;
  const value = readJsonValue(text);
  const issues = schemaIssues(definition, value);
  if (issues.length > 0) throw bodyRefusal(definition, issues);
  return value as Static<T>;
}

/**
 * The parsed body, or the one 400 `malformed-json` every route gives; for an area that checks the
 * value against its schema together with rules of its own (`schemaIssues`, then `bodyRefusal`).
 */
export function readJsonValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new KoerierError(malformedJsonProblem(), { cause: error });
  }
}

/**
 * What is wrong with `value` by the schema, one issue per member; `prefix` names where the value
 * sits when it is one member of a larger body (`sinkcredential`).
 */
export function schemaIssues(definition: RequestBody, value: unknown, prefix?: string): ValidationIssue[] {
  registerStringFormats();
  registerStringEnum();
  if (Check(definition.schema, value)) return [];
  const issues = new Map<string, ValidationIssue>();
  let unknownMembers = 0;
  for (const error of closestErrors(Errors(definition.schema, value))) {
    const member = memberIssueOf(definition.schema, error.path);
    if (member === 'in-code') continue;
    if (member !== undefined) {
      const pointer = `${prefix === undefined ? '' : `/${prefix}`}/${member.name}`;
      if (!issues.has(pointer)) issues.set(pointer, { attribute: memberName(pointer)!, ...member.issue, pointer });
      continue;
    }
    const pointer = `${prefix === undefined ? '' : `/${prefix}`}${error.path}`;
    // One issue per member: a missing member is also of the wrong type, which says nothing more.
    if (issues.has(pointer)) continue;
    // Unknown members echo the request's own names: a few of them, cut short, say enough, and a
    // body full of them cannot inflate its own answer.
    if (error.type === ValueErrorType.ObjectAdditionalProperties && ++unknownMembers > MAX_UNKNOWN_MEMBERS) continue;
    const attribute = memberName(pointer)?.slice(0, MAX_MEMBER_NAME);
    issues.set(pointer, {
      ...(attribute === undefined ? {} : { attribute }),
      rule: ruleOf(error),
      requirement: definition.requirement,
      message: messageOf(error, attribute),
      pointer,
    });
  }
  return [...issues.values()];
}

/** The member an error is in, when that member's schema says how it is refused (`MEMBER_ISSUE`). */
function memberIssueOf(
  schema: TSchema,
  path: string,
): { name: string; issue: Exclude<MemberIssue, 'in-code'> } | 'in-code' | undefined {
  const name = path.split('/')[1]?.replaceAll('~1', '/').replaceAll('~0', '~');
  const properties = schema['properties'] as Record<string, TSchema> | undefined;
  if (name === undefined || properties === undefined || !Object.hasOwn(properties, name)) return undefined;
  const issue = (properties[name] as { [MEMBER_ISSUE]?: MemberIssue })[MEMBER_ISSUE];
  return issue === 'in-code' ? issue : issue === undefined ? undefined : { name, issue };
}

/**
 * The errors, each failed union replaced by the errors of its closest variant (the one with
 * fewest): `{"all": true, "force": 1}` is named for its unknown member, not as "no variant fits".
 */
function closestErrors(errors: Iterable<ValueError>): ValueError[] {
  const found: ValueError[] = [];
  for (const error of errors) {
    if (error.type !== ValueErrorType.Union || error.errors.length === 0) {
      found.push(error);
      continue;
    }
    const variants = error.errors.map((variant) => closestErrors(variant));
    found.push(...variants.reduce((closest, variant) => (variant.length < closest.length ? variant : closest)));
  }
  return found;
}

/** The body's 400, for the schema's issues and for those the area finds in code after it. */
export function bodyRefusal(definition: RequestBody, issues: readonly ValidationIssue[]): KoerierError {
  const count = issues.length;
  return new KoerierError(
    problem(
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

/** The rule an issue names, by TypeBox's error: one set for every body. */
const RULES: Partial<Readonly<Record<ValueErrorType, string>>> = {
  [ValueErrorType.ObjectAdditionalProperties]: 'unknown-member',
  [ValueErrorType.ObjectRequiredProperty]: 'required',
  [ValueErrorType.IntegerMinimum]: 'range',
  [ValueErrorType.IntegerMaximum]: 'range',
  [ValueErrorType.IntegerMultipleOf]: 'range',
  [ValueErrorType.NumberMinimum]: 'range',
  [ValueErrorType.NumberMaximum]: 'range',
  [ValueErrorType.NumberMultipleOf]: 'range',
  [ValueErrorType.StringMinLength]: 'length',
  [ValueErrorType.StringMaxLength]: 'length',
  [ValueErrorType.ArrayMinItems]: 'items',
  [ValueErrorType.ArrayMaxItems]: 'items',
  [ValueErrorType.StringPattern]: 'pattern',
  [ValueErrorType.Literal]: 'one-of',
  [ValueErrorType.Union]: 'one-of',
  [ValueErrorType.Kind]: 'one-of',
};

function ruleOf(error: ValueError): string {
  const schema = error.schema as Record<string, unknown>;
  // A format: its name (`date-time`); a value of the wrong type: the type it must be (`object`, `array`, `string`, …).
  if (error.type === ValueErrorType.StringFormat) return String(schema['format']);
  return RULES[error.type] ?? (typeof schema['type'] === 'string' ? schema['type'] : 'type');
}

/** One wording for every wrong shape: the member, and what it must be, from its schema. */
function messageOf(error: ValueError, attribute: string | undefined): string {
  const schema = error.schema as Record<string, unknown>;
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    const members = Object.keys((schema['properties'] as object | undefined) ?? {});
    return `unknown member "${attribute ?? ''}"; members: ${members.join(', ')}`;
  }
  const what = attribute === undefined ? 'the body' : attribute;
  const required = error.type === ValueErrorType.ObjectRequiredProperty ? ' and is required' : '';
  return `${what} must be ${described(schema)}${required}`;
}

function described(schema: Record<string, unknown>): string {
  if ('const' in schema) return JSON.stringify(schema['const']);
  if (Array.isArray(schema['enum'])) return `one of ${schema['enum'].map((value) => JSON.stringify(value)).join(', ')}`;
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
