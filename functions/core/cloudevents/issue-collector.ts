/**
 * The findings of validating a request's CloudEvents: errors and warnings as RFC 9457 problem
 * members (`ValidationIssue`), each naming its batch member, with the bounds that keep a hostile
 * body from costing unbounded time or memory (review #11). event-validation.ts and the HTTP
 * binding report into it; `http-binding/parse-results.ts` turns it into the 400 or the warnings.
 */
import { MAX_LISTED_ISSUES, type ValidationIssue } from '../http/problems.js';

/**
 * Warnings kept per request. Far above what a 1,000-event batch yields in practice (warnings are
 * grouped per kind in the 202), but a bound on memory for a body made of nothing but long names.
 */
const MAX_COLLECTED_WARNINGS = 10_000;

/**
 * Collects findings; `index` is set for batch members so every issue names its member. Once more
 * errors were found than a problem lists (review #11), `stopped` is set and validation ends: the
 * request is refused anyway, and finding the rest would only cost time.
 */
export class IssueCollector {
  readonly errors: ValidationIssue[] = [];
  readonly warnings: ValidationIssue[] = [];
  index: number | undefined = undefined;
  /** More errors than `MAX_LISTED_ISSUES` were found; the first ones are in `errors`. */
  stopped = false;
  /** Warnings found beyond `MAX_COLLECTED_WARNINGS`, counted but not kept. */
  warningsNotCollected = 0;

  error(attribute: string | undefined, rule: string, requirement: string, message: string): void {
    if (this.errors.length === MAX_LISTED_ISSUES) {
      this.stopped = true;
      return;
    }
    this.errors.push(this.issue(attribute, rule, requirement, message));
  }

  warning(attribute: string | undefined, rule: string, requirement: string, message: string): void {
    if (this.warnings.length === MAX_COLLECTED_WARNINGS) {
      this.warningsNotCollected++;
      return;
    }
    this.warnings.push(this.issue(attribute, rule, requirement, message));
  }

  private issue(attribute: string | undefined, rule: string, requirement: string, message: string): ValidationIssue {
    const issue: ValidationIssue =
      attribute === undefined ? { rule, requirement, message } : { attribute, rule, requirement, message };
    return this.index === undefined ? issue : { ...issue, index: this.index };
  }
}

/** Names and values quoted in messages: escaped and cut short, so a problem stays readable. */
export function printable(s: string): string {
  const cut = s.length > 64 ? `${s.slice(0, 64)}…` : s;
  return JSON.stringify(cut).slice(1, -1);
}
