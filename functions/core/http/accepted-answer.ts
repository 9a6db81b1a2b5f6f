/**
 * The body of the ingest's 202 (review #11): which events were accepted, and the SHOULD-level
 * warnings. Like every answer of the ingest it is stored whole in one DynamoDB item by the
 * idempotency guard, for replays (400 KB for key, state, headers and body together), so it is
 * bounded however many events a batch holds and however long their `source` and `id` are.
 */
import { boundedIssues, MAX_PROBLEM_BYTES, type ValidationIssue } from './problems.js';

/**
 * The most a 202 body takes, in UTF-8 bytes. With the idempotency item's other attributes (a key
 * of at most 2,048 bytes, the fingerprint, the headers) it stays far below DynamoDB's 400 KB.
 */
export const MAX_ACCEPTED_ANSWER_BYTES = 256 * 1024;

export interface AcceptedEventRef {
  readonly source: string;
  readonly id: string;
}

/** A listed event; `duplicate`: its source + id was accepted before within the window, so it is not delivered again (issue 30 item 1). */
export interface AcceptedEntry extends AcceptedEventRef {
  readonly duplicate?: true;
}

export interface AcceptedAnswer {
  /** How many events were accepted: always there, whether or not each is listed. */
  readonly acceptedCount: number;
  /** The first accepted events, in request order, as many as fit the budget. */
  readonly accepted: AcceptedEntry[];
  /** How many of the accepted events were accepted before (listed or not); only when there are any. Best effort. */
  readonly duplicateCount?: number;
  /** Accepted events after the listed ones that are not named (only when there are any). */
  readonly acceptedNotListed?: number;
  readonly warnings?: ValidationIssue[];
  readonly warningsNotListed?: number;
}

/**
 * The 202 body: the warnings bounded as a problem's issue list is (`MAX_PROBLEM_BYTES`, at most
 * `MAX_LISTED_ISSUES`), then as many `{source, id}` as fit in what is left of
 * `MAX_ACCEPTED_ANSWER_BYTES` — a prefix of the events, so a client knows which ones are named.
 * Each entry is listed whole or not at all: a cut `id` would name another event.
 */
export function acceptedAnswer(
  events: readonly AcceptedEventRef[],
  warnings: readonly ValidationIssue[] = [],
  isDuplicate: (event: AcceptedEventRef) => boolean = () => false,
): AcceptedAnswer {
  const warningPart: Pick<AcceptedAnswer, 'warnings' | 'warningsNotListed'> = {};
  if (warnings.length > 0) {
    const { listed, notListed } = boundedIssues(warnings, MAX_PROBLEM_BYTES);
    Object.assign(warningPart, { warnings: listed }, notListed > 0 ? { warningsNotListed: notListed } : {});
  }
  // Everything but the list's entries, with the largest counter it may get: what the entries may use is the rest.
  const duplicates = events.filter(isDuplicate).length;
  const duplicatePart = duplicates > 0 ? { duplicateCount: duplicates } : {};
  const frame = {
    acceptedCount: events.length,
    accepted: [],
    acceptedNotListed: events.length,
    ...duplicatePart,
    ...warningPart,
  };
  const budget = MAX_ACCEPTED_ANSWER_BYTES - Buffer.byteLength(JSON.stringify(frame));
  const accepted: AcceptedEntry[] = [];
  let used = 0;
  for (const event of events) {
    const { source, id } = event;
    const entry: AcceptedEntry = isDuplicate(event) ? { source, id, duplicate: true } : { source, id };
    // The entry and the comma before it.
    const size = Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (used + size > budget) break;
    accepted.push(entry);
    used += size;
  }
  const notListed = events.length - accepted.length;
  return {
    acceptedCount: events.length,
    accepted,
    ...(notListed > 0 ? { acceptedNotListed: notListed } : {}),
    ...duplicatePart,
    ...warningPart,
  };
}
