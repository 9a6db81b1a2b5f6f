/**
 * Checks a value against a request body schema (json-schema.ts): the keywords those schemas use,
 * with JSON Schema 2020-12's meaning, interpreted as they are (nothing compiled, nothing to pay at
 * a cold start). `$ref` names a component the area checks in code, so the schema admits any value
 * there. Lengths count code points, as JSON Schema does.
 */
import type { JsonSchema } from './json-schema.js';

/** The keyword a value fails, where (a JSON Pointer), and the schema that holds the keyword. */
export interface SchemaError {
  readonly pointer: string;
  readonly keyword: string;
  readonly schema: JsonSchema;
}

/** RFC 3339 §5.6, as `Date.parse` reads it. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** The formats the body schemas use; which URLs are allowed is the area's policy, checked in code. */
export const FORMATS: Readonly<Record<string, (value: string) => boolean>> = {
  'date-time': (value) => RFC3339.test(value) && !Number.isNaN(Date.parse(value)),
  uri: (value) => URL.canParse(value),
};

const patterns = new Map<string, RegExp>();

function matches(pattern: string, value: string): boolean {
  let expression = patterns.get(pattern);
  if (expression === undefined) {
    expression = new RegExp(pattern, 'u');
    patterns.set(pattern, expression);
  }
  return expression.test(value);
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function hasType(value: unknown, type: unknown): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

/**
 * Every error of `value` against `schema`. A failed `anyOf` is reported as the errors of its
 * closest variant (the one with fewest), so `{"all": true, "force": 1}` is named for its unknown
 * member rather than as "no variant fits".
 */
export function schemaErrors(schema: JsonSchema, value: unknown, pointer = ''): SchemaError[] {
  const errors: SchemaError[] = [];
  const fail = (keyword: string, at = pointer, holder = schema) =>
    errors.push({ pointer: at, keyword, schema: holder });
  if (schema['type'] !== undefined && !hasType(value, schema['type'])) {
    fail('type');
    return errors;
  }
  if ('const' in schema && value !== schema['const']) fail('const');
  const variants = schema['anyOf'] as readonly JsonSchema[] | undefined;
  if (variants !== undefined) {
    const each = variants.map((variant) => schemaErrors(variant, value, pointer));
    if (!each.some((found) => found.length === 0))
      errors.push(...each.reduce((closest, found) => (found.length < closest.length ? found : closest)));
  }
  if (typeof value === 'number') {
    if (typeof schema['minimum'] === 'number' && value < schema['minimum']) fail('minimum');
    if (typeof schema['maximum'] === 'number' && value > schema['maximum']) fail('maximum');
    if (typeof schema['multipleOf'] === 'number' && !Number.isInteger(value / schema['multipleOf'])) fail('multipleOf');
  }
  if (typeof value === 'string') stringErrors(schema, value, fail);
  if (Array.isArray(value)) {
    if (typeof schema['minItems'] === 'number' && value.length < schema['minItems']) fail('minItems');
    if (typeof schema['maxItems'] === 'number' && value.length > schema['maxItems']) fail('maxItems');
    const items = schema['items'] as JsonSchema | undefined;
    if (items !== undefined) value.forEach((item, i) => errors.push(...schemaErrors(items, item, `${pointer}/${i}`)));
  }
  if (typeOf(value) === 'object') errors.push(...memberErrors(schema, value as Record<string, unknown>, pointer));
  return errors;
}

function stringErrors(schema: JsonSchema, value: string, fail: (keyword: string) => void): void {
  const minLength = schema['minLength'];
  const maxLength = schema['maxLength'];
  if (typeof minLength === 'number' || typeof maxLength === 'number') {
    // Code points, not UTF-16 units; at most maxLength + 1 of them counted.
    let length = 0;
    for (const _ of value) if (++length > (typeof maxLength === 'number' ? maxLength : Infinity)) break;
    if (typeof minLength === 'number' && length < minLength) fail('minLength');
    if (typeof maxLength === 'number' && length > maxLength) fail('maxLength');
  }
  if (typeof schema['pattern'] === 'string' && !matches(schema['pattern'], value)) fail('pattern');
  const format = typeof schema['format'] === 'string' ? FORMATS[schema['format']] : undefined;
  if (format !== undefined && !format(value)) fail('format');
}

function memberErrors(schema: JsonSchema, value: Record<string, unknown>, pointer: string): SchemaError[] {
  const errors: SchemaError[] = [];
  const properties = (schema['properties'] as Readonly<Record<string, JsonSchema>> | undefined) ?? {};
  if (schema['additionalProperties'] === false)
    for (const name of Object.keys(value))
      if (!Object.hasOwn(properties, name))
        errors.push({ pointer: `${pointer}/${escaped(name)}`, keyword: 'additionalProperties', schema });
  for (const name of (schema['required'] as readonly string[] | undefined) ?? [])
    if (!Object.hasOwn(value, name))
      errors.push({ pointer: `${pointer}/${escaped(name)}`, keyword: 'required', schema: properties[name] ?? {} });
  for (const [name, member] of Object.entries(properties))
    if (Object.hasOwn(value, name)) errors.push(...schemaErrors(member, value[name], `${pointer}/${escaped(name)}`));
  return errors;
}

function escaped(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}
