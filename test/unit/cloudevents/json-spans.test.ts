/**
 * The span scanner of json-spans.ts on its own: where each value of a JSON text starts and ends,
 * for text JSON.parse has accepted. The HTTP binding, the stored-event messages and the delivery
 * message slice events and data out of their texts with it byte for byte (CE-13), so a span one
 * character too long or too short changes what is stored or sent.
 */
import { describe, expect, it } from 'vitest';
import { arrayElementSpans, memberValueSpan } from '../../../functions/core/cloudevents/json-spans.js';

function elements(text: string): string[] {
  return arrayElementSpans(text).map(([start, end]) => text.slice(start, end));
}

describe('arrayElementSpans', () => {
  it('HTTP-3: an empty array has no elements, with or without whitespace inside', () => {
    expect(arrayElementSpans('[]')).toEqual([]);
    expect(arrayElementSpans(' [ \n\t ] ')).toEqual([]);
  });

  it('HTTP-3: a number or literal element ends where it ends, also right before the closing bracket', () => {
    expect(elements('[1,-2.5e3,true,null,"x",7]')).toEqual(['1', '-2.5e3', 'true', 'null', '"x"', '7']);
    expect(elements('[ 1 , false ]')).toEqual(['1', 'false']);
  });

  it('HTTP-3: past 256 KB of text an element of six million characters of tiny objects is passed over without exhausting the stack', () => {
    // A batch body may be as large as a Lambda request (6 MB). When a member is not an object,
    // the batch's spans come from this scan, before any member's size is checked; the pattern
    // that passes over nested values exhausts V8's backtrack stack at about 5.6 MB, so text this
    // long must take the loop.
    const tiny = `[${'{"":""},'.repeat(750_000)}{"":""}]`;
    expect(tiny.length).toBeGreaterThan(6_000_000);
    const spans = arrayElementSpans(`[1,${tiny}]`);
    expect(spans).toEqual([
      [1, 2],
      [3, 3 + tiny.length],
    ]);
  });
});

describe('memberValueSpan', () => {
  it('CE-13: a number or literal value as the last member ends before the closing brace', () => {
    const text = '{"id":"1","data":42}';
    const [start, end] = memberValueSpan(text, 'data')!;
    expect(text.slice(start, end)).toBe('42');
    const spaced = '{"data": true }';
    const [from, to] = memberValueSpan(spaced, 'data')!;
    expect(spaced.slice(from, to)).toBe(' true ');
  });
});
