/**
 * Finds where values sit in a JSON text, so Koerier can pass them on byte for byte (CE-13)
 * instead of re-serialising what JSON.parse made of them, which would round integers beyond
 * 2^53, rewrite escapes and drop formatting. Every function expects text that
 * JSON.parse has already accepted, so it only has to find boundaries, not check syntax.
 */

export type Span = readonly [start: number, end: number];

/** JSON's structural characters, as the char codes the scanners here and in json-syntax.ts compare. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Just past the JSON whitespace (space, tab, LF, CR) at `i`. */
export function skipWhitespace(text: string, i: number): number {
  while (i < text.length && isWhitespace(text.charCodeAt(i))) i++;
  return i;
}

/** From the opening quote at `i` to just past the closing one. */
function skipString(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

// A string, and a run of characters that are neither quotes nor brackets.
const STRING = '"[^"\\\\]*(?:\\\\.[^"\\\\]*)*"';
const PLAIN = '[^"{}[\\]]';
/** An object or array with no object or array in it. */
const FLAT_VALUE = `[{[]${PLAIN}*(?:${STRING}${PLAIN}*)*[}\\]]`;
/**
 * From inside a nested value to its next bracket that is not in a string or a flat value, which
 * are passed over whole. One test of this per such bracket, in place of a charCodeAt per character
 * and an indexOf per string, walks the 4 KB data of the bench in about half the time (issue 15).
 * Unrolled (`plain* (special plain*)*`), every position has one way to match, so nothing is tried
 * twice; but V8 keeps a backtrack entry per string or flat value passed, and that stack overflowed
 * at 5.6 MB of tiny objects (fine at 4 MB): texts above PATTERN_SKIP_MAX_LENGTH take the loop.
 */
const TO_NEXT_BRACKET = new RegExp(`${PLAIN}*(?:(?:${STRING}|${FLAT_VALUE})${PLAIN}*)*`, 'y');
const PATTERN_SKIP_MAX_LENGTH = 256 * 1024;

/** From the `{` or `[` at `i` to just past its matching bracket. */
function skipNestedByPattern(text: string, i: number): number {
  let depth = 0;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (--depth === 0) return i + 1;
    TO_NEXT_BRACKET.lastIndex = i + 1;
    TO_NEXT_BRACKET.test(text);
    i = TO_NEXT_BRACKET.lastIndex;
  }
}

/** From the first character of a value at `i` to just past its end. */
function skipValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return skipString(text, i);
  if ((first === OPEN_BRACE || first === OPEN_BRACKET) && text.length <= PATTERN_SKIP_MAX_LENGTH)
    return skipNestedByPattern(text, i);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = skipString(text, i);
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
      i++;
    }
  }
  // A number or a literal runs until a delimiter.
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isWhitespace(c)) break;
    i++;
  }
  return i;
}

/** The span of each element of a top-level JSON array. */
export function arrayElementSpans(text: string): Span[] {
  const spans: Span[] = [];
  let i = skipWhitespace(text, 0) + 1;
  i = skipWhitespace(text, i);
  if (text.charCodeAt(i) === CLOSE_BRACKET) return spans;
  for (;;) {
    const end = skipValue(text, i);
    spans.push([i, end]);
    i = skipWhitespace(text, end);
    if (text.charCodeAt(i) !== COMMA) return spans;
    i = skipWhitespace(text, i + 1);
  }
}

/**
 * The span of the value of member `name` of a top-level JSON object, or undefined: all the text
 * between the colon and the next delimiter, whitespace around the value included, so that a body
 * spliced in verbatim (binary mode) comes out byte for byte. With duplicate names the last one
 * counts, as it does for JSON.parse.
 */
export function memberValueSpan(text: string, name: string): Span | undefined {
  return memberValueSpans(text, [name]).get(name);
}

/** The spans of several members at once, in one walk of the text (as `memberValueSpan` finds each). */
export function memberValueSpans(text: string, names: readonly string[]): Map<string, Span> {
  const found = new Map<string, Span>();
  let i = skipWhitespace(text, 0) + 1;
  i = skipWhitespace(text, i);
  if (text.charCodeAt(i) === CLOSE_BRACE) return found;
  for (;;) {
    const keyEnd = skipString(text, i);
    const raw = text.slice(i + 1, keyEnd - 1);
    const key = raw.includes('\\') ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return found;
    const start = i + 1;
    i = skipWhitespace(text, skipValue(text, skipWhitespace(text, start)));
    if (names.includes(key)) found.set(key, [start, i]);
    if (text.charCodeAt(i) !== COMMA) return found;
    i = skipWhitespace(text, i + 1);
  }
}

/**
 * The first member name that occurs twice in the JSON object starting at `start` (whitespace
 * before it allowed), or undefined. Top-level members only: nested values are skipped. Names are
 * compared after unescaping, so `"source"` and `"\u0073ource"` are the same name, as they are to
 * every JSON parser. RFC 8259 §4 leaves duplicates to the parser (first wins, last wins, error),
 * so an event with one cannot mean the same to Koerier and to every subscriber (review #7).
 */
export function duplicateMemberName(text: string, start = 0): string | undefined {
  let i = skipWhitespace(text, start);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return undefined;
  const seen = new Set<string>();
  for (;;) {
    const keyEnd = skipString(text, i);
    const raw = text.slice(i + 1, keyEnd - 1);
    const key = raw.includes('\\') ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
    if (seen.has(key)) return key;
    seen.add(key);
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return undefined;
    i = skipWhitespace(text, skipValue(text, skipWhitespace(text, i + 1)));
    if (text.charCodeAt(i) !== COMMA) return undefined;
    i = skipWhitespace(text, i + 1);
  }
}

/**
 * How many members the JSON object starting at `start` holds, duplicates counted each time. Next
 * to the parsed object's own keys it tells whether a name repeats (review #7) without collecting
 * the names: that collecting cost as much as JSON.parse itself on a small event (issue 15).
 */
export function topLevelMemberCount(text: string, start = 0): number {
  let i = skipWhitespace(text, start);
  if (text.charCodeAt(i) !== OPEN_BRACE) return 0;
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return 0;
  let count = 0;
  for (;;) {
    count++;
    i = skipWhitespace(text, skipString(text, i));
    if (text.charCodeAt(i) !== COLON) return count;
    i = skipWhitespace(text, skipValue(text, skipWhitespace(text, i + 1)));
    if (text.charCodeAt(i) !== COMMA) return count;
    i = skipWhitespace(text, i + 1);
  }
}
