/**
 * The Filter schema /openapi.json shows (filter-schema.ts) and the dialects' checker (parseFilters)
 * are two readings of one rule set (issue 29 item 2): what the schema refuses, parseFilters
 * refuses, and where they part it is for a limit no JSON Schema keyword states (8 levels, 64
 * expressions, an expression that parses), which the description states in words.
 */
import { Check } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { schemaIssues } from '../../../functions/core/http/json-body.js';
import { FILTER } from '../../../functions/core/subscriptions/filter-schema.js';
import { parseFilters } from '../../../functions/core/subscriptions/filters.js';

const LEAVES: readonly unknown[] = [
  { exact: { type: 'nl.edu.x.v1' } },
  { prefix: { source: 'urn:', subject: 'a' } },
  { suffix: { a1: '.v1' } },
  { exact: {} },
  { exact: { Type: 'x' } },
  { exact: { ['a'.repeat(65)]: 'x' } },
  { exact: { type: '' } },
  { exact: { type: 'x'.repeat(1024) } },
  { exact: { type: 'x'.repeat(1025) } },
  { exact: { type: 7 } },
  { prefix: [] },
  { sql: "type = 'x'" },
  { sql: '' },
  { sql: 7 },
  { sql: `type = '${'x'.repeat(4087)}'` },
  { sql: `type = '${'x'.repeat(4088)}'` },
  { jsonpath: '$.x' },
  { exact: { type: 'x' }, prefix: { type: 'y' } },
  {},
  null,
  'exact',
  [],
];

/** Every leaf alone and inside all, any and not, and the combinators' own wrong forms. */
function probes(): unknown[] {
  const found: unknown[] = [...LEAVES, { all: [] }, { any: {} }, { not: [] }, { not: null }];
  for (const leaf of LEAVES) found.push({ all: [leaf] }, { any: [LEAVES[0], leaf] }, { not: leaf });
  return found;
}

describe('the Filter schema and parseFilters (issue 29 item 2)', () => {
  it('issue 29 item 2, EDU-14: a filter the Filter schema takes parseFilters takes, and one it refuses parseFilters refuses', () => {
    schemaIssues(FILTER, {}); // TypeBox's checker is given its formats and kinds on the first check
    for (const filter of probes()) {
      const shown = JSON.stringify(filter).slice(0, 120);
      expect(Check(FILTER.schema, filter), shown).toBe(parseFilters([filter]).issues.length === 0);
    }
  });

  it('issue 29 item 2, CESQL-3: the sql text is at most 4,096 bytes: the schema counts characters, so a text of two-byte letters passes it and is refused', () => {
    const accented = { sql: `type = '${'é'.repeat(3000)}'` };
    expect(Check(FILTER.schema, accented)).toBe(true);
    expect(parseFilters([accented]).issues).toEqual([
      expect.objectContaining({ rule: 'cesql', message: expect.stringContaining('at most 4096 bytes') }),
    ]);
  });

  it('issue 29 item 2, EDU-14: the limits no keyword states are parseFilters’ alone, and the description says them', () => {
    let deep: unknown = { exact: { type: 'x' } };
    for (let i = 0; i < 8; i++) deep = { not: deep };
    const wide = Array.from({ length: 65 }, (_, i) => ({ exact: { subject: `s${i}` } }));
    expect(Check(FILTER.schema, deep)).toBe(true);
    expect(parseFilters([deep]).issues.map((issue) => issue.rule)).toEqual(['too-deep']);
    expect(parseFilters(wide).issues.map((issue) => issue.rule)).toEqual(['too-complex']);
    expect(FILTER.schema.description).toContain('at most 8 levels');
    expect(FILTER.schema.description).toContain('at most 64 expressions');
    expect(Check(FILTER.schema, { sql: 'type LIKE 123' })).toBe(true);
    expect(parseFilters([{ sql: 'type LIKE 123' }]).issues.map((issue) => issue.rule)).toEqual(['cesql']);
  });
});
