/**
 * The archive search's use case (issue 30 item 4, GET /events) without emulators: a publisher
 * finds only the events of sources its grants cover, an operator every event; type, source and
 * the time window narrow it; the retention bounds it; the query is checked.
 */
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import { KoerierError } from '../../../functions/core/http/problems.js';
import { readEventSearchQuery, searchEvents } from '../../../functions/core/trace/event-search.js';
import { MemoryEventArchive } from '../../support/memory/replay-memory-adapters.js';
import { archiveAll, archived, HOUR, NOW } from '../replay/replay-fakes.js';

const SCHOOL_A = 'urn:nld:oin:0001:lvs';
const SCHOOL_B = 'https://school-b.example/lvs';
const publishGrants = { 'school-a': ['urn:nld:oin:0001'], 'school-b': ['https://school-b.example'] };
const principal = (clientId: string, ...scopes: string[]): Principal => ({ clientId, scopes: new Set(scopes) });
const query = (q: Record<string, string> = {}) => readEventSearchQuery({ query: q });

async function world() {
  const archive = new MemoryEventArchive();
  await archiveAll(archive, [
    [archived('a-old', NOW - 30 * HOUR, 'nl.edu.leerling.v1', SCHOOL_A)],
    [archived('a-1', NOW - 3 * HOUR, 'nl.edu.leerling.v1', SCHOOL_A)],
    [archived('b-1', NOW - 2 * HOUR, 'nl.edu.leerling.v1', SCHOOL_B)],
    [
      archived('a-2', NOW - HOUR, 'nl.edu.rooster.v1', SCHOOL_A),
      archived('a-3', NOW - HOUR + 1, 'nl.edu.leerling.v1', `${SCHOOL_A}:x`),
    ],
  ]);
  return { archive, publishGrants, now: NOW, retentionMs: 24 * HOUR };
}

const ids = (answer: { events: readonly { id: string }[] }) => answer.events.map((event) => event.id);

describe('issue 30 item 4: searching the archive by type, source and time (GET /events)', () => {
  it('SELF-7, issue 30 item 4: a publisher finds only the events of the sources its grants cover, newest first; an operator finds every one', async () => {
    const deps = await world();
    expect(ids(await searchEvents(query(), principal('school-a', 'events:publish'), deps))).toEqual([
      'a-3',
      'a-2',
      'a-1',
    ]);
    expect(ids(await searchEvents(query(), principal('school-b', 'events:publish'), deps))).toEqual(['b-1']);
    // No grant: nothing, and the archive is not read for it.
    expect(await searchEvents(query(), principal('stranger', 'events:publish'), deps)).toEqual({
      events: [],
      scanned: 0,
      complete: true,
    });
    const all = await searchEvents(query(), principal('ops', 'admin'), deps);
    expect(ids(all)).toEqual(['a-3', 'a-2', 'b-1', 'a-1']);
    // Never the data: the identity and the acceptance time only.
    expect(all.events[0]).toEqual({
      source: `${SCHOOL_A}:x`,
      id: 'a-3',
      type: 'nl.edu.leerling.v1',
      acceptedAt: new Date(NOW - HOUR + 1).toISOString(),
    });
  });

  it('issue 30 item 4: type, source and the window (since inclusive, until exclusive) narrow the search; the retention bounds it', async () => {
    const deps = await world();
    const operator = principal('ops', 'admin');
    expect(ids(await searchEvents(query({ type: 'nl.edu.leerling.v1' }), operator, deps))).toEqual([
      'a-3',
      'b-1',
      'a-1',
    ]);
    expect(ids(await searchEvents(query({ source: SCHOOL_A }), operator, deps))).toEqual(['a-2', 'a-1']);
    const window = {
      since: new Date(NOW - 3 * HOUR).toISOString(),
      until: new Date(NOW - HOUR + 1).toISOString(),
    };
    expect(ids(await searchEvents(query(window), operator, deps))).toEqual(['a-2', 'b-1', 'a-1']);
    expect(ids(await searchEvents(query({ ...window, limit: '1' }), operator, deps))).toEqual(['a-2']);
    // a-old is in the archive still, but older than the retention of 24 hours.
    const old = { since: new Date(NOW - 48 * HOUR).toISOString(), until: new Date(NOW - 20 * HOUR).toISOString() };
    expect(ids(await searchEvents(query(old), operator, deps))).toEqual([]);
  });

  it('issue 30 item 4: an unknown parameter, a time that is not RFC 3339, since not before until and a limit out of range are refused as invalid-parameter', () => {
    const refusal = (q: Record<string, string>) => {
      try {
        query(q);
      } catch (error) {
        return error instanceof KoerierError ? `${error.problem.status} ${error.problem.type}` : String(error);
      }
      return 'accepted';
    };
    expect(refusal({ data: 'x' })).toMatch(/^400 /);
    expect(refusal({ since: 'yesterday' })).toMatch(/^400 .*invalid-parameter$/);
    expect(refusal({ since: '2026-11-23T10:00:00Z', until: '2026-11-23T10:00:00Z' })).toMatch(/invalid-parameter$/);
    expect(refusal({ limit: '0' })).toMatch(/invalid-parameter$/);
    expect(refusal({ limit: '201' })).toMatch(/invalid-parameter$/);
    expect(refusal({ limit: '2.5' })).toMatch(/invalid-parameter$/);
    expect(refusal({ type: 't', source: 's', since: '2026-11-23T10:00:00+01:00', limit: '200' })).toBe('accepted');
  });
});
