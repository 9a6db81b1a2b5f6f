/**
 * Reading CloudEvents from an HTTP request: the three content modes of the HTTP protocol binding
 * (HTTP-1 structured, HTTP-2 binary, HTTP-3 batch), chosen by Content-Type, then validation of
 * every event (event-validation.ts) and the per-event size limit.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { mediaTypeOf } from '../http/messages.js';
import { problems, type Problem, type ValidationIssue } from '../http/problems.js';
import { acceptedEvent, type AcceptedEvent } from './accepted-event.js';
import { charsetOf, isJsonMediaType, isTextualMediaType } from './attribute-syntax.js';
import { type Attributes, IssueCollector, checkEvent } from './event-validation.js';
import { arrayElementSpans } from './json-spans.js';

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
  const text = jsonBodyText(body, contentType);
  if (typeof text !== 'string') return fail(text);
  const value = parseJson(text);
  if (value === MALFORMED) return fail(malformedJson('The body is not valid JSON (RFC 8259).'));
  const issues = new IssueCollector();
  if (Array.isArray(value)) {
    issues.error(undefined, 'event-object', 'HTTP-1', 'A structured request holds one event object; send arrays as application/cloudevents-batch+json.');
    return invalid(issues);
  }
  const attributes = checkEvent(value, issues);
  if (attributes === undefined || issues.errors.length > 0) return invalid(issues);
  const event = acceptedEvent(attributes, text);
  return tooLarge(event, options) ?? { ok: true, mode: 'structured', events: [event], warnings: issues.warnings };
}

/**
 * HTTP-3: a JSON array of events sharing one specversion, possibly empty. All or nothing: one
 * problem lists every violation of every member, each with its `index`.
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
  const members: Attributes[] = [];
  // The first member that is an object sets the batch's specversion, so one stray non-object
  // member does not make every later member look inconsistent.
  let firstSpecversion: unknown;
  let seenObject = false;
  for (let index = 0; index < value.length; index++) {
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
    members.push(checkEvent(member, issues)!);
  }
  if (issues.errors.length > 0) return invalid(issues);
  const spans = arrayElementSpans(text);
  const events: AcceptedEvent[] = [];
  for (let index = 0; index < members.length; index++) {
    const [start, end] = spans[index]!;
    const event = acceptedEvent(members[index]!, text.slice(start, end));
    const problem = tooLarge(event, options, index);
    if (problem) return problem;
    events.push(event);
  }
  return { ok: true, mode: 'batch', events, warnings: issues.warnings };
}

/**
 * HTTP-2: every attribute in a ce- header (percent-decoded), Content-Type is datacontenttype and
 * the body is the data. The event is rebuilt in the JSON format: attributes in header order,
 * then `data` — JSON bodies spliced in verbatim, decodable text as a string — or `data_base64`.
 */
function parseBinary(ceHeaders: [string, string][], contentType: string | undefined, body: Buffer, options: ParseOptions): ParseOutcome {
  const issues = new IssueCollector();
  // No prototype, so a `ce-__proto__` header becomes a member that validation rejects (CE-1).
  const event: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of ceHeaders) {
    if (name === 'datacontenttype') {
      issues.warning(name, 'binary-content-type', 'HTTP-2', 'The ce-datacontenttype header is ignored: in binary mode Content-Type carries datacontenttype.');
    } else if (name === 'data' || name === 'data_base64') {
      issues.error(name, 'binary-data', 'HTTP-2', 'In binary mode the data is the request body, not a ce- header.');
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

/** HTTP binding §3.1.3.2: header values are percent-encoded UTF-8. */
function percentDecoded(name: string, value: string, issues: IssueCollector): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    issues.error(name, 'percent-encoding', 'HTTP-2', `The ce-${name} header is not valid percent-encoded UTF-8.`);
    return value;
  }
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
  const problem = problems.badRequest(
    'invalid-cloudevent',
    'Invalid CloudEvent',
    `${count} violation${count === 1 ? '' : 's'} of CloudEvents 1.0 as profiled by NL GOV; see errors.`,
    issues.errors,
  );
  return fail(issues.warnings.length > 0 ? { ...problem, warnings: issues.warnings } : problem);
}

/** The per-event limit is on the JSON format text, the form in which Koerier stores and forwards. */
function tooLarge(event: AcceptedEvent, options: ParseOptions, index?: number): ParseOutcome | undefined {
  const size = Buffer.byteLength(event.json);
  if (size <= options.maxEventBytes) return undefined;
  const member = index === undefined ? '' : ` (batch member ${index})`;
  return fail({
    ...problems.payloadTooLarge(
      `Event '${event.id}'${member} is ${size} bytes in the JSON format; the limit is ${options.maxEventBytes} bytes per event.`,
    ),
    eventId: event.id,
    maxEventBytes: options.maxEventBytes,
    ...(index === undefined ? {} : { index }),
  });
}

function fail(problem: Problem): ParseOutcome {
  return { ok: false, problem };
}
