/**
 * Parses a CESQL v1 expression (spec section 2, precedence of section 3.6) into a syntax tree.
 * A precedence-climbing parser over the tokens, one token of look-ahead, no backtracking:
 * the work is linear in the text. Koerier's bounds: at most `CESQL_LIMITS.maxBytes` of UTF-8 and
 * `CESQL_LIMITS.maxDepth` levels of nesting (parentheses, function calls, NOT and `-`).
 *
 * Precedence, highest first: function calls; NOT; unary `-`; LIKE, EXISTS, IN; `* / %`; `+ -`;
 * comparisons; AND, OR, XOR. Equal precedence groups left to right.
 *
 * One deliberate restriction: AND, OR and XOR share one precedence level, and the spec's prose
 * ("left to right") and its ANTLR grammar (`<assoc=right>`) group a mix of them differently —
 * `a AND b OR c` is `(a AND b) OR c` by one and `a AND (b OR c)` by the other. A filter that the
 * subscriber and another CESQL engine read differently is worse than a refusal, so a mix of
 * different logic operators without parentheses is a parse error that says to add them.
 */
import { describe, tokenize, type Token } from './lexer.js';
import { CesqlParseError, type CesqlNode, type LogicOperator } from './syntax.js';
import { INT_MAX } from './values.js';

export const CESQL_LIMITS = { maxBytes: 4096, maxDepth: 32 } as const;

const KEYWORDS = new Set(['AND', 'OR', 'XOR', 'NOT', 'LIKE', 'EXISTS', 'IN', 'TRUE', 'FALSE']);
const LOGIC = new Set(['AND', 'OR', 'XOR']);
const COMPARISONS = new Set(['=', '!=', '<>', '<', '<=', '>', '>=']);
const IDENTIFIER = /^[a-z0-9]+$/;
const FUNCTION_NAME = /^[A-Z][A-Z_]*$/;

/** Throws `CesqlParseError` naming the position and what was expected there. */
export function parseCesql(text: string): CesqlNode {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > CESQL_LIMITS.maxBytes)
    throw new CesqlParseError(0, `at most ${CESQL_LIMITS.maxBytes} bytes of expression`, `${bytes} bytes`);
  const parser = new Parser(tokenize(text));
  const tree = parser.expression(0);
  parser.expectEnd();
  return tree;
}

