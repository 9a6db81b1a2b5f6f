/**
 * CESQL v1 values and casts (spec sections 3.1, 3.3 and 3.7). A value is a JavaScript boolean, a
 * number that is a 32-bit integer, or a string; the evaluator never sees anything else.
 *
 * Errors follow the spec's fail-fast mode (section 4.1) as the TCK expects it: the node where an
 * error arises still returns the value the spec gives it (`ABS(-2147483648)` is 2147483647, `5 / 0`
 * is 0, `NOT 10` casts 10 to `false` and is `true`), and every node above it returns the zero value
 * of its own type without evaluating anything more. `Scope.error` holds the first error; a filter
 * matches only when the result is `true` and no error was raised (Subscriptions API 3.2.4.1.2).
 */
export type CesqlValue = boolean | number | string;

export type CesqlType = 'Boolean' | 'Integer' | 'String';

/** The error kinds of spec section 3.3, spelled as the TCK spells them. */
export type CesqlErrorKind =
  'parse' | 'math' | 'cast' | 'missingAttribute' | 'missingFunction' | 'functionEvaluation' | 'generic';

/** An event's context attributes as CESQL reads them (never `data`: CESQL cannot address it). */
export type CesqlAttributes = Readonly<Record<string, string | number | boolean>>;

export interface Scope {
  readonly attributes: CesqlAttributes;
  error: CesqlErrorKind | undefined;
}

/** A compiled expression node. */
export type Evaluate = (scope: Scope) => CesqlValue;

export const INT_MIN = -2147483648;
export const INT_MAX = 2147483647;

export const ZERO: Readonly<Record<CesqlType, CesqlValue>> = { Boolean: false, Integer: 0, String: '' };

export function raise(scope: Scope, kind: CesqlErrorKind): void {
  scope.error ??= kind;
}

export function typeOf(value: CesqlValue): CesqlType {
  return typeof value === 'string' ? 'String' : typeof value === 'number' ? 'Integer' : 'Boolean';
}

/** Arithmetic results out of the 32-bit range saturate and raise a MathError, as ABS does. */
export function int32(scope: Scope, value: number): number {
  if (value > INT_MAX) return (raise(scope, 'math'), INT_MAX);
  if (value < INT_MIN) return (raise(scope, 'math'), INT_MIN);
  return value === 0 ? 0 : value; // never -0: `0 * -1` is the integer 0
}

const DECIMAL = /^[+-]?[0-9]+$/;

/** String -> Integer (3.7): base 10, optional sign; anything else or an overflow is a CastError and 0. */
export function parseInteger(text: string): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const value = Number(text);
  return value >= INT_MIN && value <= INT_MAX ? value : undefined;
}

export function toInteger(scope: Scope, value: CesqlValue): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  const parsed = parseInteger(value);
  if (parsed === undefined) return (raise(scope, 'cast'), 0);
  return parsed;
}

export function toText(value: CesqlValue): string {
  return typeof value === 'string' ? value : String(value);
}

/**
 * The implicit cast to Boolean an operator (NOT, AND, OR, XOR, `=` against a Boolean) applies.
 * Integer -> Boolean is a CastError here, as the TCK's `NOT 10` case requires; the explicit
 * `BOOL(x)` applies the casting table instead (`toBooleanExplicit`).
 */
export function toBoolean(scope: Scope, value: CesqlValue): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
  }
  return (raise(scope, 'cast'), false);
}

export function toBooleanExplicit(scope: Scope, value: CesqlValue): boolean {
  return typeof value === 'number' ? value !== 0 : toBoolean(scope, value);
}

/** Casts `value` to `type` implicitly (`=` and `IN` take the target type from one operand). */
export function castTo(scope: Scope, value: CesqlValue, type: CesqlType): CesqlValue {
  if (type === 'String') return toText(value);
  if (type === 'Integer') return toInteger(scope, value);
  return toBoolean(scope, value);
}

/**
 * An attribute's value as CESQL sees it (3.2): Booleans, 32-bit integers and strings as they are;
 * any other value (a number out of range, a fraction) as its string.
 */
export function attributeValue(value: string | number | boolean): CesqlValue {
  if (typeof value === 'number' && !(Number.isInteger(value) && value >= INT_MIN && value <= INT_MAX))
    return String(value);
  return value;
}
