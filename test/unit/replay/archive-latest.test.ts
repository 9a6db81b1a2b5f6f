/**
 * Reading the archive backwards for a filter test (issue 32): the newest events a caller may
 * receive, newest first, across overlapping batches, hours and days, each event once, within the
 * retention and within the bounds on archive requests.
 */
import { describe, expect, it } from 'vitest';
import { prefixesBackwards, readLatestArchived } from '../../../functions/core/replay/archive-latest.js';
import { FILTER_TEST_LIMITS } from '../../../functions/core/filter-test/filter-test-request.js';
import { MemoryEventArchive } from '../../support/memory/replay-memory-adapters.js';
import { archiveAll, archived, HOUR, NOW } from './replay-fakes.js';

const DAY = 24 * HOUR;
const ids = (events: readonly { id: string }[]) => events.map((e) => e.id);
const everything = { keep: () => true, maxRequests: 1000, maxScanned: 100_000 };

describe('issue 32 (filter test): the newest archived events', () => {
  it('CESQL-7, issue 32 (filter test): newest first across overlapping batches, an earlier hour and an earlier day, each event once', async () => {
    const archive = new MemoryEventArchive();
    const a = archived('a', NOW - 2 * DAY);
    const b = archived('b', NOW - 3 * HOUR);
    const c = archived('c', NOW + 10);
    const d = archived('d', NOW + 30);
    const e = archived('e', NOW + 20);
    const f = archived('f', NOW + 40);
    // Two router batches overlapping in time (c, d / e, f), and d archived twice (a retried batch).
    await archiveAll(archive, [[a], [b], [c, d], [e, f], [d]]);
    const read = await readLatestArchived(archive, {
      now: NOW + 1000,
      oldest: NOW - 30 * DAY,
      limit: 10,
      ...everything,
    });
    expect(ids(read.events)).toEqual(['f', 'd', 'e', 'c', 'b', 'a']);
    expect(read).toMatchObject({ scanned: 6, complete: true });

    const newest = await readLatestArchived(archive, {
      now: NOW + 1000,
      oldest: NOW - 30 * DAY,
      limit: 3,
      ...everything,
    });
    expect(ids(newest.events)).toEqual(['f', 'd', 'e']);
  });

  it('CESQL-7, issue 32 (filter test): keeps only what `keep` lets through, shows nothing before the retention or after now', async () => {
    const archive = new MemoryEventArchive();
    await archiveAll(archive, [
      [archived('old', NOW - 5 * DAY)],
      [archived('mine', NOW - HOUR), archived('theirs', NOW - HOUR + 1, 'nl.other.v1')],
      [archived('later', NOW + HOUR)],
    ]);
    const read = await readLatestArchived(archive, {
      now: NOW,
      oldest: NOW - 2 * DAY,
      limit: 10,
      ...everything,
      keep: (event) => event.type !== 'nl.other.v1',
    });
    expect(ids(read.events)).toEqual(['mine']);
    expect(read.scanned).toBe(2);
  });

  it('CESQL-7, issue 32 (filter test): stops at its bound on archive requests and says it did not reach the retention', async () => {
    const archive = new MemoryEventArchive();
    await archiveAll(
      archive,
      Array.from({ length: 20 }, (_, i) => [archived(`e${i}`, NOW - i * 1000, 'nl.other.v1')]),
    );
    const read = await readLatestArchived(archive, {
      now: NOW,
      oldest: NOW - 30 * DAY,
      limit: 5,
      ...everything,
      keep: () => false,
      maxRequests: 10,
    });
    expect(read).toMatchObject({ events: [], complete: false });
    expect(read.requests).toBeLessThanOrEqual(10);
  });

  it('CESQL-7, issue 32 (filter test): the newest 1,000 from router batches of one event each fit the bound of a trial', async () => {
    const archive = new MemoryEventArchive();
    await archiveAll(
      archive,
      Array.from({ length: 1000 }, (_, i) => [archived(`e${i}`, NOW + 1000 + i)]),
    );
    archive.requests = 0;
    const read = await readLatestArchived(archive, {
      now: NOW + HOUR - 1,
      oldest: NOW - 30 * DAY,
      limit: 1000,
      ...everything,
      maxRequests: FILTER_TEST_LIMITS.maxArchiveRequests,
    });
    expect(read.events).toHaveLength(1000);
    expect(read.events[0]!.id).toBe('e999');
    expect(read).toMatchObject({ complete: true, requests: 1001 });
    expect(archive.requests).toBe(1001);
  });

  it('CESQL-7, issue 32 (filter test): an empty archive of 30 days costs one list per hour of today and one per earlier day', () => {
    const prefixes = prefixesBackwards(NOW + 30 * 60_000, NOW - 30 * DAY);
    // NOW is 12:00 UTC: today's hours 12 down to 00, then 30 whole days.
    expect(prefixes.slice(0, 2)).toEqual(['archive/2026/11/23/12/', 'archive/2026/11/23/11/']);
    expect(prefixes[13]).toBe('archive/2026/11/22/');
    expect(prefixes).toHaveLength(13 + 30);
  });
});
