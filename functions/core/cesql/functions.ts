/**
 * The built-in functions of CESQL v1 (spec section 3.5), looked up by upper-case name and arity.
 * Each states its parameter types (arguments are cast to them before the call, section 3.7) and
 * its return type (its zero value is the answer when an argument raised an error). Characters are
 * code points: a surrogate pair is one character for LENGTH, LEFT, RIGHT and SUBSTRING.
 */
import {
  INT_MAX,
  INT_MIN,
  raise,
  toBooleanExplicit,
  toInteger,
  toText,
  type CesqlType,
  type CesqlValue,
  type Scope,
} from './values.js';

/** `Any`: the function takes the value as it is (the casting functions). */
export type ParameterType = CesqlType | 'Any';

export interface BuiltinFunction {
  readonly parameters: readonly ParameterType[];
  /** The type of every argument after `parameters` (variadic functions), if any may follow. */
  readonly rest?: ParameterType;
  readonly returns: CesqlType;
  readonly call: (scope: Scope, args: CesqlValue[]) => CesqlValue;
}

const SURROGATE = /[\ud800-\udfff]/;

function characters(text: string): string[] | undefined {
  return SURROGATE.test(text) ? Array.from(text) : undefined;
}

function length(text: string): number {
  return characters(text)?.length ?? text.length;
}

/** Characters `[from, to)` of `text`, counted in code points. */
function slice(text: string, from: number, to?: number): string {
  const chars = characters(text);
  return chars ? chars.slice(from, to).join('') : text.slice(from, to);
}

/** Unicode White_Space (the TRIM of section 3.5.1); every one is in the Basic Multilingual Plane. */
const WHITE_SPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
  0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

function trim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && WHITE_SPACE.has(text.charCodeAt(start))) start++;
  while (end > start && WHITE_SPACE.has(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

function substring(scope: Scope, text: string, pos: number, len?: number): string {
  const size = length(text);
  if (pos > size || pos < -size || (len !== undefined && len < 0)) return (raise(scope, 'functionEvaluation'), '');
  if (pos === 0) return '';
  const from = pos > 0 ? pos - 1 : size + pos;
  return slice(text, from, len === undefined ? undefined : Math.min(size, from + len));
}

const str = (args: CesqlValue[], i: number) => args[i] as string;
const int = (args: CesqlValue[], i: number) => args[i] as number;

const BUILTINS: Readonly<Record<string, readonly BuiltinFunction[]>> = {
  LENGTH: [{ parameters: ['String'], returns: 'Integer', call: (_, a) => length(str(a, 0)) }],
  CONCAT: [{ parameters: [], rest: 'String', returns: 'String', call: (_, a) => (a as string[]).join('') }],
  CONCAT_WS: [
    {
      parameters: ['String'],
      rest: 'String',
      returns: 'String',
      call: (_, a) => (a.slice(1) as string[]).join(str(a, 0)),
    },
  ],
  LOWER: [{ parameters: ['String'], returns: 'String', call: (_, a) => str(a, 0).toLowerCase() }],
  UPPER: [{ parameters: ['String'], returns: 'String', call: (_, a) => str(a, 0).toUpperCase() }],
  TRIM: [{ parameters: ['String'], returns: 'String', call: (_, a) => trim(str(a, 0)) }],
  LEFT: [
    {
      parameters: ['String', 'Integer'],
      returns: 'String',
      call: (s, a) => (int(a, 1) < 0 ? (raise(s, 'functionEvaluation'), str(a, 0)) : slice(str(a, 0), 0, int(a, 1))),
    },
  ],
  RIGHT: [
    {
      parameters: ['String', 'Integer'],
      returns: 'String',
      call: (s, a) => {
        const [text, count] = [str(a, 0), int(a, 1)];
        if (count < 0) return (raise(s, 'functionEvaluation'), text);
        const size = length(text);
        return count >= size ? text : slice(text, size - count);
      },
    },
  ],
  SUBSTRING: [
    { parameters: ['String', 'Integer'], returns: 'String', call: (s, a) => substring(s, str(a, 0), int(a, 1)) },
    {
      parameters: ['String', 'Integer', 'Integer'],
      returns: 'String',
      call: (s, a) => substring(s, str(a, 0), int(a, 1), int(a, 2)),
    },
  ],
  ABS: [
    {
      parameters: ['Integer'],
      returns: 'Integer',
      call: (s, a) => (int(a, 0) === INT_MIN ? (raise(s, 'math'), INT_MAX) : Math.abs(int(a, 0))),
    },
  ],
  INT: [{ parameters: ['Any'], returns: 'Integer', call: (s, a) => toInteger(s, a[0]!) }],
  BOOL: [{ parameters: ['Any'], returns: 'Boolean', call: (s, a) => toBooleanExplicit(s, a[0]!) }],
  STRING: [{ parameters: ['Any'], returns: 'String', call: (_, a) => toText(a[0]!) }],
};

/** The definition a call of `name` with `arity` arguments dispatches to, if there is one. */
export function builtinFunction(name: string, arity: number): BuiltinFunction | undefined {
  const overloads = Object.hasOwn(BUILTINS, name) ? BUILTINS[name]! : [];
  return (
    overloads.find((f) => f.parameters.length === arity && f.rest === undefined) ??
    overloads.find((f) => f.rest !== undefined && arity >= f.parameters.length)
  );
}
