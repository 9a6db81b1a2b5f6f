/**
 * Turns a CESQL syntax tree into a tree of closures, once, so that evaluating an event walks no
 * syntax and parses nothing. Every closure follows the error rules of values.ts: after each
 * operand it checks `scope.error` and, if set, returns the zero value of its own type at once.
 */
import { builtinFunction, type ParameterType } from './functions.js';
import { compileLike } from './like.js';
import type { ArithmeticOperator, CesqlNode } from './syntax.js';
import {
  attributeValue,
  castTo,
  int32,
  raise,
  toBoolean,
  toInteger,
  toText,
  typeOf,
  ZERO,
  type CesqlType,
  type CesqlValue,
  type Evaluate,
  type Scope,
} from './values.js';

export interface CompiledNode {
  readonly evaluate: Evaluate;
  /** The static return type, when one can be told (an attribute's cannot). */
  readonly type: CesqlType | undefined;
}

/** A call that cannot be dispatched: a MissingFunctionError whenever evaluated (3.5). */
export interface UnknownFunction {
  readonly name: string;
  readonly arity: number;
  readonly at: number;
}

export function compileNode(node: CesqlNode, unknown: UnknownFunction[]): CompiledNode {
  switch (node.kind) {
    case 'literal': {
      const value = node.value;
      return { evaluate: () => value, type: typeOf(value) };
    }
    case 'attribute': {
      const name = node.name;
      const evaluate: Evaluate = (scope) => {
        const value = Object.hasOwn(scope.attributes, name) ? scope.attributes[name] : undefined;
        // Boolean is the type the spec assumes when the subexpression's cannot be told (3.2).
        if (value === undefined) return (raise(scope, 'missingAttribute'), false);
        return attributeValue(value);
      };
      return { evaluate, type: undefined };
    }
    case 'exists': {
      const name = node.name;
      return { evaluate: (scope) => Object.hasOwn(scope.attributes, name), type: 'Boolean' };
    }
    case 'not': {
      const operand = compileNode(node.operand, unknown).evaluate;
      return {
        evaluate: (scope) => {
          const value = operand(scope);
          return scope.error ? false : !toBoolean(scope, value);
        },
        type: 'Boolean',
      };
    }
    case 'negate': {
      const operand = compileNode(node.operand, unknown).evaluate;
      return {
        evaluate: (scope) => {
          const value = operand(scope);
          return scope.error ? 0 : int32(scope, -toInteger(scope, value));
        },
        type: 'Integer',
      };
    }
    case 'arithmetic':
      return compileArithmetic(node, unknown);
    case 'comparison':
      return compileComparison(node, unknown);
    case 'logic':
      return compileLogic(node, unknown);
    case 'like': {
      const operand = compileNode(node.operand, unknown).evaluate;
      const matches = compileLike(node.pattern);
      const negated = node.negated;
      return {
        evaluate: (scope) => {
          const value = operand(scope);
          return scope.error ? false : matches(toText(value)) !== negated;
        },
        type: 'Boolean',
      };
    }
    case 'in':
      return compileIn(node, unknown);
    case 'call':
      return compileCall(node, unknown);
  }
}

function compileArithmetic(node: Extract<CesqlNode, { kind: 'arithmetic' }>, unknown: UnknownFunction[]): CompiledNode {
  const left = compileNode(node.left, unknown).evaluate;
  const right = compileNode(node.right, unknown).evaluate;
  const apply = ARITHMETIC[node.operator];
  return {
    evaluate: (scope) => {
      const x = left(scope);
      if (scope.error) return 0;
      const y = right(scope);
      if (scope.error) return 0;
      return apply(scope, toInteger(scope, x), toInteger(scope, y));
    },
    type: 'Integer',
  };
}

const ARITHMETIC: Readonly<Record<ArithmeticOperator, (scope: Scope, x: number, y: number) => number>> = {
  '+': (scope, x, y) => int32(scope, x + y),
  '-': (scope, x, y) => int32(scope, x - y),
  // Both are 32-bit: a product in range is exact in a double, and one out of range is an overflow either way.
  '*': (scope, x, y) => int32(scope, x * y),
  '/': (scope, x, y) => (y === 0 ? (raise(scope, 'math'), 0) : int32(scope, Math.trunc(x / y))),
  '%': (scope, x, y) => (y === 0 ? (raise(scope, 'math'), 0) : int32(scope, x % y)),
};

