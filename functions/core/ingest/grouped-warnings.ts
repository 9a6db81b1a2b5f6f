/**
 * One warning per kind of finding, with the batch members it concerns, so a batch of many members
 * with the same finding gets one entry (review #11); the 202 then bounds the list
 * (functions/core/http/accepted-answer.ts).
 */
import type { ValidationIssue } from '../http/problems.js';

export function groupedWarnings(warnings: readonly ValidationIssue[]): ValidationIssue[] {
  if (warnings.every((warning) => warning.index === undefined)) return [...warnings];
  const groups = new Map<string, { warning: ValidationIssue; indexes: number[] }>();
  for (const warning of warnings) {
    const kind = `${warning.requirement}|${warning.rule}|${warning.attribute ?? ''}|${warning.pointer ?? ''}`;
    const group = groups.get(kind);
    if (group) group.indexes.push(warning.index ?? -1);
    else groups.set(kind, { warning, indexes: [warning.index ?? -1] });
  }
  return [...groups.values()].map(({ warning: { index: _index, ...first }, indexes }) =>
    indexes.length === 1
      ? { ...first, index: indexes[0]! }
      : { ...first, message: `${first.message} (and ${indexes.length - 1} more like it)`, indexes },
  );
}
