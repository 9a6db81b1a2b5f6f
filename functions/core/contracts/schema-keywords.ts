/**
 * The keywords of JSON Schema as the compatibility check (schema-compatibility.ts) reads them:
 * `$ref` within a document, `allOf` folded, enum members, types, and the bounds of strings,
 * numbers, arrays and objects; `valueFits` for single values (enum members). Pure.
 */
import { deepEqual, isObject, type JsonValue } from './json-values.js';
import { linearPattern } from './linear-patterns.js';

export type JsonSchema = boolean | { readonly [keyword: string]: unknown };
export type SchemaObject = Readonly<Record<string, unknown>>;
/** Why one schema does not include another, at a JSON Pointer into the instance. */
export interface Reason {
  readonly pointer: string;
  readonly change: string;
  readonly message: string;
}

export const ALL_TYPES = ['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'] as const;

/** Keywords that say nothing about which instances are valid. */
export const ANNOTATIONS = new Set([
  'title',
  'description',
  'examples',
  'example',
  'default',
  '$comment',
  '$schema',
  '$id',
  '$defs',
  'definitions',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentMediaType',
  'contentEncoding',
  'discriminator',
  'externalDocs',
]);
export function reason(pointer: string, change: string, message: string): Reason {
  return { pointer, change, message };
}

export function resolve(schema: unknown, root: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; hops < 32 && isObject(current) && typeof current['$ref'] === 'string'; hops++) {
    const target = pointerTarget(root, current['$ref']);
    if (target === undefined) break;
    const { $ref: _ref, ...siblings } = current;
    // Siblings of $ref (2019-09 and later) narrow further; only annotations usually.
    current = Object.keys(siblings).every((keyword) => ANNOTATIONS.has(keyword))
      ? target
      : { allOf: [target, siblings] };
  }
  if (typeof current === 'boolean') return current;
  return isObject(current) ? current : true;
}

