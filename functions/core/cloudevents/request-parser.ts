/**
 * Reading CloudEvents from an HTTP request: the three content modes of the HTTP protocol binding
 * (HTTP-1 structured, HTTP-2 binary, HTTP-3 batch), chosen by Content-Type, then validation of
 * every event (event-validation.ts) and the per-event size limit.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { mediaTypeOf } from '../http/messages.js';
import { problems, type Problem, type ValidationIssue } from '../http/problems.js';
import { acceptedEvent, type AcceptedEvent } from './accepted-event.js';
import { charsetOf, isHeaderText, isJsonMediaType, isTextualMediaType } from './attribute-syntax.js';
import { type Attributes, IssueCollector, checkEvent } from './event-validation.js';
import { arrayElementSpans, duplicateMemberName, type Span } from './json-spans.js';

export type ContentMode = 'structured' | 'binary' | 'batch';

export type ParseOutcome =
  | { ok: true; mode: ContentMode; events: AcceptedEvent[]; warnings: ValidationIssue[] }
  | { ok: false; problem: Problem };

export interface ParseOptions {
  /**
   * The largest event accepted, in bytes of its JSON format text. Larger events are answered
   * with 413 for now; once the claim check exists (EDU-1, CARD-6) their data will move to it
   * and the event will carry a `dataref` instead (CE-15).
   */
  maxEventBytes: number;
  /** The most events one batch may hold (HTTP-3); unlimited when absent. */
  maxEventsPerBatch?: number;
}

const STRUCTURED_JSON = 'application/cloudevents+json';
const BATCH_JSON = 'application/cloudevents-batch+json';
const CLOUDEVENTS_FORMAT = 'application/cloudevents';
const CE_PREFIX = 'ce-';

const MODES_EXPLAINED =
  'Send CloudEvents in one of three ways: structured mode (Content-Type: application/cloudevents+json, ' +
  'the event as a JSON object), batch mode (Content-Type: application/cloudevents-batch+json, a JSON array ' +
  'of events), or binary mode (the attributes as ce- headers, at least ce-specversion, and the data as the body).';

/**
 * Header names may come in any case (HTTP field names are case-insensitive, HTTP-2); handlers
 * pass them lower-cased.
 *
 * Sizes are checked before anything costly (review #3): a structured body or a binary body larger
 * than one event may be is refused before it is parsed, a batch's member count and every member's
 * size before any member is validated. Validation itself is linear: JSON.parse and the span
 * scanners are iterative, and no pattern in attribute-syntax.ts can backtrack more than linearly.
 */
export function parseCloudEventsRequest(
  req: { headers: Readonly<Record<string, string>>; body: Buffer },
  options: ParseOptions,
): ParseOutcome {
  let contentType: string | undefined;
  let ceHeaders: [name: string, value: string][] | undefined;
  for (const header in req.headers) {
    const name = header.toLowerCase();
    if (name === 'content-type') contentType = req.headers[header];
    else if (name.startsWith(CE_PREFIX)) (ceHeaders ??= []).push([name.slice(CE_PREFIX.length), req.headers[header]!]);
  }
  const mediaType = mediaTypeOf(contentType);
  // HTTP-5: structured and batch requests are read from the body alone; ce- headers are ignored.
  if (mediaType === STRUCTURED_JSON) return parseStructured(req.body, contentType!, options);
  if (mediaType === BATCH_JSON) return parseBatch(req.body, contentType!, options);
  if (mediaType.startsWith(CLOUDEVENTS_FORMAT)) {
    return fail(problems.unsupportedMediaType(
      `Koerier reads CloudEvents in the JSON event format only, not '${mediaType}'. ${MODES_EXPLAINED}`,
    ));
  }
  if (ceHeaders?.some(([name]) => name === 'specversion')) return parseBinary(ceHeaders, contentType, req.body, options);
  return fail(problems.unsupportedMediaType(
    `${contentType ? `Content-Type '${mediaType}' without a ce-specversion header is not a CloudEvent.` : 'The request has no Content-Type and no ce-specversion header.'} ${MODES_EXPLAINED}`,
  ));
}

