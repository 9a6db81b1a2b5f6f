/**
 * The CloudEvents domain core: parse and validate incoming requests (CE, HTTP and JSON
 * requirements), read stored events, and serialise them for delivery.
 */
import type { ValidationIssue } from '../http/problems.js';
import { IssueCollector, checkEvent } from './event-validation.js';

export type { AcceptedEvent } from './accepted-event.js';
export { parseCloudEventsRequest, type ContentMode, type ParseOptions, type ParseOutcome } from './request-parser.js';
export { readStoredEvent, toBatchMessage, toBinaryMessage, toStructuredMessage } from './stored-events.js';

/** Validate one event given as a parsed JSON object (the JSON format), for callers that already hold one. */
export function validateEventObject(value: unknown): { errors: ValidationIssue[]; warnings: ValidationIssue[] } {
  const issues = new IssueCollector();
  checkEvent(value, issues);
  return { errors: issues.errors, warnings: issues.warnings };
}