/** Binding power of the binary and postfix operators; prefix operators bind tighter than all. */
function bindingPower(token: Token): number {
  const word = token.kind === 'word' ? token.text.toUpperCase() : undefined;
  if (word !== undefined && LOGIC.has(word)) return 1;
  if (token.kind !== 'symbol') return word === 'LIKE' || word === 'IN' || word === 'NOT' ? 5 : 0;
  if (COMPARISONS.has(token.text)) return 2;
  if (token.text === '+' || token.text === '-') return 3;
  if (token.text === '*' || token.text === '/' || token.text === '%') return 4;
  return 0;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  expression(minPower: number): CesqlNode {
    let left = this.unary();
    for (;;) {
      const token = this.peek();
      const power = bindingPower(token);
      if (power === 0 || power <= minPower) return left;
      if (power === 5) left = this.postfix(left);
      else if (power === 1) left = this.logicChain(left, token);
      else {
        this.index++;
        const right = this.expression(power);
        left =
          power === 2
            ? { kind: 'comparison', at: left.at, operator: token.text as '=', left, right }
            : { kind: 'arithmetic', at: left.at, operator: token.text as '+', left, right };
      }
    }
  }

  private logicChain(first: CesqlNode, opening: Token): CesqlNode {
    const operator = opening.text.toUpperCase() as LogicOperator;
    const operands = [first];
    while (this.peekWord() !== undefined && LOGIC.has(this.peekWord()!)) {
      const token = this.next();
      if (token.text.toUpperCase() !== operator)
        throw new CesqlParseError(
          token.at,
          `${operator} or parentheses (AND, OR and XOR have equal precedence in CESQL: write (a ${operator} b) ${token.text.toUpperCase()} c or a ${operator} (b ${token.text.toUpperCase()} c))`,
          token.text,
        );
      operands.push(this.expression(1));
    }
    return { kind: 'logic', at: first.at, operator, operands };
  }

  private postfix(operand: CesqlNode): CesqlNode {
    let negated = false;
    if (this.peekWord() === 'NOT') {
      this.index++;
      negated = true;
    }
    const keyword = this.next();
    const word = keyword.kind === 'word' ? keyword.text.toUpperCase() : '';
    if (word === 'LIKE') {
      const pattern = this.next();
      if (pattern.kind !== 'string')
        throw new CesqlParseError(pattern.at, 'a string literal as the LIKE pattern', found(pattern));
      return { kind: 'like', at: operand.at, operand, pattern: pattern.value!, negated };
    }
    if (word === 'IN') {
      this.expectSymbol('(', 'the ( that opens the IN set');
      const set = this.list('an expression in the IN set');
      if (set.length === 0) throw new CesqlParseError(this.peek().at, 'at least one value in the IN set', ')');
      return { kind: 'in', at: operand.at, operand, set, negated };
    }
    throw new CesqlParseError(keyword.at, negated ? 'LIKE or IN after NOT' : 'LIKE or IN', found(keyword));
  }

  private unary(): CesqlNode {
    const token = this.next();
    if (token.kind === 'symbol') return this.unarySymbol(token);
    if (token.kind === 'integer') return { kind: 'literal', at: token.at, value: integer(token, 1) };
    if (token.kind === 'string') return { kind: 'literal', at: token.at, value: token.value! };
    if (token.kind === 'end') throw new CesqlParseError(token.at, 'an expression', found(token));
    const word = token.text.toUpperCase();
    if (word === 'TRUE' || word === 'FALSE') return { kind: 'literal', at: token.at, value: word === 'TRUE' };
    if (word === 'NOT') return this.nested(() => ({ kind: 'not', at: token.at, operand: this.unary() }));
    if (word === 'EXISTS') {
      const name = this.next();
      if (name.kind !== 'word' || !IDENTIFIER.test(name.text.toLowerCase()) || KEYWORDS.has(name.text.toUpperCase()))
        throw new CesqlParseError(name.at, 'an attribute name after EXISTS', found(name));
      return { kind: 'exists', at: token.at, name: name.text.toLowerCase() };
    }
    if (KEYWORDS.has(word)) throw new CesqlParseError(token.at, 'an expression', found(token));
    if (this.peek().kind === 'symbol' && this.peek().text === '(') {
      if (!FUNCTION_NAME.test(word))
        throw new CesqlParseError(token.at, 'a function name of letters and underscores', found(token));
      this.index++;
      return this.nested(() => ({ kind: 'call', at: token.at, name: word, args: this.list('a function argument') }));
    }
    const name = token.text.toLowerCase();
    if (!IDENTIFIER.test(name))
      throw new CesqlParseError(token.at, 'an attribute name of a-z and 0-9, or a function call', found(token));
    return { kind: 'attribute', at: token.at, name };
  }

  private unarySymbol(token: Token): CesqlNode {
    if (token.text === '(') {
      const inner = this.nested(() => this.expression(0));
      this.expectSymbol(')', 'the ) that closes the ( at position ' + (token.at + 1));
      return inner;
    }
    const operand = this.peek();
    // A sign directly before digits is part of the integer literal (INTEGER_LITERAL), so
    // -2147483648 is a literal, not the negation of an out-of-range 2147483648.
    if ((token.text === '-' || token.text === '+') && operand.kind === 'integer') {
      this.index++;
      return { kind: 'literal', at: token.at, value: integer(operand, token.text === '-' ? -1 : 1) };
    }
    if (token.text === '-') return this.nested(() => ({ kind: 'negate', at: token.at, operand: this.unary() }));
    throw new CesqlParseError(token.at, 'an expression', found(token));
  }

  /** `(` already read: expressions separated by commas up to `)`; empty allowed. */
  private list(what: string): CesqlNode[] {
    const items: CesqlNode[] = [];
    if (this.peek().kind === 'symbol' && this.peek().text === ')') {
      this.index++;
      return items;
    }
    for (;;) {
      if (this.peek().kind === 'end') throw new CesqlParseError(this.peek().at, what, found(this.peek()));
      items.push(this.nested(() => this.expression(0)));
      const separator = this.next();
      if (separator.kind === 'symbol' && separator.text === ')') return items;
      if (separator.kind !== 'symbol' || separator.text !== ',')
        throw new CesqlParseError(separator.at, ', or )', found(separator));
    }
  }

  private nested<T>(parse: () => T): T {
    if (++this.depth > CESQL_LIMITS.maxDepth)
      throw new CesqlParseError(this.peek().at, `at most ${CESQL_LIMITS.maxDepth} levels of nesting`, 'more');
    const result = parse();
    this.depth--;
    return result;
  }

  expectEnd(): void {
    const token = this.peek();
    if (token.kind !== 'end')
      throw new CesqlParseError(token.at, 'an operator or the end of the expression', found(token));
  }

  private expectSymbol(symbol: string, expected: string): void {
    const token = this.next();
    if (token.kind !== 'symbol' || token.text !== symbol) throw new CesqlParseError(token.at, expected, found(token));
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private peekWord(): string | undefined {
    const token = this.peek();
    return token.kind === 'word' ? token.text.toUpperCase() : undefined;
  }

  private next(): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== 'end') this.index++;
    return token;
  }
}

function integer(token: Token, sign: 1 | -1): number {
  const value = sign * Number(token.text) || 0; // `-0` is 0
  if (value > INT_MAX || value < -INT_MAX - 1)
    throw new CesqlParseError(token.at, 'an integer from -2147483648 to 2147483647', token.text);
  return value;
}

function found(token: Token): string {
  return token.kind === 'end' ? 'the end of the expression' : describe(token.text);
}
