/**
 * The lexical rules of the CloudEvents type system (NL GOV profile 1.1 §3.2, seed 001) and of the
 * attributes whose values have a grammar of their own. Every pattern is compiled once, at module
 * load: validation runs on every ingested event and must stay cheap.
 */
import { mediaTypeOf } from '../http/messages.js';

/** CE-1 (§3.1): attribute names are lower-case ASCII letters and digits only. A loop: it runs for every member of every event. */
export function isAttributeName(name: string): boolean {
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39))) return false;
  }
  return true;
}
/** CE-1 (§3.1): names SHOULD NOT exceed 20 characters. */
export const MAX_RECOMMENDED_NAME_LENGTH = 20;

/**
 * CE-2 (§3.2 String): no control characters U+0000-U+001F and U+007F-U+009F (exactly `\p{Cc}`),
 * no Unicode noncharacters, no unpaired surrogates. In `u` mode a proper surrogate pair is one
 * code point and does not match `\p{Cs}`; a lone surrogate does.
 */
const FORBIDDEN_STRING_CHARACTER = /[\p{Cc}\p{Noncharacter_Code_Point}\p{Cs}]/u;

export function isCloudEventsString(value: string): boolean {
  // Printable ASCII, what nearly every attribute holds, is checked by a loop; anything else by the pattern.
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return !FORBIDDEN_STRING_CHARACTER.test(value);
  }
  return true;
}

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/** CE-2 (§3.2 Integer): a whole number in the signed 32-bit range. */
export function isInt32(value: number): boolean {
  return Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX;
}

/** The canonical string encoding of an Integer: the integer part of a JSON number (RFC 7159 §6). */
const INTEGER_STRING = /^-?(?:0|[1-9][0-9]{0,9})$/;

/** CE-12 (§3.5.1.2.2): with sequencetype `Integer`, the sequence is a string-encoded Integer. */
export function isInt32String(value: string): boolean {
  return INTEGER_STRING.test(value) && isInt32(Number(value));
}

/**
 * JSON-2 / CE-2 (§3.2 Binary): standard base64 alphabet with padding, RFC 4648 §4. A loop, not a
 * regular expression: `(?:[…]{4})*` keeps one backtracking entry per group, and on a few
 * megabytes of data_base64 V8 ran out of stack (review #3).
 */
export function isBase64(value: string): boolean {
  const length = value.length;
  if (length % 4 !== 0) return false;
  let padding = 0;
  if (length > 0 && value.charCodeAt(length - 1) === EQUALS) padding = value.charCodeAt(length - 2) === EQUALS ? 2 : 1;
  for (let i = 0; i < length - padding; i++) {
    if (!isBase64Character(value.charCodeAt(i))) return false;
  }
  return true;
}

const EQUALS = 0x3d;

function isBase64Character(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f;
}

// RFC 3986 building blocks. One character per repetition (never `[...]+` inside `*`), so a
// failing match cannot backtrack exponentially.
const PCT = '%[0-9A-Fa-f]{2}';
const UNRESERVED_SUBDELIMS = "A-Za-z0-9\\-._~!$&'()*+,;=";
const PCHAR = `(?:[${UNRESERVED_SUBDELIMS}:@]|${PCT})`;
const USERINFO = `(?:[${UNRESERVED_SUBDELIMS}:]|${PCT})*`;
const REG_NAME = `(?:[${UNRESERVED_SUBDELIMS}]|${PCT})*`;
const IP_LITERAL = `\\[(?:[0-9A-Fa-f:.]+|[vV][0-9A-Fa-f]+\\.[${UNRESERVED_SUBDELIMS}:]+)\\]`;
const AUTHORITY = `(?:${USERINFO}@)?(?:${IP_LITERAL}|${REG_NAME})(?::[0-9]*)?`;
const SCHEME = '[A-Za-z][A-Za-z0-9+.-]*:';
/** path-abempty after an authority; otherwise path-absolute, -rootless, -noscheme or empty. */
const HIER_OR_RELATIVE_PART = `(?:\\/\\/${AUTHORITY}(?:\\/${PCHAR}*)*|\\/?(?:${PCHAR}+(?:\\/${PCHAR}*)*)?)`;
const QUERY = `(?:\\?(?:${PCHAR}|[/?])*)?`;
const FRAGMENT = `(?:#(?:${PCHAR}|[/?])*)?`;