/** HTTP-1: the body is one event in the JSON format, kept byte for byte as its `json`. */
function parseStructured(body: Buffer, contentType: string, options: ParseOptions): ParseOutcome {
  // The body is the event's JSON format text byte for byte, so its length is the event's size.
  if (body.length > options.maxEventBytes) return fail(eventTooLarge(body.length, options));
  const text = jsonBodyText(body, contentType);
  if (typeof text !== 'string') return fail(text);
  const value = parseJson(text);
  if (value === MALFORMED) return fail(malformedJson('The body is not valid JSON (RFC 8259).'));
  const issues = new IssueCollector();
  if (Array.isArray(value)) {
    issues.error(undefined, 'event-object', 'HTTP-1', 'A structured request holds one event object; send arrays as application/cloudevents-batch+json.');
    return invalid(issues);
  }
  checkDuplicateMembers(text, undefined, issues, 'HTTP-1');
  const attributes = checkEvent(value, issues);
  if (attributes === undefined || issues.errors.length > 0) return invalid(issues);
  const event = acceptedEvent(attributes, text);
  return tooLarge(event, options) ?? { ok: true, mode: 'structured', events: [event], warnings: issues.warnings };
}

/**
 * HTTP-3: a JSON array of events sharing one specversion, possibly empty. All or nothing: one
 * problem lists the violations of every member, each with its `index` (the first 100; past them
 * validation stops, review #11).
 */
function parseBatch(body: Buffer, contentType: string, options: ParseOptions): ParseOutcome {
  const text = jsonBodyText(body, contentType);
  if (typeof text !== 'string') return fail(text);
  const value = parseJson(text);
  if (value === MALFORMED) return fail(malformedJson('The body is not valid JSON (RFC 8259).'));
  const issues = new IssueCollector();
  if (!Array.isArray(value)) {
    issues.error(undefined, 'batch-array', 'HTTP-3', 'A batch (application/cloudevents-batch+json) is a JSON array of events.');
    return invalid(issues);
  }
  if (options.maxEventsPerBatch !== undefined && value.length > options.maxEventsPerBatch) {
    return fail(problems.payloadTooLarge(`A batch holds at most ${options.maxEventsPerBatch} events; this one holds ${value.length}. Split it.`));
  }
  const spans = arrayElementSpans(text);
  for (let index = 0; index < spans.length; index++) {
    const [start, end] = spans[index]!;
    const size = Buffer.byteLength(text.slice(start, end));
    if (size > options.maxEventBytes) return fail(eventTooLarge(size, options, index, idOf(value[index])));
  }
  const members: Attributes[] = [];
  // The first member that is an object sets the batch's specversion, so one stray non-object
  // member does not make every later member look inconsistent.
  let firstSpecversion: unknown;
  let seenObject = false;
  for (let index = 0; index < value.length && !issues.stopped; index++) {
    issues.index = index;
    const member: unknown = value[index];
    if (typeof member !== 'object' || member === null || Array.isArray(member)) {
      issues.error(undefined, 'event-object', 'HTTP-3', 'Each member of a batch is a CloudEvent as a JSON object.');
      continue;
    }
    const specversion = (member as Record<string, unknown>)['specversion'];
    if (!seenObject) {
      seenObject = true;
      firstSpecversion = specversion;
    } else if (specversion !== firstSpecversion) {
      issues.error('specversion', 'batch-specversion', 'HTTP-3', 'All events in a batch must have the same specversion.');
    }
    checkDuplicateMembers(text, spans[index]!, issues, 'HTTP-3');
    members.push(checkEvent(member, issues)!);
  }
  if (issues.errors.length > 0) return invalid(issues);
  const events = members.map((attributes, index) => {
    const [start, end] = spans[index]!;
    return acceptedEvent(attributes, text.slice(start, end));
  });
  return { ok: true, mode: 'batch', events, warnings: issues.warnings };
}

