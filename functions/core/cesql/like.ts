/**
 * The LIKE operator's pattern (spec section 3.4.3), compiled once into a matcher that runs in
 * O(length of value × length of pattern) at worst and never backtracks: `%` splits the pattern
 * into segments of fixed shape; the first is anchored at the start, the last at the end, and each
 * one between is taken at its leftmost place after the previous — for `%` wildcards the leftmost
 * place is always as good as any later one, so no choice is ever revisited.
 *
 * `_` is one character: a code point, so a surrogate pair is one character, as in LENGTH.
 * `\%`, `\_` and `\\` stand for `%`, `_` and `\`; any other backslash is itself.
 */
const ANY_ONE = 0;
type Part = string | typeof ANY_ONE;
type Segment = readonly Part[];

export type LikeMatcher = (value: string) => boolean;

export function compileLike(pattern: string): LikeMatcher {
  const segments = segmentsOf(pattern);
  if (segments.length === 1) {
    const only = segments[0]!;
    if (only.every((part) => part !== ANY_ONE)) {
      const exact = only.join('');
      return (value) => value === exact;
    }
    return (value) => matchForward(value, 0, only) === value.length;
  }
  const first = segments[0]!;
  const last = segments[segments.length - 1]!;
  const middle = segments.slice(1, -1).filter((segment) => segment.length > 0);
  if (middle.length === 0 && isPlain(first) && isPlain(last)) {
    const prefix = first.join('');
    const suffix = last.join('');
    return (value) =>
      value.length >= prefix.length + suffix.length && value.startsWith(prefix) && value.endsWith(suffix);
  }
  return (value) => {
    let at = matchForward(value, 0, first);
    if (at < 0) return false;
    const lastStart = matchBackward(value, value.length, last);
    if (lastStart < at) return false;
    for (const segment of middle) {
      const end = findLeftmost(value, at, lastStart, segment);
      if (end < 0) return false;
      at = end;
    }
    return true;
  };
}

function isPlain(segment: Segment): boolean {
  return segment.every((part) => part !== ANY_ONE);
}

function segmentsOf(pattern: string): Segment[] {
  const segments: Part[][] = [[]];
  let literal = '';
  const flush = () => {
    if (literal !== '') segments[segments.length - 1]!.push(literal);
    literal = '';
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const escaped = pattern[i + 1];
    if (c === '\\' && (escaped === '%' || escaped === '_' || escaped === '\\')) {
      literal += escaped;
      i++;
    } else if (c === '%') {
      flush();
      segments.push([]);
    } else if (c === '_') {
      flush();
      segments[segments.length - 1]!.push(ANY_ONE);
    } else literal += c;
  }
  flush();
  return segments;
}

/** The end of `segment` matched at `at`, or -1. */
function matchForward(value: string, at: number, segment: Segment): number {
  for (const part of segment) {
    if (part === ANY_ONE) {
      if (at >= value.length) return -1;
      at += isPairAt(value, at) ? 2 : 1;
    } else {
      if (!value.startsWith(part, at)) return -1;
      at += part.length;
    }
  }
  return at;
}

/** The start of `segment` matched so that it ends at `end`, or -1. */
function matchBackward(value: string, end: number, segment: Segment): number {
  for (let i = segment.length - 1; i >= 0; i--) {
    const part = segment[i]!;
    if (part === ANY_ONE) {
      if (end <= 0) return -1;
      end -= end >= 2 && isPairAt(value, end - 2) ? 2 : 1;
    } else {
      if (end < part.length || !value.endsWith(part, end)) return -1;
      end -= part.length;
    }
  }
  return end;
}

/** The end of the leftmost match of `segment` that starts at or after `from` and ends by `limit`, or -1. */
function findLeftmost(value: string, from: number, limit: number, segment: Segment): number {
  const lead = segment[0];
  for (let at = from; at <= limit; at++) {
    if (typeof lead === 'string') {
      at = value.indexOf(lead, at);
      if (at < 0 || at > limit) return -1;
    } else if (at > from && isPairAt(value, at - 1)) continue; // not inside a surrogate pair
    const end = matchForward(value, at, segment);
    if (end >= 0 && end <= limit) return end;
  }
  return -1;
}

function isPairAt(value: string, at: number): boolean {
  const high = value.charCodeAt(at);
  const low = value.charCodeAt(at + 1);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}

/**
 * What a pattern pins without wildcards inside: `{ exact }` for one with no wildcard at all,
 * `{ prefix }` for literal text followed only by `%`s; undefined for any other pattern.
 */
export function likeAnchor(pattern: string): { readonly exact: string } | { readonly prefix: string } | undefined {
  const segments = segmentsOf(pattern);
  const first = segments[0]!;
  if (!isPlain(first)) return undefined;
  if (segments.length === 1) return { exact: first.join('') };
  return segments.slice(1).every((segment) => segment.length === 0) ? { prefix: first.join('') } : undefined;
}
