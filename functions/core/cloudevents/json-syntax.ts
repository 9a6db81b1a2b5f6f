/**
 * Checks that text is JSON (RFC 8259) without building what it describes. Koerier never reads an
 * event's `data` (CE-13: it is forwarded byte for byte), yet JSON.parse would allocate every
 * object, array and string in it only to have them thrown away. Proving the syntax with a
 * pattern costs a quarter of that on the bench's 4 KB of data (issue 15), and leaves JSON.parse
 * only the attributes.
 *
 * Sound, not complete: what `jsonValueEnd` accepts, JSON.parse accepts. Where it cannot tell (a
 * text too long for the pattern's stack, a syntax error), the caller asks JSON.parse, which also
 * words the refusal; test/unit/cloudevents/json-syntax.test.ts holds the two to the same answers.
 */

import { COMMA, OPEN_BRACE, OPEN_BRACKET, skipWhitespace } from './json-spans.js';

const WHITESPACE = '[ \\t\\n\\r]*';
/** Any character but `"`, `\` and the controls JSON forbids raw; the escapes JSON defines. Unrolled: one way to match. */
const STRING = '"[^"\\\\\\x00-\\x1f]*(?:\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\\\\x00-\\x1f]*)*"';
const NUMBER = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?';
const SCALAR = `(?:${STRING}|${NUMBER}|true|false|null)`;
const VALUE_START = '(?=["\\-0-9tfn{[])';

/**
 * A value with at most `depth` levels of objects and arrays. Each member or element is followed
 * by a comma that a member or element must follow, or by a look at the closing bracket: one copy
 * of the inner value per container, so the source doubles per level instead of quadrupling.
 * Every alternative starts with its own character, so a position has one way to match and a
 * failing text is given up in linear time.
 */
function valueOfDepth(depth: number): string {
  if (depth === 0) return SCALAR;
  const inner = valueOfDepth(depth - 1);
  const object = `\\{${WHITESPACE}(?:${STRING}${WHITESPACE}:${WHITESPACE}${inner}${WHITESPACE}(?:,${WHITESPACE}(?=")|(?=\\})))*\\}`;
  const array = `\\[${WHITESPACE}(?:${inner}${WHITESPACE}(?:,${WHITESPACE}${VALUE_START}|(?=\\])))*\\]`;
  return `(?:${SCALAR}|${object}|${array})`;
}

/**
 * Three levels in one match, deeper ones by the loop below. V8 compiles a pattern on its first
 * use: this one in about 2.5 ms, a four-level one in 7 ms and a five-level one in 17 ms, which a
 * Lambda's first request would wait for, while matching the bench's data no faster.
 */
const SHALLOW_VALUE = new RegExp(valueOfDepth(3), 'y');
const MEMBER_NAME = new RegExp(`${STRING}${WHITESPACE}:${WHITESPACE}`, 'y');
/** A member whose value is a string, number or literal, as every attribute is: one match where a name and a value would take two. */
const SCALAR_MEMBER = new RegExp(`${STRING}${WHITESPACE}:${WHITESPACE}${SCALAR}`, 'y');

/**
 * V8 keeps a backtrack entry per repetition matched, and its stack is bounded: a longer text is
 * left to JSON.parse. The same bound as the span scanner's pattern (json-spans.ts).
 */
const MAX_PATTERN_TEXT_LENGTH = 256 * 1024;

/** `}` is `{` + 2 and `]` is `[` + 2. */
const CLOSING_OFFSET = 2;

/** Just past the member name, the colon and the whitespace after it at `i`, or -1 (also for a text too long for the patterns). */
export function afterMemberName(text: string, i: number): number {
  if (text.length > MAX_PATTERN_TEXT_LENGTH) return -1;
  MEMBER_NAME.lastIndex = i;
  return MEMBER_NAME.test(text) ? MEMBER_NAME.lastIndex : -1;
}

/** Just past the member at `i` (its name, colon and value) when its value is a string, number or literal; otherwise -1, as for a text too long for the patterns. */
export function afterScalarMember(text: string, i: number): number {
  if (text.length > MAX_PATTERN_TEXT_LENGTH) return -1;
  SCALAR_MEMBER.lastIndex = i;
  return SCALAR_MEMBER.test(text) ? SCALAR_MEMBER.lastIndex : -1;
}

/** Just past the value at `i` when the shallow pattern matches it whole, or -1. */
function afterShallowValue(text: string, i: number): number {
  SHALLOW_VALUE.lastIndex = i;
  return SHALLOW_VALUE.test(text) ? SHALLOW_VALUE.lastIndex : -1;
}

/**
 * Just past the JSON value that starts at `start` (no whitespace before it), or undefined when
 * that is not shown: no value there, or a text too long for the pattern. Nesting of any depth:
 * containers the shallow pattern cannot take whole are entered by a loop with its own stack.
 */
export function jsonValueEnd(text: string, start: number): number | undefined {
  if (text.length > MAX_PATTERN_TEXT_LENGTH) return undefined;
  let i = afterShallowValue(text, start);
  if (i !== -1) return i;
  /** The closing bracket each open container waits for. */
  const closers: number[] = [];
  i = start;
  for (;;) {
    // At a value the pattern refused: only a container too deep for it may still be one.
    const open = text.charCodeAt(i);
    if (open !== OPEN_BRACE && open !== OPEN_BRACKET) return undefined;
    closers.push(open + CLOSING_OFFSET);
    // Its first member or element: an empty container the pattern would have taken whole.
    i = skipWhitespace(text, i + 1);
    if (open === OPEN_BRACE && (i = afterMemberName(text, i)) === -1) return undefined;
    const first = afterShallowValue(text, i);
    if (first === -1) continue;
    i = first;
    // After a value inside the innermost open container: more of them, or its end.
    for (;;) {
      if (closers.length === 0) return i;
      i = skipWhitespace(text, i);
      const c = text.charCodeAt(i);
      if (c === closers[closers.length - 1]) {
        closers.pop();
        i++;
        continue;
      }
      if (c !== COMMA) return undefined;
      i = skipWhitespace(text, i + 1);
      if (closers[closers.length - 1] === OPEN_BRACE + CLOSING_OFFSET && (i = afterMemberName(text, i)) === -1)
        return undefined;
      const end = afterShallowValue(text, i);
      if (end === -1) break;
      i = end;
    }
  }
}

/** Whether `text` is shown to be one JSON value with optional whitespace around it; false means "ask JSON.parse". */
export function isProvenJsonText(text: string): boolean {
  const end = jsonValueEnd(text, skipWhitespace(text, 0));
  return end !== undefined && skipWhitespace(text, end) === text.length;
}
