/**
 * The event archive's objects (issue 13, item 1; docs/REPLAY.md): one gzip-compressed JSON Lines
 * object per router batch and hour, under
 *
 *   archive/YYYY/MM/DD/HH/<first acceptedAt>-<last acceptedAt>-<batch id>.jsonl.gz
 *
 * (times as 13-digit epoch milliseconds, UTC hours). Every event of an object was accepted in that
 * hour, so a window is read by listing only its hours, and the two times in the name say which
 * objects can hold events after a point without opening them.
 *
 * A line is `{"at":…,"pos":…,"source":…,"id":…,"type":…,"event":"…"}`: `event` is the stored event's
 * JSON text as a JSON string, so it comes back byte for byte (CE-13), `dataref` and the other
 * claim-check attributes included; `at` is the ingest's acceptance time and `pos` its acceptance
 * position (issue 33, core/ordering/acceptance-position.ts; absent on lines archived before it). The
 * identity and type sit beside it so a replay orders, deduplicates and narrows without parsing every event.
 */
import { randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';

export const ARCHIVE_PREFIX = 'archive/';

export interface ArchivedEvent {
  /** Epoch ms the ingest accepted the event (its `koerier-received-at`). */
  readonly acceptedAt: number;
  /**
   * The ingest's acceptance position (issue 33): orders events accepted in the same millisecond —
   * those of one request keep their order in it — as the live path of an ordered subscription does.
   */
  readonly acceptedPosition?: number | undefined;
  readonly source: string;
  readonly id: string;
  readonly type: string;
  /** The stored event, JSON event format, exactly as accepted. */
  readonly json: string;
}

/** One archive object's name, read back. */
export interface ArchiveObjectName {
  readonly key: string;
  readonly firstAt: number;
  readonly lastAt: number;
}

const HOUR_MS = 3_600_000;

/** `archive/YYYY/MM/DD/HH/` of the hour holding `at`. */
export function hourPrefix(at: number): string {
  const iso = new Date(Math.floor(at / HOUR_MS) * HOUR_MS).toISOString();
  return `${ARCHIVE_PREFIX}${iso.slice(0, 4)}/${iso.slice(5, 7)}/${iso.slice(8, 10)}/${iso.slice(11, 13)}/`;
}

/** The start (epoch ms) of every hour from the one holding `from` to the one holding `to - 1`. */
export function hoursOf(from: number, to: number): number[] {
  const hours: number[] = [];
  for (let hour = Math.floor(from / HOUR_MS) * HOUR_MS; hour < to; hour += HOUR_MS) hours.push(hour);
  return hours;
}

/**
 * The objects one batch is archived as: one per hour its events were accepted in (almost always
 * one), each named by its first and last acceptance time.
 */
export function archiveObjects(
  events: readonly ArchivedEvent[],
  batchId: string = randomUUID(),
): { key: string; body: Buffer }[] {
  const byHour = new Map<string, ArchivedEvent[]>();
  for (const event of events)
    byHour.set(hourPrefix(event.acceptedAt), [...(byHour.get(hourPrefix(event.acceptedAt)) ?? []), event]);
  return [...byHour].map(([prefix, group]) => {
    const times = group.map((event) => event.acceptedAt);
    const key = `${prefix}${stamp(Math.min(...times))}-${stamp(Math.max(...times))}-${batchId}.jsonl.gz`;
    return { key, body: encodeArchiveObject(group) };
  });
}

export function encodeArchiveObject(events: readonly ArchivedEvent[]): Buffer {
  const lines = events.map((e) =>
    JSON.stringify({
      at: e.acceptedAt,
      pos: e.acceptedPosition,
      source: e.source,
      id: e.id,
      type: e.type,
      event: e.json,
    }),
  );
  return gzipSync(Buffer.from(`${lines.join('\n')}\n`, 'utf8'));
}

/** Throws on anything that is not an archive object Koerier wrote. */
export function decodeArchiveObject(body: Buffer): ArchivedEvent[] {
  return gunzipSync(body)
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const value = JSON.parse(line) as Record<string, unknown>;
      const { at, pos, source, id, type, event } = value;
      if (
        typeof at !== 'number' ||
        (pos !== undefined && typeof pos !== 'number') ||
        typeof source !== 'string' ||
        typeof id !== 'string' ||
        typeof type !== 'string' ||
        typeof event !== 'string'
      ) {
        throw new TypeError('Not a Koerier archive line');
      }
      return { acceptedAt: at, ...(pos === undefined ? {} : { acceptedPosition: pos }), source, id, type, json: event };
    });
}

/** The times in an archive object's name; undefined for a key that is not one. */
export function parseArchiveKey(key: string): ArchiveObjectName | undefined {
  const match = /\/(\d{13})-(\d{13})-[^/]+\.jsonl\.gz$/.exec(key);
  if (!key.startsWith(ARCHIVE_PREFIX) || !match) return undefined;
  return { key, firstAt: Number(match[1]), lastAt: Number(match[2]) };
}

function stamp(at: number): string {
  return String(at).padStart(13, '0');
}

/** Where a replay stands: the last event it has passed, in acceptance order. */
export interface ArchivePosition {
  readonly at: number;
  readonly acceptedPosition?: number | undefined;
  readonly source: string;
  readonly id: string;
}

/**
 * Koerier's acceptance order: the ingest's acceptance time, then (issue 33) the acceptance position
 * where both events have one, then `source`, then `id`. Events of one request share a time: with
 * positions they keep their order in the request, as an ordered subscription's lane numbers them
 * live; archived before positions, they come in `source`, `id` order. Two archived copies of one
 * event (a router batch retried after its archive was written) carry the same time, position and
 * identity, so they sort next to each other and a replay passes the second without sending it.
 */
export function compareArchived(a: ArchivePosition, b: ArchivePosition): number {
  if (a.at !== b.at) return a.at - b.at;
  const [pa, pb] = [a.acceptedPosition, b.acceptedPosition];
  if (pa !== undefined && pb !== undefined && pa !== pb) return pa - pb;
  if (a.source !== b.source) return a.source < b.source ? -1 : 1;
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1;
}

export function positionOf(event: ArchivedEvent): ArchivePosition {
  const { acceptedAt: at, acceptedPosition, source, id } = event;
  return acceptedPosition === undefined ? { at, source, id } : { at, acceptedPosition, source, id };
}
