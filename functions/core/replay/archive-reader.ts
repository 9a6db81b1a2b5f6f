/**
 * Reads a window of the archive in acceptance order (`compareArchived`), a chunk at a time, from
 * just after a position. Router batches overlap in time (two routers run side by side, a batch is
 * retried later), so objects are merged: an event is handed out only once every object that could
 * hold an earlier one has been read, which the first-acceptance time in each object's name tells
 * (archive-format.ts). Each event comes out once: a copy archived twice sorts next to the first.
 */
import {
  compareArchived,
  decodeArchiveObject,
  hourPrefix,
  hoursOf,
  parseArchiveKey,
  positionOf,
  type ArchivedEvent,
  type ArchivePosition,
} from './archive-format.js';
import type { EventArchive } from './ports.js';

export interface ArchiveChunk {
  /** In acceptance order, each after the previous and after `after`. */
  readonly events: readonly ArchivedEvent[];
  /** Nothing of the window is left after the last of `events`. */
  readonly done: boolean;
  /** Archive requests made (lists and gets), for the bench. */
  readonly requests: number;
}

export interface ChunkRequest {
  /** Epoch ms, inclusive. */
  readonly from: number;
  /** Epoch ms, exclusive. */
  readonly to: number;
  readonly after?: ArchivePosition | undefined;
  /** At most this many events. */
  readonly limit: number;
}

export async function readArchiveChunk(archive: EventArchive, request: ChunkRequest): Promise<ArchiveChunk> {
  const { from, to, after, limit } = request;
  const start = Math.max(from, after?.at ?? from);
  const events: ArchivedEvent[] = [];
  let requests = 0;
  const wanted = (event: ArchivedEvent) =>
    event.acceptedAt >= from &&
    event.acceptedAt < to &&
    (after === undefined || compareArchived(positionOf(event), after) > 0);
  for (const hour of hoursOf(start, to)) {
    requests++;
    const names = (await archive.list(hourPrefix(hour)))
      .map(parseArchiveKey)
      .filter((name) => name !== undefined && name.lastAt >= start && name.firstAt < to)
      .sort((a, b) => a!.firstAt - b!.firstAt || (a!.key < b!.key ? -1 : 1));
    let pending: ArchivedEvent[] = [];
    for (let index = 0; index < names.length; index++) {
      requests++;
      const body = await archive.get(names[index]!.key);
      // Gone since it was listed: expired by the lifecycle rule, past retention anyway.
      if (body !== undefined) pending.push(...decodeArchiveObject(body).filter(wanted));
      const nextFirst = names[index + 1]?.firstAt ?? Number.POSITIVE_INFINITY;
      // What no object still unread can precede: every unread one starts at nextFirst or later.
      const safe = pending.filter((event) => event.acceptedAt < nextFirst);
      pending = pending.filter((event) => event.acceptedAt >= nextFirst);
      appendInOrder(events, safe);
      if (events.length >= limit) return { events: events.slice(0, limit), done: false, requests };
    }
  }
  return { events, done: true, requests };
}

/** Sorts `more` (all after what `into` holds) into acceptance order and appends it, dropping repeats. */
function appendInOrder(into: ArchivedEvent[], more: readonly ArchivedEvent[]): void {
  for (const event of [...more].sort((a, b) => compareArchived(positionOf(a), positionOf(b)))) {
    const last = into.at(-1);
    if (last === undefined || compareArchived(positionOf(last), positionOf(event)) < 0) into.push(event);
  }
}
