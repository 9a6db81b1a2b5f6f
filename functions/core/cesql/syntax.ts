/**
 * The syntax tree of a CESQL v1 expression (spec section 2), as the parser builds it and the
 * compiler and the route index read it. `at` is the 0-based offset of the node's first character.
 */
import type { CesqlValue } from './values.js';

export type ArithmeticOperator = '+' | '-' | '*' | '/' | '%';
export type ComparisonOperator = '=' | '!=' | '<>' | '<' | '<=' | '>' | '>=';
export type LogicOperator = 'AND' | 'OR' | 'XOR';

export type CesqlNode =
  | { readonly kind: 'literal'; readonly at: number; readonly value: CesqlValue }
  | { readonly kind: 'attribute'; readonly at: number; readonly name: string }
  | { readonly kind: 'exists'; readonly at: number; readonly name: string }
  | { readonly kind: 'not'; readonly at: number; readonly operand: CesqlNode }
  | { readonly kind: 'negate'; readonly at: number; readonly operand: CesqlNode }
  | {
      readonly kind: 'arithmetic';
      readonly at: number;
      readonly operator: ArithmeticOperator;
      readonly left: CesqlNode;
      readonly right: CesqlNode;
    }
  | {
      readonly kind: 'comparison';
      readonly at: number;
      readonly operator: ComparisonOperator;
      readonly left: CesqlNode;
      readonly right: CesqlNode;
    }
  /** A chain of one logic operator, left to right: `a AND b AND c` is one node of three operands. */
  | { readonly kind: 'logic'; readonly at: number; readonly operator: LogicOperator; readonly operands: CesqlNode[] }
  | {
      readonly kind: 'like';
      readonly at: number;
      readonly operand: CesqlNode;
      readonly pattern: string;
      readonly negated: boolean;
    }
  | {
      readonly kind: 'in';
      readonly at: number;
      readonly operand: CesqlNode;
      readonly set: readonly CesqlNode[];
      readonly negated: boolean;
    }
  | { readonly kind: 'call'; readonly at: number; readonly name: string; readonly args: readonly CesqlNode[] };

/** A text that is not a CESQL v1 expression (a ParseError), or one over Koerier's bounds. */
export class CesqlParseError extends Error {
  constructor(
    /** 0-based offset in the expression. */
    readonly position: number,
    /** What the parser expected there, for the caller to read. */
    readonly expected: string,
    /** What it found instead. */
    readonly found: string,
  ) {
    super(`at position ${position + 1}: expected ${expected}, found ${found}`);
    this.name = 'CesqlParseError';
  }
}
