/**
 * Splits a CESQL v1 expression into tokens (spec section 2; the upstream ANTLR lexer, applied to
 * the text case-insensitively as its notes say). Keywords are case-insensitive, and so are
 * identifiers: `EXISTS SOURCE` names `source`, as the TCK requires. One pass, no backtracking.
 */
import { CesqlParseError } from './syntax.js';

export type TokenKind = 'word' | 'integer' | 'string' | 'symbol' | 'end';

export interface Token {
  readonly kind: TokenKind;
  /** Words upper-cased (keywords, function names) and identifiers lower-cased are derived from it. */
  readonly text: string;
  /** String literals: the value, escapes resolved. */
  readonly value?: string;
  readonly at: number;
}

const SYMBOLS = ['!=', '<>', '>=', '<=', '(', ')', ',', '*', '/', '%', '+', '-', '=', '<', '>'];
const WORD_CHAR = /[A-Za-z0-9_]/;
const SPACE = new Set([' ', '\t', '\r', '\n']);

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (SPACE.has(c)) {
      i++;
      continue;
    }
    if (c === "'" || c === '"') {
      const { value, end } = stringLiteral(text, i);
      tokens.push({ kind: 'string', text: text.slice(i, end), value, at: i });
      i = end;
      continue;
    }
    if (WORD_CHAR.test(c)) {
      let end = i + 1;
      while (end < text.length && WORD_CHAR.test(text[end]!)) end++;
      const word = text.slice(i, end);
      tokens.push({ kind: /^[0-9]+$/.test(word) ? 'integer' : 'word', text: word, at: i });
      i = end;
      continue;
    }
    const symbol = SYMBOLS.find((s) => text.startsWith(s, i));
    if (symbol === undefined) throw new CesqlParseError(i, 'an operator, literal or identifier', describe(c));
    tokens.push({ kind: 'symbol', text: symbol, at: i });
    i += symbol.length;
  }
  tokens.push({ kind: 'end', text: '', at: text.length });
  return tokens;
}

/**
 * A `'…'` or `"…"` literal from `start`. Inside, `\` followed by the delimiter and a doubled
 * delimiter stand for the delimiter; any other backslash stays as written, so LIKE patterns keep
 * their `\%` and `\_` escapes (section 3.4.3).
 */
function stringLiteral(text: string, start: number): { value: string; end: number } {
  const quote = text[start]!;
  let value = '';
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      value += text[i + 1] === quote ? quote : c + text[i + 1];
      i += 2;
    } else if (c === quote) {
      if (text[i + 1] !== quote) return { value, end: i + 1 };
      value += quote;
      i += 2;
    } else {
      value += c;
      i++;
    }
  }
  throw new CesqlParseError(text.length, `the closing ${quote} of the string that starts at ${start + 1}`, 'the end');
}

export function describe(found: string): string {
  if (found === '') return 'the end of the expression';
  return JSON.stringify(found.length > 24 ? `${found.slice(0, 24)}…` : found);
}
