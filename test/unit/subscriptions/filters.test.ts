import { describe, expect, it } from 'vitest';
import { filterMatches, parseFilters, type Filter } from '../../../functions/core/subscriptions/filters.js';

const event = {
  specversion: '1.0',
  id: 'e-1',
  source: 'urn:nld:oin:00000001234567890000:systeem:lvs',
  type: 'nl.edu.leerling.ingeschreven.v1',
  subject: 'leerling/42',
  priority: 3,
  urgent: true,
};

const matches = (filter: Filter) => filterMatches(filter, event);

describe('filter dialects of the CloudEvents Subscriptions API', () => {
  it('EDU-8: exact matches when every named attribute equals its value', () => {
    expect(matches({ exact: { type: 'nl.edu.leerling.ingeschreven.v1' } })).toBe(true);
    expect(matches({ exact: { type: 'nl.edu.leerling.ingeschreven.v1', subject: 'leerling/42' } })).toBe(true);
  });

  it('EDU-8: exact does not match another value, a case difference, one differing attribute, or a missing attribute', () => {
    expect(matches({ exact: { type: 'nl.edu.leerling.ingeschreven.v2' } })).toBe(false);
    expect(matches({ exact: { type: 'NL.EDU.LEERLING.INGESCHREVEN.V1' } })).toBe(false);
    expect(matches({ exact: { type: 'nl.edu.leerling.ingeschreven.v1', subject: 'leerling/43' } })).toBe(false);
    expect(matches({ exact: { dataschema: 'https://example.org/schema' } })).toBe(false);
  });

  it('EDU-8: exact compares integer and boolean extensions by their canonical string', () => {
    expect(matches({ exact: { priority: '3', urgent: 'true' } })).toBe(true);
    expect(matches({ exact: { priority: '03' } })).toBe(false);
  });

  it('EDU-8: prefix matches when the attribute starts with the value, and not otherwise', () => {
    expect(matches({ prefix: { type: 'nl.edu.' } })).toBe(true);
    expect(matches({ prefix: { type: 'nl.edu.', source: 'urn:nld:oin:' } })).toBe(true);
    expect(matches({ prefix: { type: 'nl.gov.' } })).toBe(false);
    expect(matches({ prefix: { type: 'NL.' } })).toBe(false);
    expect(matches({ prefix: { dataref: 'https://' } })).toBe(false);
  });

  it('EDU-8: suffix matches when the attribute ends with the value, and not otherwise', () => {
    expect(matches({ suffix: { type: '.v1' } })).toBe(true);
    expect(matches({ suffix: { subject: '/42', type: 'ingeschreven.v1' } })).toBe(true);
    expect(matches({ suffix: { type: '.v2' } })).toBe(false);
    expect(matches({ suffix: { subject: '/42', type: '.v2' } })).toBe(false);
  });

  it('EDU-8: an attribute the event does not carry never matches, even when Object.prototype has a member of that name', () => {
    const parsed = parseFilters([{ prefix: { constructor: 'function Object' } }]);
    expect(parsed.issues).toEqual([]);
    expect(matches(parsed.filters[0]!)).toBe(false);
    expect(matches({ suffix: { toString: '}' } })).toBe(false);
    expect(matches({ not: { prefix: { constructor: 'function' } } })).toBe(true);
  });

  it('EDU-8: all matches only when every nested filter does', () => {
    expect(matches({ all: [{ prefix: { type: 'nl.edu.' } }, { exact: { subject: 'leerling/42' } }] })).toBe(true);
    expect(matches({ all: [{ prefix: { type: 'nl.edu.' } }, { exact: { subject: 'leerling/43' } }] })).toBe(false);
  });

  it('EDU-8: any matches when at least one nested filter does, and not when none does', () => {
    expect(matches({ any: [{ exact: { subject: 'leerling/43' } }, { suffix: { type: '.v1' } }] })).toBe(true);
    expect(matches({ any: [{ exact: { subject: 'leerling/43' } }, { suffix: { type: '.v2' } }] })).toBe(false);
  });

  it('EDU-8: not inverts its nested filter', () => {
    expect(matches({ not: { exact: { subject: 'leerling/43' } } })).toBe(true);
    expect(matches({ not: { prefix: { type: 'nl.edu.' } } })).toBe(false);
  });
});

