/**
 * The 202 of an accepted request: the accepted `source`/`id` pairs and the SHOULD-level warnings,
 * grouped per kind and cut to a budget, so the body fits the idempotency item that keeps it for
 * replays (review #11).
 */
import type { AcceptedEvent } from '../cloudevents/index.js';
import { jsonResponse, type HttpResponse } from '../http/messages.js';
import { boundedIssues, MAX_PROBLEM_BYTES, type ValidationIssue } from '../http/problems.js';

export function acceptedAnswer(events: readonly Pick<AcceptedEvent, 'source' | 'id'>[], warnings: readonly ValidationIssue[]): HttpResponse {
  return jsonResponse(202, {
    accepted: events.map(({ source, id }) => ({ source, id })),
    ...(warnings.length > 0 ? boundedWarnings(warnings) : {}),
  });
}

/**
 * One warning per kind of finding, with the batch members it concerns, cut to the same budget as
 * a problem's issue list (review #11), so a large batch cannot grow the 202 body (which the
 * idempotency store keeps in one item) past what it can hold.
 */
function boundedWarnings(warnings: readonly ValidationIssue[]): { warnings: ValidationIssue[]; warningsNotListed?: number } {
  const { listed, notListed } = boundedIssues(groupedWarnings(warnings), MAX_PROBLEM_BYTES);
  return notListed > 0 ? { warnings: listed, warningsNotListed: notListed } : { warnings: listed };
}

export function groupedWarnings(warnings: readonly ValidationIssue[]): ValidationIssue[] {
  if (warnings.every((warning) => warning.index === undefined)) return [...warnings];
  const groups = new Map<string, { warning: ValidationIssue; indexes: number[] }>();
  for (const warning of warnings) {
    const kind = `${warning.requirement}|${warning.rule}|${warning.attribute ?? ''}`;
    const group = groups.get(kind);
    if (group) group.indexes.push(warning.index ?? -1);
    else groups.set(kind, { warning, indexes: [warning.index ?? -1] });
  }
  return [...groups.values()].map(({ warning: { index: _index, ...first }, indexes }) =>
    indexes.length === 1 ? { ...first, index: indexes[0]! } : { ...first, message: `${first.message} (and ${indexes.length - 1} more like it)`, indexes },
  );
}