/**
 * RFC 3986 §4.1 URI-reference. Without a scheme, the first path segment may not hold a colon
 * (path-noscheme), hence the negative lookahead.
 */
const URI_REFERENCE = new RegExp(`^(?:${SCHEME}|(?![^/?#]*:))${HIER_OR_RELATIVE_PART}${QUERY}${FRAGMENT}$`);
/** RFC 3986 §4.3 absolute-URI: a scheme, and no fragment. */
const ABSOLUTE_URI = new RegExp(`^${SCHEME}${HIER_OR_RELATIVE_PART}${QUERY}$`);
const HAS_SCHEME = new RegExp(`^${SCHEME}`);

/**
 * The common shape of a source, `scheme:` and a path without authority, percent-encoding, query
 * or fragment (urn:nld:…), which every such string meets as path-rootless, path-absolute or
 * path-empty: one character class that V8 tests in half the time of the full grammar (issue 15).
 */
const SCHEME_AND_PLAIN_PATH = new RegExp(`^${SCHEME}(?!\\/\\/)[${UNRESERVED_SUBDELIMS}:@/]*$`);

export function isUriReference(value: string): boolean {
  return SCHEME_AND_PLAIN_PATH.test(value) || URI_REFERENCE.test(value);
}

export function isAbsoluteUri(value: string): boolean {
  return ABSOLUTE_URI.test(value);
}

export function hasScheme(value: string): boolean {
  return HAS_SCHEME.test(value);
}

/**
 * CE-7: an RFC 2046 media type, `type/subtype *(; parameter)`, tokens per RFC 2045 §5.1 and
 * parameter values as token or quoted-string, optional whitespace around `;` (RFC 9110 §8.3.1).
 * A quoted-string holds visible ASCII, space and tab only: RFC 9110 also allows obs-text
 * (bytes 0x80-0xFF), but datacontenttype must be able to travel as a Content-Type header in a
 * binary-mode delivery (review #8), and Node's HTTP client refuses anything above U+00FF.
 */
const TOKEN = "[!#$%&'*+\\-.^_`{|}~0-9A-Za-z]+";
const QUOTED_STRING = '"(?:[\\x09\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\\x09\\x20-\\x7E])*"';
const MEDIA_TYPE = new RegExp(`^${TOKEN}\\/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED_STRING}))*$`);

export function isMediaType(value: string): boolean {
  return MEDIA_TYPE.test(value);
}

/**
 * HTTP binding §3.1.3.2: a `ce-` header value holds printable US-ASCII, with anything else
 * percent-encoded. Space and tab are tolerated (senders should encode them; decoding is lenient);
 * a raw byte outside that range — a control character, or non-ASCII that may not even be UTF-8 —
 * arrives with no agreed meaning and is refused (review #5).
 */
export function isHeaderText(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== 0x09 && (c < 0x20 || c > 0x7e)) return false;
  }
  return true;
}

/** JSON content: `application/json` or any `+json` structured syntax suffix (RFC 6839). */
export function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/**
 * isJsonMediaType for a whole Content-Type or datacontenttype, parameters and all. The usual
 * value, `application/json` as it is, is answered without cutting out its media type (issue 15).
 */
export function isJsonContentType(contentType: string): boolean {
  return contentType === 'application/json' || isJsonMediaType(mediaTypeOf(contentType));
}

/** Media types whose body Koerier carries as a JSON string `data` when the bytes decode cleanly. */
export function isTextualMediaType(mediaType: string): boolean {
  return mediaType.startsWith('text/') || mediaType === 'application/xml' || mediaType.endsWith('+xml');
}

const CHARSET_PARAMETER = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

/** The `charset` parameter of a Content-Type, lower case, or undefined. */
export function charsetOf(contentType: string): string | undefined {
  // Without a parameter there is no charset; most requests send none.
  if (!contentType.includes(';')) return undefined;
  return CHARSET_PARAMETER.exec(contentType)?.[1]?.toLowerCase();
}