function compileComparison(node: Extract<CesqlNode, { kind: 'comparison' }>, unknown: UnknownFunction[]): CompiledNode {
  const left = compileNode(node.left, unknown).evaluate;
  const right = compileNode(node.right, unknown).evaluate;
  const operator = node.operator;
  const equality = operator === '=' || operator === '!=' || operator === '<>';
  return {
    evaluate: (scope) => {
      const x = left(scope);
      if (scope.error) return false;
      const y = right(scope);
      if (scope.error) return false;
      if (equality) {
        // `=` is ambiguous (Boolean, Integer, String): the right operand's type picks the definition (3.7).
        const equal = (typeof x === typeof y ? x : castTo(scope, x, typeOf(y))) === y;
        return operator === '=' ? equal : !equal;
      }
      const a = toInteger(scope, x);
      const b = toInteger(scope, y);
      return operator === '<' ? a < b : operator === '<=' ? a <= b : operator === '>' ? a > b : a >= b;
    },
    type: 'Boolean',
  };
}

function compileLogic(node: Extract<CesqlNode, { kind: 'logic' }>, unknown: UnknownFunction[]): CompiledNode {
  const operands = node.operands.map((operand) => compileNode(operand, unknown).evaluate);
  const operator = node.operator;
  const evaluate: Evaluate =
    operator === 'XOR'
      ? (scope) => {
          let result = false;
          for (const operand of operands) {
            const value = operand(scope);
            if (scope.error) return false;
            result = result !== toBoolean(scope, value);
          }
          return result;
        }
      : (scope) => {
          // Short-circuit (3.6): AND stops at the first false, OR at the first true.
          const stopAt = operator === 'OR';
          for (const operand of operands) {
            const value = operand(scope);
            if (scope.error) return false;
            if (toBoolean(scope, value) === stopAt) return stopAt;
          }
          return !stopAt;
        };
  return { evaluate, type: 'Boolean' };
}

function compileIn(node: Extract<CesqlNode, { kind: 'in' }>, unknown: UnknownFunction[]): CompiledNode {
  const operand = compileNode(node.operand, unknown).evaluate;
  const set = node.set.map((item) => compileNode(item, unknown).evaluate);
  const negated = node.negated;
  return {
    evaluate: (scope) => {
      const x = operand(scope);
      if (scope.error) return false;
      // The left operand's type is the target type of every element (3.7); all are evaluated.
      const type = typeOf(x);
      let found = false;
      for (const item of set) {
        const y = item(scope);
        if (scope.error) return false;
        if (!found && (typeof y === typeof x ? y : castTo(scope, y, type)) === x) found = true;
      }
      return found !== negated;
    },
    type: 'Boolean',
  };
}

function compileCall(node: Extract<CesqlNode, { kind: 'call' }>, unknown: UnknownFunction[]): CompiledNode {
  const definition = builtinFunction(node.name, node.args.length);
  if (!definition) {
    unknown.push({ name: node.name, arity: node.args.length, at: node.at });
    return { evaluate: (scope) => (raise(scope, 'missingFunction'), false), type: 'Boolean' };
  }
  const args = node.args.map((arg) => compileNode(arg, unknown).evaluate);
  const types = node.args.map((_, i) => definition.parameters[i] ?? definition.rest!);
  const zero = ZERO[definition.returns];
  const call = definition.call;
  return {
    evaluate: (scope) => {
      const values: CesqlValue[] = [];
      for (const arg of args) {
        const value = arg(scope);
        if (scope.error) return zero;
        values.push(value);
      }
      for (let i = 0; i < values.length; i++) values[i] = cast(scope, values[i]!, types[i]!);
      return call(scope, values);
    },
    type: definition.returns,
  };
}

function cast(scope: Scope, value: CesqlValue, type: ParameterType): CesqlValue {
  return type === 'Any' ? value : castTo(scope, value, type);
}
