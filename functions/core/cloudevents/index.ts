/**
 * The CloudEvents domain core: validate events (CE and JSON requirements), read stored events,
 * and the HTTP binding (http-binding/): parse incoming requests, serialise deliveries.
 */
import type { ValidationIssue } from '../http/problems.js';
import { checkEvent } from './event-validation.js';
import { IssueCollector } from './issue-collector.js';

export type { AcceptedEvent } from './accepted-event.js';
export {
  CONTENT_MODES,
  parseCloudEventsRequest,
  toBatchMessage,
  toBinaryMessage,
  toStructuredMessage,
  type ContentMode,
  type ParseOptions,
  type ParsedEvents,
} from './http-binding/index.js';
export { EventText, readStoredEvent } from './event-text.js';

/** Validate one event given as a parsed JSON object (the JSON format), for callers that already hold one. */
export function validateEventObject(value: unknown): { errors: ValidationIssue[]; warnings: ValidationIssue[] } {
  const issues = new IssueCollector();
  checkEvent(value, issues);
  return { errors: issues.errors, warnings: issues.warnings };
}
