/**
 * CloudEvents SQL Expression Language v1.0.0 (cloudevents/spec `cesql/spec.md`), Koerier's own
 * engine: `compileCesql(text)` parses and compiles an expression once; the result evaluates an
 * event's context attributes as often as needed. Used as the `sql` filter dialect of the
 * Subscriptions API (filters.ts) and by the route index (route-pins.ts).
 */
import { compileNode, type UnknownFunction } from './compile.js';
import { parseCesql } from './parser.js';
import type { CesqlNode } from './syntax.js';
import type { CesqlAttributes, CesqlErrorKind, CesqlValue, Evaluate, Scope } from './values.js';

export { CESQL_LIMITS } from './parser.js';
export { CesqlParseError, type CesqlNode } from './syntax.js';
export type { CesqlAttributes, CesqlErrorKind, CesqlValue } from './values.js';
export type { UnknownFunction } from './compile.js';

export interface CesqlResult {
  readonly value: CesqlValue;
  /** The first error raised (fail-fast), or undefined. */
  readonly error: CesqlErrorKind | undefined;
}

export interface CompiledCesql {
  readonly text: string;
  readonly tree: CesqlNode;
  /** Calls no built-in function answers; each raises a MissingFunctionError when evaluated. */
  readonly unknownFunctions: readonly UnknownFunction[];
  evaluate(attributes: CesqlAttributes): CesqlResult;
  /** The filter's answer (Subscriptions API 3.2.4.1.2): `true` and no error. */
  matches(attributes: CesqlAttributes): boolean;
}

/** Throws `CesqlParseError` for a text that is not a CESQL v1 expression within Koerier's bounds. */
export function compileCesql(text: string): CompiledCesql {
  const tree = parseCesql(text);
  const unknownFunctions: UnknownFunction[] = [];
  const root: Evaluate = compileNode(tree, unknownFunctions).evaluate;
  return {
    text,
    tree,
    unknownFunctions,
    evaluate(attributes) {
      const scope: Scope = { attributes, error: undefined };
      const value = root(scope);
      return { value, error: scope.error };
    },
    matches(attributes) {
      const scope: Scope = { attributes, error: undefined };
      return root(scope) === true && scope.error === undefined;
    },
  };
}
export { pinsOf, type AttributePin } from './pins.js';
