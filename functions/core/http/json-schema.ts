/**
 * Request body schemas as plain JSON Schema objects, built by a few functions that also carry
 * the TypeScript type of the value a schema admits (`Infer<typeof schema>`), so the reader of a
 * body gets a typed value without a cast (issue 29 item 2). The objects are what the API
 * description shows, as they are.
 *
 * Why not TypeBox, which does the same: its builder alone bundles to 46 KB and with its compiler
 * to 93 KB, measured as 60 KB more in the ingest's cold-start bundle (which reads one body, the
 * upload request) and 111 KB more in the pull's (issue 27: a cold import is what a function pays
 * on every new container). Ajv is larger still. These builders and the checker
 * (json-schema-check.ts) are a few kilobytes and compile nothing; the checker is tested to agree
 * with Ajv on every body schema.
 */

declare const VALUE: unique symbol;
/** Marks a member that may be left out; a symbol, so the JSON of the schema never shows it. */
const OPTIONAL: unique symbol = Symbol('optional');

/** A JSON Schema object; `T` is the value it admits, for the type checker only. */
export interface JsonSchema<T = unknown> {
  readonly [VALUE]?: T;
  readonly [keyword: string]: unknown;
}

interface OptionalSchema<T> extends JsonSchema<T> {
  readonly [OPTIONAL]: true;
}

export type Infer<S> = S extends JsonSchema<infer T> ? T : never;

type Properties = Readonly<Record<string, JsonSchema>>;
type RequiredKeys<P extends Properties> = {
  [K in keyof P]: P[K] extends OptionalSchema<unknown> ? never : K;
}[keyof P];
type ObjectValue<P extends Properties> = {
  -readonly [K in RequiredKeys<P>]: Infer<P[K]>;
} & { -readonly [K in Exclude<keyof P, RequiredKeys<P>>]?: Infer<P[K]> };
type Flat<T> = { [K in keyof T]: T[K] };

/** Annotations and the keywords that are no type of their own. */
type Options = Readonly<Record<string, unknown>>;

export const schema = {
  object<P extends Properties>(properties: P, options: Options = {}): JsonSchema<Flat<ObjectValue<P>>> {
    const required = Object.keys(properties).filter((name) => !(OPTIONAL in properties[name]!));
    return { type: 'object', ...(required.length > 0 ? { required } : {}), properties, ...options };
  },
  optional<T>(member: JsonSchema<T>): OptionalSchema<T> {
    return { ...member, [OPTIONAL]: true } as OptionalSchema<T>;
  },
  integer(options: Options = {}): JsonSchema<number> {
    return { type: 'integer', ...options };
  },
  string(options: Options = {}): JsonSchema<string> {
    return { type: 'string', ...options };
  },
  array<T>(items: JsonSchema<T>, options: Options = {}): JsonSchema<T[]> {
    return { type: 'array', items, ...options };
  },
  literal<const V extends string | number | boolean>(value: V, options: Options = {}): JsonSchema<V> {
    return { type: typeof value === 'number' ? 'number' : typeof value, const: value, ...options };
  },
  anyOf<const V extends readonly JsonSchema[]>(variants: V, options: Options = {}): JsonSchema<Infer<V[number]>> {
    return { anyOf: variants, ...options };
  },
  /** A component of the API description the area checks in code (a filter): any value passes the schema. */
  reference(name: string, options: Options = {}): JsonSchema<unknown> {
    return { $ref: `#/components/schemas/${name}`, ...options };
  },
};
