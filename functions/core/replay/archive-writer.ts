/**
 * The archive's write side (issue 13, item 1; docs/REPLAY.md): the router hands it the events of
 * one batch that it routes, and they become one object per hour they were accepted in — almost
 * always one — so archiving costs one S3 request per router batch, not per event.
 */
import type { AcceptedEvent } from '../cloudevents/index.js';
import { archiveObjects } from './archive-format.js';
import type { EventArchive } from './ports.js';

export async function archiveBatch(
  archive: EventArchive,
  batch: readonly {
    readonly acceptedAt: number;
    readonly acceptedPosition?: number | undefined;
    readonly event: AcceptedEvent;
  }[],
): Promise<number> {
  const objects = archiveObjects(
    batch.map(({ acceptedAt, acceptedPosition, event }) => ({
      acceptedAt,
      ...(acceptedPosition === undefined ? {} : { acceptedPosition }),
      source: event.source,
      id: event.id,
      type: event.type,
      json: event.json,
    })),
  );
  await Promise.all(objects.map((object) => archive.put(object.key, object.body)));
  return objects.length;
}