/**
 * HTTP-2: every attribute in a ce- header (percent-decoded), Content-Type is datacontenttype and
 * the body is the data. The event is rebuilt in the JSON format: attributes in header order,
 * then `data` — JSON bodies spliced in verbatim, decodable text as a string — or `data_base64`.
 */
function parseBinary(ceHeaders: [string, string][], contentType: string | undefined, body: Buffer, options: ParseOptions): ParseOutcome {
  // The event carries the body at least byte for byte (as JSON or text) or larger (as base64).
  if (body.length > options.maxEventBytes) return fail(eventTooLarge(body.length, options));
  const issues = new IssueCollector();
  // No prototype, so a `ce-__proto__` header becomes a member that validation rejects (CE-1).
  const event: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of ceHeaders) {
    if (issues.stopped) break;
    if (name === 'datacontenttype') {
      // HTTP binding §3.1.1: in binary mode datacontenttype MUST be carried by Content-Type, and
      // a ce-datacontenttype header MUST NOT be present (review #4).
      issues.error(name, 'binary-content-type', 'HTTP-2', 'In binary mode the Content-Type header carries datacontenttype; a ce-datacontenttype header must not be present (HTTP binding §3.1.1).');
    } else if (name === 'data' || name === 'data_base64') {
      issues.error(name, 'binary-data', 'HTTP-2', 'In binary mode the data is the request body, not a ce- header.');
    } else if (!isHeaderText(value)) {
      issues.error(name, 'header-characters', 'HTTP-2', `The ce-${printableName(name)} header holds characters outside printable US-ASCII; other characters must be percent-encoded UTF-8 (HTTP binding §3.1.3.2).`);
    } else {
      event[name] = percentDecoded(name, value, issues);
    }
  }
  if (contentType !== undefined && contentType !== '') event['datacontenttype'] = contentType;
  const attributes = checkEvent(event, issues)!;
  const data = binaryDataMember(body, contentType);
  if (issues.errors.length > 0) {
    if (data === MALFORMED) issues.error('data', 'json-data', 'HTTP-2', `The body is not valid JSON although Content-Type is '${mediaTypeOf(contentType)}'.`);
    return invalid(issues);
  }
  if (data === MALFORMED) return fail(malformedJson(`The body is not valid JSON although Content-Type is '${mediaTypeOf(contentType)}'.`));
  let json = '{';
  for (const name in attributes) {
    if (json.length > 1) json += ',';
    json += `${JSON.stringify(name)}:${JSON.stringify(attributes[name])}`;
  }
  const accepted = acceptedEvent(attributes, `${json}${data}}`);
  return tooLarge(accepted, options) ?? { ok: true, mode: 'binary', events: [accepted], warnings: issues.warnings };
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
    issues.error(name, 'percent-encoding', 'HTTP-2', `The ce-${printableName(name)} header is not valid percent-encoded UTF-8.`);
    return value;
  }
}