/**
 * CE-10: RFC 3339 §5.6 `date-time`. The pattern fixes the shape (seconds and a zone offset are
 * mandatory, the offset is `Z` or `±hh:mm`); ranges are checked numerically below. No capturing
 * groups: the fields are read at their fixed places, and V8 tested the capturing form a third
 * slower (issue 15).
 */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function isRfc3339Timestamp(value: string): boolean {
  // Once the pattern matched, every field sits at a fixed place: read there, no captured substrings.
  if (!RFC3339.test(value)) return false;
  const year = digitsAt(value, 0, 4);
  const month = digitsAt(value, 5, 2);
  const day = digitsAt(value, 8, 2);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > DAYS_IN_MONTH[month - 1]! + (leap ? 1 : 0)) return false;
  // Second 60 is a leap second, which RFC 3339 allows.
  if (digitsAt(value, 11, 2) > 23 || digitsAt(value, 14, 2) > 59 || digitsAt(value, 17, 2) > 60) return false;
  const end = value.length;
  const zone = value.charCodeAt(end - 1);
  if (zone === 0x5a || zone === 0x7a) return true;
  return digitsAt(value, end - 5, 2) <= 23 && digitsAt(value, end - 2, 2) <= 59;
}

/** The number written by the `count` ASCII digits at `start`. */
function digitsAt(value: string, start: number, count: number): number {
  let n = 0;
  for (let i = start; i < start + count; i++) n = n * 10 + value.charCodeAt(i) - 0x30;
  return n;
}

/**
 * CE-6, NL profile §3.3.4 "MUST be Reverse domain name notation": a DNS name written back to
 * front, so at least two dot-separated labels, every one kept to the DNS label rules (RFC 1035
 * §2.3.1 as RFC 1123 §2.1 relaxed it): 1 to 63 letters, digits and hyphens, never starting or
 * ending with a hyphen; the top-level label starts with a letter. The labels after the first two
 * name the event and may also use `_`, as in the core example `com.github.pull_request.opened`,
 * but the hyphen and length rules hold for them too (issue 28: `nl.example.fuzz-` was accepted).
 * Bounded repetitions between dots, which no label holds, so a failing match backtracks at most
 * 62 characters per label.
 */
const REVERSE_DNS =
  /^[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*$/;

export function isReverseDnsName(value: string): boolean {
  return REVERSE_DNS.test(value);
}

/** The one accepted way to write a version segment: `v` and digits (NL profile §3.3.4). */
const VERSION_SEGMENT = /^v[0-9]+$/;
/** A segment that starts like a version (`v2…`, `V2`) but is not written `v<digits>`. */
const VERSION_LIKE_SEGMENT = /^[vV][0-9]/;
const DIGITS = /^[0-9]+$/;
/**
 * Whether any segment starts with `v` or `V` and a digit; without one, a type has no version to
 * judge. A pattern, not a loop: V8 runs it in a third of the loop's time on a typical type (issue 15).
 */
const VERSION_LIKE_SEGMENT_START = /(?:^|\.)[vV][0-9]/;

export type TypeVersionProblem = 'several-versions' | 'version-format' | undefined;

/**
 * CE-6, NL profile §3.3.4: "If versioning is used, the type attribute MUST only include a single
 * version number, prefixed by the letter v". Versions are whole dot-separated segments, as in the
 * core example `com.example.object.deleted.v2`. Flagged: two or more `v<digits>` segments; a
 * version-like segment not written `v<digits>` (`V2`, `v2_1`, `v1-beta`); and a `v<digits>`
 * segment followed by a number segment (`v1.2`), which is a version with more than one number.
 */
export function typeVersionProblem(type: string): TypeVersionProblem {
  if (!VERSION_LIKE_SEGMENT_START.test(type)) return undefined;
  const segments = type.split('.');
  let versions = 0;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (VERSION_SEGMENT.test(segment)) {
      versions++;
      const next = segments[i + 1];
      if (next !== undefined && DIGITS.test(next)) return 'version-format';
    } else if (VERSION_LIKE_SEGMENT.test(segment)) {
      return 'version-format';
    }
  }
  return versions > 1 ? 'several-versions' : undefined;
}

/** CE-4 (NL profile §3.3.2): source SHOULD be a URN in the `nld` namespace (NIDs are case-insensitive). */
export function isNldUrn(source: string): boolean {
  return source.length > 8 && source.slice(0, 8).toLowerCase() === 'urn:nld:';
}
