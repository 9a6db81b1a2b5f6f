/**
 * Reads the archive backwards: the newest archived events that pass `keep`, newest first (issue 32,
 * `POST /subscriptions/filters/test` with `archived`). The archive's keys are laid out for reading
 * forwards (archive-format.ts), and S3 lists only in key order, so the newest are found by listing
 * hour prefixes of the current day from the current hour back, then whole earlier days (one list
 * each, so an empty day costs one request), down to the retention. Objects are opened newest
 * (last acceptance time) first; an event is handed out once no unopened object can hold a later
 * one, which the last-acceptance time in each object's name tells, and each event once (a batch
 * archived twice holds the same event twice).
 *
 * A caller entitled to little of a busy archive could make this read everything: `maxRequests`
 * and `maxScanned` bound it, and the answer says whether the reader stopped at a bound before it
 * reached the retention (`complete: false`). No new port method: `list(prefix)` takes a day's prefix
 * as well as an hour's.
 */
import {
  compareArchived,
  decodeArchiveObject,
  hourPrefix,
  parseArchiveKey,
  positionOf,
  type ArchivedEvent,
  type ArchiveObjectName,
} from './archive-format.js';
import type { EventArchive } from './ports.js';

export interface LatestRequest {
  /** Epoch ms: nothing accepted after this is handed out. */
  readonly now: number;
  /** Epoch ms: nothing accepted before this (the retention) is handed out. */
  readonly oldest: number;
  /** At most this many events. */
  readonly limit: number;
  /** Which events count; the others are read and passed (the caller's entitlement). */
  readonly keep: (event: ArchivedEvent) => boolean;
  /** Archive requests (lists and gets) at most. */
  readonly maxRequests: number;
  /** Archived events looked at, kept or not, at most. */
  readonly maxScanned: number;
}

export interface LatestArchived {
  /** Newest first. */
  readonly events: readonly ArchivedEvent[];
  /** Archived events looked at (each once), kept or not. */
  readonly scanned: number;
  /** Archive requests made (lists and gets). */
  readonly requests: number;
  /** True when `limit` events were found or the whole retention was read; false when a bound stopped the reader first. */
  readonly complete: boolean;
}

const HOUR_MS = 3_600_000;
/** Archive objects fetched in parallel. */
const GETS_AT_ONCE = 16;
const DAY_MS = 24 * HOUR_MS;

export async function readLatestArchived(archive: EventArchive, request: LatestRequest): Promise<LatestArchived> {
  const { now, oldest, limit, keep } = request;
  const found: ArchivedEvent[] = [];
  const seen = new Set<string>();
  let scanned = 0;
  let requests = 0;
  const exhausted = () => requests >= request.maxRequests || scanned >= request.maxScanned;
  let pending: ArchivedEvent[] = [];

  for (const prefix of prefixesBackwards(now, oldest)) {
    if (exhausted()) return { events: found, scanned, requests, complete: false };
    requests++;
    const names = (await archive.list(prefix))
      .map(parseArchiveKey)
      .filter((name): name is ArchiveObjectName => name !== undefined && name.lastAt >= oldest && name.firstAt <= now)
      .sort((a, b) => b.lastAt - a.lastAt || (a.key < b.key ? 1 : -1));
    for (let start = 0; start < names.length; start += GETS_AT_ONCE) {
      if (exhausted()) return { events: found, scanned, requests, complete: false };
      // A few objects at once: a trial of the newest 1,000 from batches of one is 1,000 gets.
      const window = names.slice(start, start + Math.min(GETS_AT_ONCE, request.maxRequests - requests));
      requests += window.length;
      const bodies = await Promise.all(window.map((name) => archive.get(name.key)));
      for (let offset = 0; offset < window.length; offset++) {
        const body = bodies[offset];
        // Gone since it was listed: expired by the lifecycle rule, past retention anyway.
        if (body !== undefined)
          pending.push(...decodeArchiveObject(body).filter((e) => e.acceptedAt >= oldest && e.acceptedAt <= now));
        // Every unopened object of this prefix ends at nextLast or earlier; earlier prefixes hold earlier events.
        const nextLast = names[start + offset + 1]?.lastAt ?? Number.NEGATIVE_INFINITY;
        const safe = pending.filter((event) => event.acceptedAt > nextLast);
        pending = pending.filter((event) => event.acceptedAt <= nextLast);
        for (const event of safe.sort((a, b) => compareArchived(positionOf(b), positionOf(a)))) {
          const identity = `${event.acceptedAt}\n${event.source}\n${event.id}`;
          if (seen.has(identity)) continue;
          seen.add(identity);
          scanned++;
          if (keep(event)) found.push(event);
          if (found.length >= limit) return { events: found, scanned, requests, complete: true };
        }
      }
    }
  }
  return { events: found, scanned, requests, complete: true };
}

/**
 * The prefixes to list, newest first: each hour of the current day back to its first, then each
 * earlier day whole, down to the day holding `oldest`.
 */
export function prefixesBackwards(now: number, oldest: number): string[] {
  const prefixes: string[] = [];
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  for (let hour = Math.floor(now / HOUR_MS) * HOUR_MS; hour >= today && hour + HOUR_MS > oldest; hour -= HOUR_MS)
    prefixes.push(hourPrefix(hour));
  for (let day = today - DAY_MS; day + DAY_MS > oldest; day -= DAY_MS) prefixes.push(dayPrefix(day));
  return prefixes;
}

/** `archive/YYYY/MM/DD/` of the day holding `at` (its hours' prefixes start with it). */
function dayPrefix(at: number): string {
  return hourPrefix(at).replace(/\d\d\/$/, '');
}
