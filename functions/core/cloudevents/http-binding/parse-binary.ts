/** HTTP-2, binary mode: the attributes in ce- headers, the data in the body. */
import { isAscii, isUtf8 } from 'node:buffer';
import { mediaTypeOf } from '../../http/messages.js';
import { acceptedEvent } from '../accepted-event.js';
import { charsetOf, isHeaderText, isJsonMediaType, isTextualMediaType } from '../attribute-syntax.js';
import { type Attributes, checkEvent } from '../event-validation.js';
import { IssueCollector } from '../issue-collector.js';
import { isProvenJsonText } from '../json-syntax.js';
import {
  eventTooLarge,
  fail,
  invalid,
  MALFORMED,
  malformedJson,
  parseJson,
  requireWithinLimit,
  type ParseOptions,
  type ParsedEvents,
  utf8Text,
} from './parse-results.js';

/**
 * HTTP-2: every attribute in a ce- header (percent-decoded), Content-Type is datacontenttype and
 * the body is the data. The event is rebuilt in the JSON format: attributes in header order,
 * then `data` — JSON bodies spliced in verbatim, decodable text as a string — or `data_base64`.
 */
export function parseBinary(
  ceHeaders: [string, string][],
  contentType: string | undefined,
  body: Buffer,
  options: ParseOptions,
): ParsedEvents {
  // The event carries the body at least byte for byte (as JSON or text) or larger (as base64).
  if (body.length > options.maxEventBytes) throw fail(eventTooLarge(body.length, options));
  const issues = new IssueCollector();
  const event: Record<string, string> = {};
  // Whether every value went in as it came (PLAIN_HEADER_VALUE).
  let plain = true;
  for (const [name, value] of ceHeaders) {
    if (issues.stopped) break;
    if (name === 'datacontenttype') {
      // HTTP binding §3.1.1: in binary mode datacontenttype MUST be carried by Content-Type, and
      // a ce-datacontenttype header MUST NOT be present (review #4).
      issues.error(
        name,
        'binary-content-type',
        'HTTP-2',
        'In binary mode the Content-Type header carries datacontenttype; a ce-datacontenttype header must not be present (HTTP binding §3.1.1).',
      );
    } else if (name === 'data' || name === 'data_base64') {
      issues.error(name, 'binary-data', 'HTTP-2', 'In binary mode the data is the request body, not a ce- header.');
    } else if (PLAIN_HEADER_VALUE.test(value)) {
      setMember(event, name, value);
    } else if (!isHeaderText(value)) {
      issues.error(
        name,
        'header-characters',
        'HTTP-2',
        `The ce-${printableName(name)} header holds characters outside printable US-ASCII; other characters must be percent-encoded UTF-8 (HTTP binding §3.1.3.2).`,
      );
    } else if (value.includes(',')) {
      // Issue 28: API Gateway (payload format 2.0) joins repeated header lines with commas, and
      // so does the laptop's local/api-gateway.ts; the value is kept so the rest is still judged.
      issues.error(
        name,
        'repeated-header',
        'HTTP-2',
        `The ce-${printableName(name)} header came more than once or holds a raw comma. Each attribute travels in one header (HTTP binding §3.1.3), and API Gateway joins repeated header lines with commas, so the two cannot be told apart: send the header once, with any comma in its value percent-encoded as %2C.`,
      );
      setMember(event, name, value);
    } else {
      plain = false;
      setMember(event, name, percentDecoded(name, unquoted(name, value, issues), issues));
    }
  }
  if (contentType === '') {
    // Issue 28: HTTP binding §3.1.1 — Content-Type is datacontenttype, and an empty one is no media type.
    issues.error(
      'datacontenttype',
      'media-type',
      'CE-7',
      'The Content-Type header is empty. In binary mode it is the datacontenttype (HTTP binding §3.1.1), which must be an RFC 2046 media type: send one, or leave the header out when the data has no type.',
    );
  } else if (contentType !== undefined) {
    event['datacontenttype'] = contentType;
    plain &&= PLAIN_HEADER_VALUE.test(contentType);
  }
  const attributes = checkEvent(event, issues, plain)!;
  const data = binaryDataMember(body, contentType);
  if (issues.errors.length > 0) {
    if (data === MALFORMED)
      issues.error(
        'data',
        'json-data',
        'HTTP-2',
        `The body is not valid JSON although Content-Type is '${mediaTypeOf(contentType)}'.`,
      );
    throw invalid(issues);
  }
  if (data === MALFORMED) throw fail(malformedJson(`Content-Type '${mediaTypeOf(contentType)}' says it is.`));
  // A value that was decoded or needs escaping: one JSON.stringify of the whole record, in the
  // same member order as a walk over it (a call per attribute and the concatenation of their
  // results took a tenth of binary mode's time).
  const members = plain ? unescapedMembers(attributes) : JSON.stringify(attributes).slice(1, -1);
  const accepted = acceptedEvent(attributes, `{${members}${data}}`);
  requireWithinLimit(accepted, options);
  return { mode: 'binary', events: [accepted], warnings: issues.warnings };
}