export function pointerTarget(root: JsonSchema, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * `allOf` folded into one schema where its members only add object members, types and bounds of
 * different keywords: the way composition is written in practice. Members that set the same
 * keyword differently are kept as they are, and then compared as an unmodelled keyword.
 */
export function mergedAllOf(schema: JsonSchema): JsonSchema {
  if (typeof schema === 'boolean' || !Array.isArray(schema['allOf'])) return schema;
  const { allOf, ...rest } = schema as { allOf: unknown[] } & Record<string, unknown>;
  let merged: Record<string, unknown> = { ...rest };
  for (const member of allOf) {
    if (member === true) continue;
    if (!isObject(member)) return schema;
    const next: Record<string, unknown> = { ...merged };
    for (const [keyword, value] of Object.entries(member)) {
      if (keyword === 'properties' && isObject(value))
        next['properties'] = { ...(isObject(merged['properties']) ? merged['properties'] : {}), ...value };
      else if (keyword === 'required')
        next['required'] = [...new Set([...stringList(merged['required']), ...stringList(value)])];
      else if (merged[keyword] !== undefined && !deepEqual(merged[keyword] as JsonValue, value as JsonValue))
        return schema;
      else next[keyword] = value;
    }
    merged = next;
  }
  return merged;
}

export function enumValues(schema: SchemaObject): JsonValue[] | undefined {
  if (Object.hasOwn(schema, 'const')) return [schema['const'] as JsonValue];
  return Array.isArray(schema['enum']) ? (schema['enum'] as JsonValue[]) : undefined;
}

export function typesOf(schema: SchemaObject): string[] {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((entry): entry is string => typeof entry === 'string');
  return [...ALL_TYPES];
}

export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

export function lowerBound(a: SchemaObject, b: SchemaObject, keyword: string, pointer: string): Reason[] {
  const bound = b[keyword];
  if (typeof bound !== 'number') return [];
  const own = a[keyword];
  return typeof own === 'number' && own >= bound
    ? []
    : [reason(pointer, 'bound-tightened', `${keyword} ${bound} is new or higher`)];
}

export function upperBound(a: SchemaObject, b: SchemaObject, keyword: string, pointer: string): Reason[] {
  const bound = b[keyword];
  if (typeof bound !== 'number') return [];
  const own = a[keyword];
  return typeof own === 'number' && own <= bound
    ? []
    : [reason(pointer, 'bound-tightened', `${keyword} ${bound} is new or lower`)];
}

export function sameWhenSet(a: SchemaObject, b: SchemaObject, keyword: string, pointer: string): Reason[] {
  if (b[keyword] === undefined || a[keyword] === b[keyword]) return [];
  return [reason(pointer, `${keyword}-changed`, `${keyword} ${JSON.stringify(b[keyword])} is new or different`)];
}

type Bound = readonly [value: number, exclusive: boolean];

/** The lowest and highest value: draft-07 numeric `exclusive*`, draft-04 boolean ones. */
function bounds(schema: SchemaObject): { low?: Bound; high?: Bound } {
  const tighter = (current: Bound | undefined, candidate: Bound, lower: boolean): Bound => {
    if (!current) return candidate;
    if (candidate[0] === current[0]) return [candidate[0], candidate[1] || current[1]];
    return lower === candidate[0] > current[0] ? candidate : current;
  };
  let low: Bound | undefined;
  let high: Bound | undefined;
  if (typeof schema['minimum'] === 'number')
    low = tighter(low, [schema['minimum'], schema['exclusiveMinimum'] === true], true);
  if (typeof schema['exclusiveMinimum'] === 'number') low = tighter(low, [schema['exclusiveMinimum'], true], true);
  if (typeof schema['maximum'] === 'number')
    high = tighter(high, [schema['maximum'], schema['exclusiveMaximum'] === true], false);
  if (typeof schema['exclusiveMaximum'] === 'number') high = tighter(high, [schema['exclusiveMaximum'], true], false);
  return { ...(low ? { low } : {}), ...(high ? { high } : {}) };
}

/** `own` keeps at least as far inside as `other`: a higher low, or the same one and exclusive where `other` is not. */
function inside(own: Bound | undefined, other: Bound, lower: boolean): boolean {
  if (!own) return false;
  if (own[0] === other[0]) return own[1] || !other[1];
  return lower ? own[0] > other[0] : own[0] < other[0];
}

export function numericBounds(a: SchemaObject, b: SchemaObject, pointer: string): Reason[] {
  const own = bounds(a);
  const other = bounds(b);
  const reasons: Reason[] = [];
  if (other.low && !inside(own.low, other.low, true)) {
    reasons.push(
      reason(
        pointer,
        'bound-tightened',
        `the lowest value (${other.low[1] ? 'above ' : ''}${other.low[0]}) is new or higher`,
      ),
    );
  }
  if (other.high && !inside(own.high, other.high, false)) {
    reasons.push(
      reason(
        pointer,
        'bound-tightened',
        `the highest value (${other.high[1] ? 'below ' : ''}${other.high[0]}) is new or lower`,
      ),
    );
  }
  return reasons;
}

export function multipleOfReasons(a: SchemaObject, b: SchemaObject, pointer: string): Reason[] {
  const step = b['multipleOf'];
  if (typeof step !== 'number') return [];
  const own = a['multipleOf'];
  const divides = typeof own === 'number' && Number.isInteger(own / step);
  return divides || (step === 1 && a['type'] === 'integer')
    ? []
    : [reason(pointer, 'bound-tightened', `multipleOf ${step} is new or different`)];
}

/** Whether one value is valid under `schema`, for the keywords the comparison models (enum and const members). */
export function valueFits(value: JsonValue, schemaIn: unknown, root: JsonSchema): boolean {
  const schema = mergedAllOf(resolve(schemaIn, root));
  if (typeof schema === 'boolean') return schema;
  const values = enumValues(schema);
  if (values && !values.some((candidate) => deepEqual(candidate, value))) return false;
  const type = jsonTypeOf(value);
  const types = typesOf(schema);
  if (!types.includes(type) && !(type === 'integer' && types.includes('number'))) return false;
  if (Array.isArray(schema['anyOf']) && !schema['anyOf'].some((branch) => valueFits(value, branch, root))) return false;
  if (typeof value === 'string') {
    if (typeof schema['minLength'] === 'number' && [...value].length < schema['minLength']) return false;
    if (typeof schema['maxLength'] === 'number' && [...value].length > schema['maxLength']) return false;
    if (typeof schema['pattern'] === 'string' && !patternMatches(schema['pattern'], value)) return false;
  }
  if (typeof value === 'number') {
    const { low, high } = bounds(schema);
    if (low && (value < low[0] || (low[1] && value === low[0]))) return false;
    if (high && (value > high[0] || (high[1] && value === high[0]))) return false;
  }
  if (Array.isArray(value)) return value.every((item) => valueFits(item, schema['items'] ?? true, root));
  if (isObject(value)) {
    const properties = (isObject(schema['properties']) ? schema['properties'] : {}) as Record<string, unknown>;
    if (!stringList(schema['required']).every((name) => Object.hasOwn(value, name))) return false;
    return Object.entries(value).every(([name, member]) =>
      valueFits(
        member as JsonValue,
        Object.hasOwn(properties, name) ? properties[name] : (schema['additionalProperties'] ?? true),
        root,
      ),
    );
  }
  return true;
}

function jsonTypeOf(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** By RE2, as the ingest matches (issue 28, item 6): a published document's pattern never backtracks here either. */
function patternMatches(pattern: string, value: string): boolean {
  try {
    return linearPattern(pattern).test(value);
  } catch {
    return false;
  }
}
