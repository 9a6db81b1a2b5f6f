/**
 * The 202's warnings, one entry per kind of finding (functions/core/ingest/grouped-warnings.ts):
 * a kind is the requirement, the rule, the attribute and the pointer, and an entry names the batch
 * members it stands for. A single event's warnings name no member.
 */
import { describe, expect, it } from 'vitest';
import type { ValidationIssue } from '../../../functions/core/http/problems.js';
import { groupedWarnings } from '../../../functions/core/ingest/index.js';

const longName = (name: string): ValidationIssue => ({
  attribute: name,
  rule: 'attribute-name-length',
  requirement: 'CE-1',
  message: `${name} is long`,
});
const contract = (pointer: string): ValidationIssue => ({
  attribute: 'data',
  pointer,
  rule: 'required',
  requirement: 'EDU-21',
  message: `${pointer} missing`,
});

describe('groupedWarnings', () => {
  it('CE-1: the warnings of a single event come back as found, two of one rule on two attributes apart and without a member index', () => {
    const warnings = [longName('aaaaaaaaaaaaaaaaaaaaaaaaa'), longName('bbbbbbbbbbbbbbbbbbbbbbbbb')];
    expect(groupedWarnings(warnings)).toEqual(warnings);
  });

  it('CE-1: in a batch, findings of one rule on different attributes are different kinds, each with its member', () => {
    const warnings = [longName('aaaaaaaaaaaaaaaaaaaaaaaaa'), longName('bbbbbbbbbbbbbbbbbbbbbbbbb')].map((warning) => ({
      ...warning,
      index: 3,
    }));
    expect(groupedWarnings(warnings)).toEqual(warnings);
  });

  it('EDU-21: in a batch, findings of one rule at different pointers are different kinds; one member stays named by its index', () => {
    const warnings = [
      { ...contract('/data/school'), index: 2 },
      { ...contract('/data/student'), index: 4 },
      { ...contract('/data/school'), index: 5 },
    ];
    expect(groupedWarnings(warnings)).toEqual([
      { ...contract('/data/school'), message: '/data/school missing (and 1 more like it)', indexes: [2, 5] },
      { ...contract('/data/student'), index: 4 },
    ]);
  });
});
