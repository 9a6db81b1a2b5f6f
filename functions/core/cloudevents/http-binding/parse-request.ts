/**
 * Reading CloudEvents from an HTTP request: the three content modes of the HTTP protocol binding
 * (HTTP-1 structured, HTTP-2 binary in parse-binary.ts, HTTP-3 batch), chosen by Content-Type,
 * then validation of every event (event-validation.ts) and the per-event size limit.
 */
import { mediaTypeOf } from '../../http/messages.js';
import { problems } from '../../http/problems.js';
import { acceptedEvent } from '../accepted-event.js';
import { type Attributes, checkEvent } from '../event-validation.js';
import { IssueCollector } from '../issue-collector.js';
import { arrayElementSpans, duplicateMemberName, topLevelMemberCount, type Span } from '../json-spans.js';
import { parseEventBatch, parseEventObject } from './event-object-text.js';
import { parseBinary } from './parse-binary.js';
import {
  eventTooLarge,
  fail,
  holdsOnlyPrintableStrings,
  idOf,
  invalid,
  jsonBodyText,
  MALFORMED,
  malformedJson,
  type ParseOptions,
  type ParsedEvents,
} from './parse-results.js';

const STRUCTURED_JSON = 'application/cloudevents+json';
const BATCH_JSON = 'application/cloudevents-batch+json';
const CLOUDEVENTS_FORMAT = 'application/cloudevents';
const CE_PREFIX = 'ce-';

const MODES_EXPLAINED =
  'Send CloudEvents in one of three ways: structured mode (Content-Type: application/cloudevents+json, ' +
  'the event as a JSON object), batch mode (Content-Type: application/cloudevents-batch+json, a JSON array ' +
  'of events), or binary mode (the attributes as ce- headers, at least ce-specversion, and the data as the body).';

/**
 * The events of a publish request, or a thrown KoerierError (400, 413, 415) saying why not.
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
): ParsedEvents {
  let contentType: string | undefined;
  let ceHeaders: [name: string, value: string][] | undefined;
  // Noted on the way: a search of the list afterwards, with its callback, showed as 7% of a small binary event's profile (issue 15).
  let hasSpecversion = false;
  for (const header in req.headers) {
    const name = header.toLowerCase();
    if (name === 'content-type') contentType = req.headers[header];
    else if (name.startsWith(CE_PREFIX)) {
      const attribute = attributeNameOf(name);
      if (attribute === 'specversion') hasSpecversion = true;
      (ceHeaders ??= []).push([attribute, req.headers[header]!]);
    }
  }
  const mediaType = requestMediaType(contentType);
  // HTTP-5: structured and batch requests are read from the body alone; ce- headers are ignored.
  if (mediaType === STRUCTURED_JSON) return parseStructured(req.body, contentType!, options);
  if (mediaType === BATCH_JSON) return parseBatch(req.body, contentType!, options);
  if (mediaType.startsWith(CLOUDEVENTS_FORMAT)) {
    throw fail(
      problems.unsupportedMediaType(
        `Koerier reads CloudEvents in the JSON event format only, not '${mediaType}'. ${MODES_EXPLAINED}`,
      ),
    );
  }
  if (hasSpecversion) return parseBinary(ceHeaders!, contentType, req.body, options);
  throw fail(
    problems.unsupportedMediaType(
      `${contentType ? `Content-Type '${mediaType}' without a ce-specversion header is not a CloudEvent.` : 'The request has no Content-Type and no ce-specversion header.'} ${MODES_EXPLAINED}`,
    ),
  );
}

/**
 * The previous request's Content-Type and its media type: a publisher sends the same one with
 * every request, and cutting it out again (slice, trim, lower case) showed as 2% of a small
 * structured event's profile (issue 15). One entry, compared by its text.
 */
let previousContentType: string | undefined;
let previousMediaType = '';

function requestMediaType(contentType: string | undefined): string {
  if (contentType !== previousContentType) {
    previousMediaType = mediaTypeOf(contentType);
    previousContentType = contentType;
  }
  return previousMediaType;
}

/**
 * Attribute names of ce- headers seen before, so the same name comes back as the same string.
 * A name cut anew from each request's header is a string V8 must look up in its string table at
 * every use as a property key; a kept one is looked up once (issue 15: writing the event's members
 * fell from 9% to 3% of a small binary event's profile). Bounded, as names come from clients.
 */
const ATTRIBUTE_NAMES = new Map<string, string>();
const MAX_ATTRIBUTE_NAMES_KEPT = 256;

function attributeNameOf(header: string): string {
  let name = ATTRIBUTE_NAMES.get(header);
  if (name === undefined) {
    name = header.slice(CE_PREFIX.length);
    if (ATTRIBUTE_NAMES.size < MAX_ATTRIBUTE_NAMES_KEPT) ATTRIBUTE_NAMES.set(header, name);
  }
  return name;
}