/** Header names in messages, cut short: a client may send a very long one. */
function printableName(name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}…` : name;
}

/**
 * Review #7: a structured event (HTTP-1) or batch member (HTTP-3) names each member once. Only its
 * top-level members, where the attributes are: `data` is the publisher's payload, forwarded as
 * received and never read by Koerier, so duplicates inside it are its receiver's business.
 */
function checkDuplicateMembers(text: string, span: Span | undefined, issues: IssueCollector, requirement: 'HTTP-1' | 'HTTP-3'): void {
  const duplicate = duplicateMemberName(text, span?.[0] ?? 0);
  if (duplicate === undefined) return;
  const shown = JSON.stringify(duplicate.length > 64 ? `${duplicate.slice(0, 64)}…` : duplicate);
  issues.error(duplicate, 'duplicate-member', requirement, `The member ${shown} occurs more than once in the event object; JSON parsers disagree on which one counts (RFC 8259 §4), so each name may appear only once.`);
}

/** The `,"data":…` or `,"data_base64":…` member for a binary-mode body; empty when there is no body. */
function binaryDataMember(body: Buffer, contentType: string | undefined): string | typeof MALFORMED {
  if (body.length === 0) return '';
  const mediaType = mediaTypeOf(contentType);
  if (isJsonMediaType(mediaType)) {
    if (!isUtf8(body)) return MALFORMED;
    const text = body.toString('utf8');
    return parseJson(text) === MALFORMED ? MALFORMED : `,"data":${text}`;
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

/** JSON text is UTF-8 (RFC 8259 §8.1); a body in another charset is not understood. */
function jsonBodyText(body: Buffer, contentType: string): string | Problem {
  const charset = charsetOf(contentType);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
    return problems.unsupportedMediaType(`CloudEvents in the JSON format are UTF-8; charset '${charset}' is not supported.`);
  }
  if (!isUtf8(body)) return malformedJson('The body is not valid UTF-8, which JSON requires (RFC 8259 §8.1).');
  return body.toString('utf8');
}

const MALFORMED = Symbol('malformed JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return MALFORMED;
  }
}

/** The parser's own message is not passed on: V8 quotes part of the input, which may be data. */
function malformedJson(detail: string): Problem {
  return problems.badRequest('malformed-json', 'Malformed JSON', detail);
}

function invalid(issues: IssueCollector): ParseOutcome {
  const count = issues.errors.length;
  const detail = issues.stopped
    ? `More than ${count} violations of CloudEvents 1.0 as profiled by NL GOV; validation stopped after the first ${count}, which are listed in errors.`
    : `${count} violation${count === 1 ? '' : 's'} of CloudEvents 1.0 as profiled by NL GOV; see errors.`;
  const problem = problems.badRequest('invalid-cloudevent', 'Invalid CloudEvent', detail, issues.errors);
  return fail({
    ...problem,
    ...(issues.stopped ? { validationStopped: true } : {}),
    ...(issues.warnings.length > 0 ? { warnings: issues.warnings } : {}),
    ...(issues.warningsNotCollected > 0 ? { warningsNotListed: issues.warningsNotCollected } : {}),
  });
}

/** The per-event limit is on the JSON format text, the form in which Koerier stores and forwards. */
function tooLarge(event: AcceptedEvent, options: ParseOptions): ParseOutcome | undefined {
  const size = Buffer.byteLength(event.json);
  return size <= options.maxEventBytes ? undefined : fail(eventTooLarge(size, options, undefined, event.id));
}

/** Ids longer than this are not repeated in a 413: the answer names the event, it does not echo it. */
const MAX_ID_IN_PROBLEM = 256;

function eventTooLarge(size: number, options: ParseOptions, index?: number, id?: string): Problem {
  const shownId = id !== undefined && id.length <= MAX_ID_IN_PROBLEM ? id : undefined;
  const which = `${shownId === undefined ? 'The event' : `Event '${shownId}'`}${index === undefined ? '' : ` (batch member ${index})`}`;
  return {
    ...problems.payloadTooLarge(`${which} is ${size} bytes in the JSON format; the limit is ${options.maxEventBytes} bytes per event.`),
    ...(shownId === undefined ? {} : { eventId: shownId }),
    eventBytes: size,
    maxEventBytes: options.maxEventBytes,
    ...(index === undefined ? {} : { index }),
  };
}

function idOf(member: unknown): string | undefined {
  if (typeof member !== 'object' || member === null) return undefined;
  const id = (member as Record<string, unknown>)['id'];
  return typeof id === 'string' ? id : undefined;
}

function fail(problem: Problem): ParseOutcome {
  return { ok: false, problem };
}
