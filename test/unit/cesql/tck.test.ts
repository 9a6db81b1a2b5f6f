import { describe, expect, it } from 'vitest';
import { CesqlParseError, compileCesql } from '../../../functions/core/cesql/index.js';
import { cesqlTckAvailable, cesqlTckCases, cesqlTckRoot } from '../../support/cesql-tck.js';

/**
 * Issue 32: every case of the official CESQL v1 TCK passes — the result, and the error kind the
 * case names (none when it names none). One test per case, titled `<file>: <case>`.
 */
const cases = cesqlTckCases();

if (!cesqlTckAvailable) {
  console.warn(
    `CESQL TCK not found at ${cesqlTckRoot} (../shared/testdata/cesql-tck is absent, and KOERIER_CESQL_TCK names no folder); the TCK cases are skipped.`,
  );
}

function run(expression: string, event: Record<string, string | number | boolean>) {
  try {
    return compileCesql(expression).evaluate(event);
  } catch (error) {
    if (error instanceof CesqlParseError) return { value: undefined, error: 'parse' as const };
    throw error;
  }
}

describe.skipIf(!cesqlTckAvailable)('CESQL-2, issue 32: the CESQL v1 TCK', () => {
  it('CESQL-2, issue 32: the TCK holds its 18 files', () => {
    expect(new Set(cases.map((c) => c.file)).size).toBe(18);
  });

  it.each(cases.map((c) => [c.title, c] as const))('CESQL-2, issue 32 TCK %s', (_title, c) => {
    const outcome = run(c.expression, c.event);
    expect(outcome.error).toBe(c.error);
    if (c.result !== undefined && outcome.error !== 'parse') expect(outcome.value).toStrictEqual(c.result);
  });
});