/** HTTP-1: the body is one event in the JSON format, kept byte for byte as its `json`. */
function parseStructured(body: Buffer, contentType: string, options: ParseOptions): ParsedEvents {
  // The body is the event's JSON format text byte for byte, so its length is the event's size.
  if (body.length > options.maxEventBytes) throw fail(eventTooLarge(body.length, options));
  const text = jsonBodyText(body, contentType);
  const parsed = parseEventObject(text);
  if (parsed === MALFORMED) throw fail(malformedJson());
  const { value, members } = parsed;
  const issues = new IssueCollector();
  if (Array.isArray(value)) {
    issues.error(
      undefined,
      'event-object',
      'HTTP-1',
      'A structured request holds one event object; send arrays as application/cloudevents-batch+json.',
    );
    throw invalid(issues);
  }
  checkDuplicateMembers(text, undefined, members, value, issues, 'HTTP-1');
  const attributes = checkEvent(value, issues, holdsOnlyPrintableStrings(text, body.length));
  if (attributes === undefined || issues.errors.length > 0) throw invalid(issues);
  // No second size check: the event is the body's text, whose bytes were counted above.
  return { mode: 'structured', events: [acceptedEvent(attributes, text)], warnings: issues.warnings };
}

/**
 * HTTP-3: a JSON array of events sharing one specversion, possibly empty. All or nothing: one
 * problem lists the violations of every member, each with its `index` (the first 100; past them
 * validation stops, review #11).
 */
function parseBatch(body: Buffer, contentType: string, options: ParseOptions): ParsedEvents {
  const text = jsonBodyText(body, contentType);
  const parsed = parseEventBatch(text);
  if (parsed === MALFORMED) throw fail(malformedJson());
  const { value } = parsed;
  const issues = new IssueCollector();
  if (!Array.isArray(value)) {
    issues.error(
      undefined,
      'batch-array',
      'HTTP-3',
      'A batch (application/cloudevents-batch+json) is a JSON array of events.',
    );
    throw invalid(issues);
  }
  if (options.maxEventsPerBatch !== undefined && value.length > options.maxEventsPerBatch) {
    throw fail(
      problems.payloadTooLarge(
        `A batch holds at most ${options.maxEventsPerBatch} events; this one holds ${value.length}. Split it.`,
      ),
    );
  }
  const spans = parsed.members?.spans ?? arrayElementSpans(text);
  for (let index = 0; index < spans.length; index++) {
    const [start, end] = spans[index]!;
    const size = Buffer.byteLength(text.slice(start, end));
    if (size > options.maxEventBytes) throw fail(eventTooLarge(size, options, index, idOf(value[index])));
  }
  const members: Attributes[] = [];
  const printableStrings = holdsOnlyPrintableStrings(text, body.length);
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
      issues.error(
        'specversion',
        'batch-specversion',
        'HTTP-3',
        'All events in a batch must have the same specversion.',
      );
    }
    const memberCount = parsed.members?.counts[index] ?? topLevelMemberCount(text, spans[index]![0]);
    checkDuplicateMembers(text, spans[index]!, memberCount, member, issues, 'HTTP-3');
    members.push(checkEvent(member, issues, printableStrings)!);
  }
  if (issues.errors.length > 0) throw invalid(issues);
  const events = members.map((attributes, index) => {
    const [start, end] = spans[index]!;
    return acceptedEvent(attributes, text.slice(start, end));
  });
  return { mode: 'batch', events, warnings: issues.warnings };
}

/**
 * Review #7: a structured event (HTTP-1) or batch member (HTTP-3) names each member once. Only its
 * top-level members, where the attributes are: `data` is the publisher's payload, forwarded as
 * received and never read by Koerier, so duplicates inside it are its receiver's business.
 */
function checkDuplicateMembers(
  text: string,
  span: Span | undefined,
  members: number,
  parsed: unknown,
  issues: IssueCollector,
  requirement: 'HTTP-1' | 'HTTP-3',
): void {
  const start = span?.[0] ?? 0;
  // JSON.parse keeps one key per name, so as many members in the text (`members`) as keys means
  // no repeats; only otherwise are the names collected to say which one.
  // A body that is no object (null too) counts no members, and checkEvent reports it; one that
  // counts any was parsed from an object's text.
  if (members === 0 || members === Object.keys(parsed as object).length) return;
  const duplicate = duplicateMemberName(text, start);
  if (duplicate === undefined) return;
  const shown = JSON.stringify(duplicate.length > 64 ? `${duplicate.slice(0, 64)}…` : duplicate);
  issues.error(
    duplicate,
    'duplicate-member',
    requirement,
    `The member ${shown} occurs more than once in the event object; JSON parsers disagree on which one counts (RFC 8259 §4), so each name may appear only once.`,
  );
}
