/**
 * The console's 7-day charts count what the attempt history says (issue 30 item 4): per hour of
 * the last 7 days, by outcome, with the hour's median and highest latency; and their scale ends on
 * a round number. Pure functions of console/src, without a browser (the browser test checks the
 * drawn SVG: test/e2e/console-self-service.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { HOUR_MS, WEEK_HOURS, hourlyDeliveries } from '../../../console/src/delivery-week.js';
import { niceCeiling } from '../../../console/src/chart-scale.js';

const NOW = Date.UTC(2026, 10, 29, 14, 20);
const at = (msBeforeNow: number) => new Date(NOW - msBeforeNow).toISOString();

describe('issue 30 item 4: the console counts the week of attempts per hour', () => {
  it('SELF-6, issue 30 item 4: attempts are counted per hour of the last 7 days by outcome, with the median and highest latency of each hour', () => {
    const week = hourlyDeliveries(
      [
        { at: at(5 * 60_000), outcome: 'delivered', latencyMs: 30 },
        { at: at(10 * 60_000), outcome: 'delivered', latencyMs: 10 },
        { at: at(15 * 60_000), outcome: 'retrying', latencyMs: 200 },
        { at: at(19 * 60_000), outcome: 'dead-lettered', latencyMs: 50 },
        // The hour before: 13:00–14:00.
        { at: at(21 * 60_000), outcome: 'retired' },
        // Older than the 7 days: left out.
        { at: at(WEEK_HOURS * HOUR_MS), outcome: 'delivered', latencyMs: 1 },
        { at: 'not a time', outcome: 'delivered' },
      ],
      NOW,
    );
    expect(week.hours).toHaveLength(168);
    expect(week.hours.at(-1)).toBe(Date.UTC(2026, 10, 29, 14));
    expect(week.hours[0]).toBe(Date.UTC(2026, 10, 22, 15));
    expect(week.counted).toBe(5);
    expect(week.delivered.at(-1)).toBe(2);
    expect(week.failed.at(-1)).toBe(1);
    expect(week.deadLettered.at(-1)).toBe(1);
    expect(week.failed.at(-2)).toBe(1);
    expect(week.delivered.slice(0, -1).every((n) => n === 0)).toBe(true);
    // Four latencies this hour (10, 30, 50, 200): the median is the mean of the middle two.
    expect(week.medianLatency.at(-1)).toBe(40);
    expect(week.highestLatency.at(-1)).toBe(200);
    // An hour whose attempt had no answer has no latency, and an empty hour none either.
    expect(week.medianLatency.at(-2)).toBeUndefined();
    expect(week.medianLatency[0]).toBeUndefined();
  });

  it('SELF-6, issue 30 item 4: the scale ends on 1, 2 or 5 times a power of ten at or above the highest value', () => {
    expect([1, 3, 5, 7, 49, 110, 0.3].map(niceCeiling)).toEqual([1, 5, 5, 10, 50, 200, 0.5]);
  });
});