describe('filter validation', () => {
  const issuesOf = (value: unknown) => parseFilters(value).issues;

  it('EDU-14: accepts every supported dialect, nested', () => {
    const filters = [
      { exact: { type: 'a.b' } },
      { prefix: { source: 'urn:' } },
      { suffix: { subject: '/1' } },
      { all: [{ exact: { subject: 's' } }] },
      { any: [{ exact: { subject: 's' } }, { not: { exact: { type: 'x' } } }] },
    ];
    const parsed = parseFilters(filters);
    expect(parsed.issues).toEqual([]);
    expect(parsed.filters).toEqual(filters);
  });

  it('EDU-14: an unknown dialect is rejected, naming its place', () => {
    expect(issuesOf([{ jsonpath: '$.type' }])).toEqual([
      expect.objectContaining({ attribute: 'filters[0]', rule: 'unsupported-dialect' }),
    ]);
    expect(issuesOf([{ all: [{ regex: { type: '.*' } }] }])).toEqual([
      expect.objectContaining({ attribute: 'filters[0].all[0]', rule: 'unsupported-dialect' }),
    ]);
  });

  it('EDU-14: empty values, empty attribute names and empty maps are rejected', () => {
    expect(issuesOf([{ exact: { type: '' } }])).toEqual([
      expect.objectContaining({ attribute: 'filters[0].exact.type', rule: 'non-empty-string' }),
    ]);
    expect(issuesOf([{ prefix: { '': 'x' } }])).toEqual([expect.objectContaining({ rule: 'attribute-name' })]);
    expect(issuesOf([{ suffix: {} }])).toEqual([
      expect.objectContaining({ attribute: 'filters[0].suffix', rule: 'non-empty-object' }),
    ]);
    expect(issuesOf([{ exact: { type: 42 } }])).toEqual([expect.objectContaining({ rule: 'non-empty-string' })]);
  });

  it('EDU-14: all and any need a non-empty list; not needs one filter; an expression has exactly one dialect', () => {
    expect(issuesOf([{ all: [] }])).toEqual([expect.objectContaining({ rule: 'non-empty-array' })]);
    expect(issuesOf([{ any: {} }])).toEqual([expect.objectContaining({ rule: 'non-empty-array' })]);
    expect(issuesOf([{ not: [{ exact: { type: 'x' } }] }])).toEqual([
      expect.objectContaining({ attribute: 'filters[0].not', rule: 'filter-expression' }),
    ]);
    expect(issuesOf([{ exact: { type: 'x' }, prefix: { type: 'y' } }])).toEqual([
      expect.objectContaining({ rule: 'filter-expression' }),
    ]);
    expect(issuesOf({ exact: { type: 'x' } })).toEqual([
      expect.objectContaining({ attribute: 'filters', rule: 'array' }),
    ]);
  });

  it('EDU-14: filters that would make routing expensive are refused', () => {
    let deep: unknown = { exact: { type: 'x' } };
    for (let i = 0; i < 10; i++) deep = { not: deep };
    expect(issuesOf([deep])).toEqual([expect.objectContaining({ rule: 'too-deep' })]);
    const wide = Array.from({ length: 70 }, (_, i) => ({ exact: { subject: `s${i}` } }));
    expect(issuesOf(wide)).toEqual([expect.objectContaining({ rule: 'too-complex' })]);
  });
});

describe('CESQL-3, issue 32 item 3: the sql dialect', () => {
  const issuesOf = (value: unknown) => parseFilters(value).issues;

  it('CESQL-3, issue 32 item 3: an sql filter matches as its CESQL expression evaluates, alone and inside all, any and not', () => {
    const sql = "type LIKE 'nl.edu.leerling.%' AND subject <> 'test' AND priority >= 3";
    expect(matches({ sql })).toBe(true);
    expect(matches({ sql: "type LIKE 'nl.overheid.zaken.%'" })).toBe(false);
    expect(matches({ all: [{ sql }, { exact: { subject: 'leerling/42' } }] })).toBe(true);
    expect(matches({ all: [{ sql }, { exact: { subject: 'leerling/43' } }] })).toBe(false);
    expect(matches({ any: [{ sql: 'urgent = false' }, { prefix: { type: 'nl.edu.' } }] })).toBe(true);
    expect(matches({ not: { sql } })).toBe(false);
  });

  it('CESQL-3, issue 32 item 3: an expression that errors does not match, nor its negation by NOT inside it; the not dialect negates the filter s false', () => {
    expect(matches({ sql: "schoolcode = '12AB'" })).toBe(false);
    expect(matches({ sql: "NOT (schoolcode = '12AB')" })).toBe(false);
    expect(matches({ sql: "EXISTS schoolcode AND schoolcode = '12AB'" })).toBe(false);
    expect(matches({ sql: "NOT EXISTS schoolcode OR schoolcode <> '12AB'" })).toBe(true);
    // Subscriptions API 3.2.4.1: `not` is the negation of the nested filter's result, false here.
    expect(matches({ not: { sql: "schoolcode = '12AB'" } })).toBe(true);
  });

  it('CESQL-3, issue 32 item 3: a valid expression is kept as written', () => {
    const filters = [
      { sql: "type IN ('a.b.v1', 'a.c.v1')" },
      { any: [{ sql: 'EXISTS subject' }, { exact: { type: 'x' } }] },
    ];
    expect(parseFilters(filters)).toEqual({ filters, issues: [] });
  });

  it('CESQL-3, issue 32 item 3: an invalid expression is refused, naming its place, the position and what was expected', () => {
    expect(issuesOf([{ all: [{ sql: 'type LIKE 123' }] }])).toEqual([
      {
        attribute: 'filters[0].all[0].sql',
        rule: 'cesql',
        requirement: 'EDU-14',
        message:
          '"sql" is not a CESQL v1 expression at position 11: expected a string literal as the LIKE pattern, found "123"',
      },
    ]);
    expect(issuesOf([{ sql: "NOPE(type) = 'x'" }])).toEqual([
      expect.objectContaining({
        rule: 'cesql',
        message: expect.stringContaining('no built-in function NOPE takes 1 argument'),
      }),
    ]);
    expect(issuesOf([{ sql: '' }])).toEqual([expect.objectContaining({ rule: 'non-empty-string' })]);
    expect(issuesOf([{ sql: { type: 'x' } }])).toEqual([expect.objectContaining({ rule: 'non-empty-string' })]);
    expect(issuesOf([{ sql: `type = '${'x'.repeat(5000)}'` }])).toEqual([
      expect.objectContaining({ message: expect.stringContaining('at most 4096 bytes') }),
    ]);
  });
});
