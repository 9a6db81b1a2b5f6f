import { describe, expect, it } from 'vitest';
import { acceptedAnswer, MAX_ACCEPTED_ANSWER_BYTES } from '../../../functions/core/http/accepted-answer.js';
import { MAX_LISTED_ISSUES, MAX_PROBLEM_BYTES } from '../../../functions/core/http/problems.js';

const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('review #11: the 202 body of the ingest is bounded', () => {
  it('review #11: a batch of ordinary events lists every one of them, with the count', () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({
      source: 'urn:nld:oin:00000001823288444000:systeem:lvs',
      id: `3f1e2c1a-7d1b-4c53-9a4e-${String(i).padStart(12, '0')}`,
    }));
    const answer = acceptedAnswer(events);
    expect(answer).toEqual({ acceptedCount: 1000, accepted: events });
    expect(acceptedAnswer([])).toEqual({ acceptedCount: 0, accepted: [] });
  });

  it(`review #11: 1,000 events with long sources and ids: a prefix of them is listed within ${MAX_ACCEPTED_ANSWER_BYTES} bytes, the rest counted`, () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({
      source: `/scholen/${'s'.repeat(3000)}`,
      id: `${'i'.repeat(1000)}-${i}`,
    }));
    const answer = acceptedAnswer(events);
    const body = JSON.stringify(answer);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_ACCEPTED_ANSWER_BYTES);
    expect(answer.acceptedCount).toBe(1000);
    expect(answer.accepted.length).toBeGreaterThan(50);
    expect(answer.accepted.length + answer.acceptedNotListed!).toBe(1000);
    // The listed ones are the first, in order, each whole.
    expect(answer.accepted).toEqual(events.slice(0, answer.accepted.length));
    // The budget is used: one more entry would not have fitted.
    expect(Buffer.byteLength(body) + bytesOf(events[answer.accepted.length]) + 1).toBeGreaterThan(
      MAX_ACCEPTED_ANSWER_BYTES,
    );
  });

  it('review #11: the worst case — entries that escape to twice their size, 4-byte characters, the most warnings — stays within the budget', () => {
    const worst = '"\\'.repeat(60_000) + '😀'.repeat(20_000);
    const events = Array.from({ length: 1000 }, (_, i) => ({ source: worst, id: `${worst}${i}` }));
    const issue = (i: number) => ({
      attribute: worst,
      rule: worst,
      requirement: worst,
      message: worst,
      index: i,
      indexes: Array.from({ length: 1000 }, (_, n) => n),
    });
    const warnings = Array.from({ length: 10_000 }, (_, i) => issue(i));
    const answer = acceptedAnswer(events, warnings);
    expect(bytesOf(answer)).toBeLessThanOrEqual(MAX_ACCEPTED_ANSWER_BYTES);
    expect(answer.acceptedCount).toBe(1000);
    expect(answer.accepted.length + (answer.acceptedNotListed ?? 0)).toBe(1000);
    expect(answer.warnings!.length).toBeLessThanOrEqual(MAX_LISTED_ISSUES);
    expect(bytesOf(answer.warnings)).toBeLessThanOrEqual(MAX_PROBLEM_BYTES);
    expect(answer.warnings!.length + answer.warningsNotListed!).toBe(10_000);
  });

  it('review #11: one entry larger than the whole budget is counted, never cut, and the ones after it are not listed either', () => {
    const huge = { source: '/s', id: 'x'.repeat(MAX_ACCEPTED_ANSWER_BYTES) };
    const answer = acceptedAnswer([{ source: '/s', id: 'a' }, huge, { source: '/s', id: 'b' }]);
    expect(answer).toEqual({ acceptedCount: 3, accepted: [{ source: '/s', id: 'a' }], acceptedNotListed: 2 });
  });

  it('review #11: warnings that are all listed come without a warningsNotListed count', () => {
    const warning = {
      attribute: 'source',
      rule: 'nl-urn',
      requirement: 'CE-4',
      message: 'source is not a URN in the nld namespace',
    };
    expect(acceptedAnswer([{ source: '/s', id: 'a' }], [warning])).toEqual({
      acceptedCount: 1,
      accepted: [{ source: '/s', id: 'a' }],
      warnings: [warning],
    });
  });

  it(`review #11: whatever the sizes of the entries, the 202 body stays within ${MAX_ACCEPTED_ANSWER_BYTES} bytes and lists every entry that fits`, () => {
    // About 1,300 of 3,000 entries fit, so the count has as many digits as the frame allows for and
    // the limit is exact. The first entry's size steps byte by byte, so the last entry that fits
    // lands at every distance from the limit, including exactly on it.
    const events = Array.from({ length: 3000 }, (_, i) => ({
      source: '/scholen/s',
      id: `${'x'.repeat(170)}-${String(i).padStart(4, '0')}`,
    }));
    for (let extra = 0; extra <= 220; extra++) {
      const sized = [{ ...events[0]!, id: `${'y'.repeat(extra)}${events[0]!.id}` }, ...events.slice(1)];
      const answer = acceptedAnswer(sized);
      const bytes = bytesOf(answer);
      expect(bytes, `extra ${extra}`).toBeLessThanOrEqual(MAX_ACCEPTED_ANSWER_BYTES);
      expect(answer.accepted).toEqual(sized.slice(0, answer.accepted.length));
      expect(answer.accepted.length + answer.acceptedNotListed!).toBe(3000);
      // One more entry and its comma would not have fitted, give or take the byte the count keeps in hand (it reckons a comma per entry).
      expect(bytes + 1 + bytesOf(sized[answer.accepted.length]) + 1, `extra ${extra}`).toBeGreaterThan(
        MAX_ACCEPTED_ANSWER_BYTES,
      );
    }
  });
});