/**
 * A header value taken as it is: printable US-ASCII without `%` (nothing to percent-decode), `"`
 * (no quoted string to unescape) or `\` (nothing to escape in JSON), so it also meets CE-2's
 * character rule, and without `,` (what a repeated header becomes, issue 28). Nearly every ce-
 * header is one, and one test of this pattern replaced three passes over the value: the header
 * character check, CE-2's and JSON.stringify's (issue 15: together a third of a small event's profile).
 */
const PLAIN_HEADER_VALUE = /^[\x20\x21\x23\x24\x26-\x2b\x2d-\x5b\x5d-\x7e]*$/;

/**
 * The attributes' members as JSON text, when every value is a string that needs no escaping
 * (PLAIN_HEADER_VALUE) and every name is a valid one (a-z, 0-9; invalid names are errors): what
 * JSON.stringify writes between the braces, in the same order, without its per-character work.
 */
function unescapedMembers(attributes: Attributes): string {
  let members = '';
  for (const name in attributes) {
    const member = `"${name}":"${attributes[name] as string}"`;
    members = members === '' ? member : `${members},${member}`;
  }
  return members;
}

/**
 * A plain object, not one without a prototype: V8 keeps those as dictionaries, which made every
 * member write and the validation's walk over them several times slower. A `ce-__proto__` header
 * still becomes an own member (that validation rejects, CE-1) instead of setting the prototype.
 */
function setMember(event: Record<string, string>, name: string, value: string): void {
  if (name === '__proto__')
    Object.defineProperty(event, name, { value, enumerable: true, writable: true, configurable: true });
  else event[name] = value;
}

/**
 * HTTP binding §3.1.3.2: header values are percent-encoded UTF-8, and sequences that are not
 * valid UTF-8 (overlong forms such as %C0%A0, surrogates, stray continuation bytes) MUST be
 * rejected. decodeURIComponent implements exactly that decoding and throws on all of them.
 */
function percentDecoded(name: string, value: string, issues: IssueCollector): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    issues.error(
      name,
      'percent-encoding',
      'HTTP-2',
      `The ce-${printableName(name)} header is not valid percent-encoded UTF-8.`,
    );
    return value;
  }
}

const DOUBLE_QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * HTTP binding §3.1.3.2: a received header value "MUST first be unescaped with respect to
 * double-quoted strings" (RFC 7230 §3.2.6, now RFC 9110 §5.6.4), and only then percent-decoded.
 * A value that begins with `"` is a quoted-string: it ends at its closing `"`, with nothing after
 * it, and a backslash pair stands for the character after the backslash; `""` is the empty
 * string. A value that does not begin with `"` is taken as it is (older producers sent a raw `"`
 * inside a value). A quoted value without its closing quote, or with text after it (`"a"b"`), is
 * refused and kept as sent (issue 28).
 */
function unquoted(name: string, value: string, issues: IssueCollector): string {
  if (value.charCodeAt(0) !== DOUBLE_QUOTE) return value;
  let text = '';
  for (let i = 1; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === BACKSLASH && i + 1 < value.length) text += value[++i];
    else if (c === DOUBLE_QUOTE) {
      if (i === value.length - 1) return text;
      break;
    } else if (c === BACKSLASH) break;
    else text += value[i];
  }
  issues.error(
    name,
    'quoted-string',
    'HTTP-2',
    `The ce-${printableName(name)} header begins with a double quote but is not one quoted string (RFC 9110 §5.6.4): it needs its closing quote at the end, and a double quote inside it escaped as \\" — or, as the HTTP binding asks of senders (§3.1.3.2), percent-encoded as %22.`,
  );
  return value;
}

/** Header names in messages, cut short: a client may send a very long one. */
function printableName(name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}…` : name;
}

/** The `,"data":…` or `,"data_base64":…` member for a binary-mode body; empty when there is no body. */
function binaryDataMember(body: Buffer, contentType: string | undefined): string | typeof MALFORMED {
  if (body.length === 0) return '';
  const mediaType = mediaTypeOf(contentType);
  if (isJsonMediaType(mediaType)) {
    const text = utf8Text(body);
    if (text === undefined) return MALFORMED;
    // Proven JSON needs no JSON.parse, whose objects would only be thrown away (issue 15).
    return isProvenJsonText(text) || parseJson(text) !== MALFORMED ? `,"data":${text}` : MALFORMED;
  }
  if (isTextualMediaType(mediaType) && isDecodableText(body, charsetOf(contentType!))) {
    return `,"data":${JSON.stringify(body.toString('utf8'))}`;
  }
  return `,"data_base64":"${body.toString('base64')}"`;
}

/** Only UTF-8 and its subset US-ASCII are decoded; other charsets keep their bytes (data_base64). */
function isDecodableText(body: Buffer, charset: string | undefined): boolean {
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8') return isUtf8(body);
  if (charset === 'us-ascii') return isAscii(body);
  return false;
}
