/**
 * The router's archive step (docs/REPLAY.md): the events a batch is about to route are handed to
 * the archive before any delivery is queued. A record whose archive write fails is not routed and
 * comes back, so every routed event is archived at least once (a retried record again: a replay
 * passes the copy).
 */
import type { AcceptedEvent } from '../cloudevents/index.js';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { errorMessage } from '../errors/describe-error.js';

/** Keeps the events of one batch; throws if it could not. */
export type ArchiveBatch = (
  events: readonly {
    readonly acceptedAt: number;
    /** The ingest's acceptance position (issue 33): a replay orders events of one millisecond by it. */
    readonly acceptedPosition?: number | undefined;
    readonly event: AcceptedEvent;
  }[],
) => Promise<void>;

/** Archives `claimed`; on failure adds every one of their records to `failed`. */
export async function archiveClaimed(
  claimed: readonly {
    readonly record: {
      readonly recordId: string;
      readonly acceptedAt?: number;
      readonly acceptedPosition?: number | undefined;
    };
    readonly event: AcceptedEvent;
  }[],
  failed: Set<string>,
  deps: { readonly archive?: ArchiveBatch | undefined; readonly now: Clock; readonly log?: Log | undefined },
): Promise<void> {
  if (!deps.archive || claimed.length === 0) return;
  await deps
    .archive(
      claimed.map(({ record, event }) => ({
        acceptedAt: record.acceptedAt ?? deps.now(),
        ...(record.acceptedPosition === undefined ? {} : { acceptedPosition: record.acceptedPosition }),
        event,
      })),
    )
    .catch((error: unknown) => {
      deps.log?.info('events not archived', { events: claimed.length, error: errorMessage(error) });
      for (const { record } of claimed) failed.add(record.recordId);
    });
}
