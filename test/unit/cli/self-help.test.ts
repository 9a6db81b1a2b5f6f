/**
 * Issue 30 item 5: the pure parts of the CLI's self-help — tables that fit, ages for `--since`,
 * payload ids from a dataref, the next step for a subscription that is not active, and the hint
 * for a gateway URL without its version path.
 */
import { describe, expect, it } from 'vitest';
import { since } from '../../../cli/commands/deliveries.js';
import { payloadIdFromArgument } from '../../../cli/commands/payload.js';
import { nextStep } from '../../../cli/commands/subscription-outcome.js';
import { columnWidths } from '../../../cli/output.js';
import { versionPathHint } from '../../../cli/settings.js';

const ID = 'a'.repeat(43);

describe('the CLI helps a subscriber itself (issue 30 item 5)', () => {
  it('SELF-5, issue 30 item 5: a table wider than 100 columns is narrowed to fit, its widest columns first', () => {
    const rows = [
      ['at', 'attempt', 'error'],
      ['2026-11-29T10:00:00.000Z', '1', 'x'.repeat(300)],
    ];
    const widths = columnWidths(rows, 100)!;
    expect(widths.reduce((a, b) => a + b, 0) + widths.length + 1).toBe(100);
    expect(widths.slice(0, 2)).toEqual([26, 9]);
    expect(columnWidths([['a', 'b']], 100)).toBeUndefined();
  });

  it('SELF-5, issue 30 item 5: narrowing never cuts an id: a table of ids may stay wider than asked', () => {
    const id = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';
    const widths = columnWidths([[id, id, id, 'some prose that may wrap between its words']], 100)!;
    expect(widths.slice(0, 3)).toEqual([id.length + 2, id.length + 2, id.length + 2]);
    // The prose gives way, down to the 8-character minimum (10 with its padding).
    expect(widths[3]).toBe(10);
  });

  it('SELF-5, issue 30 item 5: --since takes a date-time or an age', () => {
    const now = Date.parse('2026-11-29T12:00:00Z');
    expect(since('6h', undefined, now)).toBe('2026-11-29T06:00:00.000Z');
    expect(since('2d', undefined, now)).toBe('2026-11-27T12:00:00.000Z');
    expect(since('2026-11-23T09:00:00Z')).toBe('2026-11-23T09:00:00Z');
    expect(() => since('yesterday')).toThrow(/date-time/);
  });

  it('SELF-5, issue 30 item 5: payload get reads the id from a dataref and refuses anything else', () => {
    expect(payloadIdFromArgument(`https://koerier.example.org/v1/payloads/${ID}`)).toBe(ID);
    expect(payloadIdFromArgument(ID)).toBe(ID);
    expect(() => payloadIdFromArgument('https://elders.example/payloads/kort')).toThrow(/not a Koerier dataref/);
  });

  it('SELF-5, issue 30 item 5: a subscription that is not active has a next step; an active one none', () => {
    const base = { id: 's1', sink: 'https://x', createdat: '', updatedat: '' } as const;
    expect(nextStep({ ...base, status: 'rejected' } as never)).toContain('koerier subscriptions revalidate s1');
    expect(nextStep({ ...base, status: 'suspended', suspendedfor: 'credential-required' } as never)).toContain(
      'koerier subscriptions update s1',
    );
    expect(nextStep({ ...base, status: 'active' } as never)).toBeUndefined();
  });

  it('SELF-5, issue 30 item 5: a gateway URL without a version path gets the hint, one with it none', () => {
    expect(versionPathHint('https://koerier.example.org')).toContain('https://koerier.example.org/v1');
    expect(versionPathHint('https://koerier.example.org/v1')).toBeUndefined();
    expect(versionPathHint('https://abc.execute-api.eu-central-1.amazonaws.com/prod/v1')).toBeUndefined();
  });
});
