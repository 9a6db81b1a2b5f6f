/**
 * Parses the JSON text of one event in the JSON format (a structured body, HTTP-1) or of a batch
 * of them (HTTP-3) into their members, with `data` proven to be JSON but never built: Koerier forwards it as received
 * (CE-13) and never reads it, and building it was most of the time spent on an event with a few
 * kilobytes of data (issue 15). The same pass counts the top-level members, which review #7's
 * duplicate check compares with the parsed object's keys.
 */
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  skipWhitespace,
  topLevelMemberCount,
  type Span,
} from '../json-spans.js';
import { afterMemberName, afterScalarMember, jsonValueEnd } from '../json-syntax.js';
import { MALFORMED, parseJson } from './parse-results.js';

export interface ParsedEventObject {
  /** What JSON.parse makes of the text, except that an object or array `data` is an empty one of its kind. */
  readonly value: unknown;
  /** Top-level members in the text, a repeated name counted each time. */
  readonly members: number;
}

const DATA_NAME = '"data"';
/**
 * A shorter event is parsed whole and its members counted by the span scanner: there is too
 * little data to save, and proving each member's syntax on the way cost more than that scanner
 * (0.57 against 0.39 µs on the bench's small event; the two met at about 450 characters).
 */
const WHOLE_PARSE_MAX_LENGTH = 512;

interface ObjectLayout {
  /** Just past the closing brace. */
  readonly end: number;
  readonly members: number;
  /** The first `data` member's value, when it is an object or an array. */
  readonly data: Span | undefined;
}

/**
 * One pass over the top level of the object at `start`, every member's name and value proven to
 * be JSON on the way; undefined when that is not shown. A name written with escapes
 * (`"d\u0061ta"`) is not taken for `data`: that event is parsed whole, as before.
 */
function objectLayout(text: string, start: number): ObjectLayout | undefined {
  let i = skipWhitespace(text, start);
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined;
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return { end: i + 1, members: 0, data: undefined };
  let members = 0;
  let data: Span | undefined;
  for (;;) {
    let valueEnd = afterScalarMember(text, i);
    if (valueEnd === -1) {
      const valueStart = afterMemberName(text, i);
      if (valueStart === -1) return undefined;
      const end = jsonValueEnd(text, valueStart);
      if (end === undefined) return undefined;
      valueEnd = end;
      // The name is a whole JSON string, so one that starts with `"data"` ends there ("data_base64" does not).
      if (data === undefined && text.startsWith(DATA_NAME, i)) data = [valueStart, valueEnd];
    }
    members++;
    i = skipWhitespace(text, valueEnd);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) return { end: i + 1, members, data };
    if (c !== COMMA) return undefined;
    i = skipWhitespace(text, i + 1);
  }
}

/** The event object in `text`, or MALFORMED when `text` is not JSON. */
export function parseEventObject(text: string): ParsedEventObject | typeof MALFORMED {
  const layout = text.length > WHOLE_PARSE_MAX_LENGTH ? objectLayout(text, 0) : undefined;
  if (layout !== undefined && skipWhitespace(text, layout.end) === text.length) {
    const value = parseJson(withoutData(text, layout.data === undefined ? [] : [layout.data]));
    if (value !== MALFORMED) return { value, members: layout.members };
  }
  // Short, not shown to be an object, or (were the proof flawed) refused after all: JSON.parse
  // decides on the whole text, and refuses what is not JSON.
  const value = parseJson(text);
  return value === MALFORMED ? MALFORMED : { value, members: topLevelMemberCount(text) };
}

export interface ParsedEventBatch {
  /** What JSON.parse makes of the text, except that each member's object or array `data` is an empty one of its kind. */
  readonly value: unknown;
  /** Where each member's text is, and how many top-level members it has; when `value` is an array of objects and the text long enough. */
  readonly members?: { readonly spans: readonly Span[]; readonly counts: readonly number[] };
}

/**
 * A batch's JSON text (HTTP-3), each member read as parseEventObject reads one event. A member
 * that is no object, or not shown to be one, sends the whole batch to JSON.parse, and the caller
 * finds the members' spans and counts with the span scanner.
 */
export function parseEventBatch(text: string): ParsedEventBatch | typeof MALFORMED {
  const layout = text.length > WHOLE_PARSE_MAX_LENGTH ? arrayOfObjectsLayout(text) : undefined;
  if (layout !== undefined) {
    const value = parseJson(withoutData(text, layout.data));
    if (value !== MALFORMED) return { value, members: { spans: layout.spans, counts: layout.counts } };
  }
  const value = parseJson(text);
  return value === MALFORMED ? MALFORMED : { value };
}

/** Each object's span, member count and `data` in the top-level array of `text`, or undefined when `text` is not shown to be an array of objects. */
function arrayOfObjectsLayout(text: string): { spans: Span[]; counts: number[]; data: Span[] } | undefined {
  let i = skipWhitespace(text, 0);
  if (text.charCodeAt(i) !== OPEN_BRACKET) return undefined;
  i = skipWhitespace(text, i + 1);
  const spans: Span[] = [];
  const counts: number[] = [];
  const data: Span[] = [];
  if (text.charCodeAt(i) !== CLOSE_BRACKET) {
    for (;;) {
      const layout = objectLayout(text, i);
      if (layout === undefined) return undefined;
      spans.push([i, layout.end]);
      counts.push(layout.members);
      if (layout.data !== undefined) data.push(layout.data);
      i = skipWhitespace(text, layout.end);
      if (text.charCodeAt(i) === CLOSE_BRACKET) break;
      if (text.charCodeAt(i) !== COMMA) return undefined;
      i = skipWhitespace(text, i + 1);
    }
  }
  return skipWhitespace(text, i + 1) === text.length ? { spans, counts, data } : undefined;
}

/** `text` with each of the `data` spans, in order, replaced by an empty object or array of the same kind. */
function withoutData(text: string, data: readonly Span[]): string {
  if (data.length === 0) return text;
  let kept = '';
  let from = 0;
  for (const [start, end] of data) {
    kept += text.slice(from, start) + (text.charCodeAt(start) === OPEN_BRACE ? '{}' : '[]');
    from = end;
  }
  return kept + text.slice(from);
}
