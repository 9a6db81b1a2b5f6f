import { describe, expect, it } from 'vitest';
import { jsonNestingDepth } from '../../../functions/core/subscriptions/json-bounds.js';
import { parsePullMembers } from '../../../functions/core/subscriptions/pull-subscription-input.js';

describe('the nesting bound on a subscription body, counted on the text', () => {
  it('review item 9 (EDU-14): depth is the deepest nesting of objects and arrays, not how many were opened', () => {
    expect(jsonNestingDepth('{"a":[{"b":1}]}')).toBe(3);
    expect(jsonNestingDepth('[{},{},{}]')).toBe(2);
    expect(jsonNestingDepth('[[],[],[]]')).toBe(2);
    expect(jsonNestingDepth('[[[1]],[1]]')).toBe(3);
    expect(jsonNestingDepth('[1,[2]]')).toBe(2);
  });

  it('review item 9 (EDU-14): brackets inside strings, escaped quotes included, do not count', () => {
    expect(jsonNestingDepth('["[[[[", {"x": "]]}"}]')).toBe(2);
    expect(jsonNestingDepth(String.raw`["a\"[[[[", "b\\", [[1]]]`)).toBe(3);
    expect(jsonNestingDepth('["x", [[1]]]')).toBe(3);
  });

  it('review item 9 (EDU-14): counting stops one past the limit, however deep the text goes', () => {
    // The caller only needs "over the limit"; stopping early keeps a 100,000-level body cheap.
    expect(jsonNestingDepth('['.repeat(100_000), 2)).toBe(3);
    expect(jsonNestingDepth('[[]]', 2)).toBe(2);
  });
});

describe('pull members read on their own', () => {
  it('EDU-17: out-of-range queue settings yield no settings at all, only the issues', () => {
    const issues: string[] = [];
    const add = (attribute: string, rule: string) => void issues.push(`${attribute}:${rule}`);
    expect(parsePullMembers({ maxdeliverycount: 0 }, [], add)).toBeUndefined();
    expect(parsePullMembers({ retentionseconds: 10 }, [], add)).toBeUndefined();
    expect(issues).toEqual(['maxdeliverycount:range', 'retentionseconds:range']);
    expect(parsePullMembers({}, [], add)).toEqual({ maxDeliveryCount: 10, retentionSeconds: 7 * 24 * 3600 });
  });
});
