/**
 * The ingest side of the claim check (EDU-1, CE-15, CARD-6): which accepted events travel by
 * reference, and writing their data once to the object store before the event is queued.
 */
import type { AcceptedEvent } from '../cloudevents/accepted-event.js';
import { KoerierError, problems, type Problem } from '../http/problems.js';
import {
  claimCheckAttributes,
  eventDataOf,
  payloadIdOf,
  payloadObjectKey,
  referencingEvent,
  PAYLOAD_PATH_PREFIX,
  digestOf,
} from './payload-reference.js';
import type { ClaimCheckStore, PayloadLedger } from './ports.js';

export interface OffloadSettings {
  /** Events larger than this (JSON format text) travel by reference (CE-14: at least 64 KiB stay inline). */
  readonly inlineEventBytes: number;
  /** The largest event a queue message carries, reference or not. */
  readonly maxQueuedEventBytes: number;
  /** Koerier's public base URL: data URLs are `<base>/payloads/<id>`. */
  readonly publicBaseUrl: string;
  /** How long an object lives (the bucket's lifecycle rule). */
  readonly retentionSeconds: number;
}

export interface OffloadDependencies {
  readonly store: ClaimCheckStore;
  readonly ledger: PayloadLedger;
  readonly settings: OffloadSettings;
}

/** Where to send data too large for one request (named in every 413 about an event's size). */
export const UPLOAD_ROUTE = 'POST /payloads';

/** `dataref` with the longest public base URL, the digest and the size, as JSON members. */
const REFERENCE_OVERHEAD_BYTES = 4096;

/**
 * Which events (by index) go by reference. Throws the 400 for an event naming the claim check's
 * own attributes, and the 413 for an event with its own `dataref` too large to queue, or whose
 * attributes alone exceed a queue message (with or without data to move).
 */
export function planOffload(
  events: readonly AcceptedEvent[],
  settings: Pick<OffloadSettings, 'inlineEventBytes' | 'maxQueuedEventBytes'>,
): number[] {
  const offload: number[] = [];
  for (const [index, event] of events.entries()) {
    const reserved = [claimCheckAttributes.digest, claimCheckAttributes.size].find((name) => name in event.attributes);
    if (reserved !== undefined) {
      throw refusal(
        problems.badRequest(
          'reserved-attribute',
          `The extension attribute '${reserved}' is Koerier's own (claim check); events may not carry it.`,
        ),
        index,
        events.length,
      );
    }
    const size = Buffer.byteLength(event.json);
    if (size <= settings.inlineEventBytes) continue;
    const data = eventDataOf(event.json);
    if ('dataref' in event.attributes) {
      if (size <= settings.maxQueuedEventBytes) continue;
      throw refusal(
        problems.payloadTooLarge(
          `The event carries its own dataref and ${size} bytes; Koerier forwards such an event unchanged (CE-11) only up to ${settings.maxQueuedEventBytes} bytes. ` +
            `Leave its data out, or publish without dataref so that Koerier moves the data to its claim check, or upload it first with ${UPLOAD_ROUTE}.`,
        ),
        index,
        events.length,
      );
    }
    // What stays in the queue: the attributes, the data URL and the two integrity attributes.
    if (
      data === undefined ||
      Buffer.byteLength(JSON.stringify(event.attributes)) + REFERENCE_OVERHEAD_BYTES > settings.maxQueuedEventBytes
    ) {
      if (size <= settings.maxQueuedEventBytes) continue;
      throw refusal(
        problems.payloadTooLarge(
          `The event is ${size} bytes, and without its data still more than the ${settings.maxQueuedEventBytes} bytes a queued event may take; shorten its context attributes.`,
        ),
        index,
        events.length,
      );
    }
    offload.push(index);
  }
  return offload;
}

/** In a batch the problem names the member. */
function refusal(problem: Problem, index: number, count: number): KoerierError {
  return new KoerierError(count > 1 ? { ...problem, index } : problem);
}

/**
 * Writes the data of the planned events to the store (one object each, keyed by `source` + `id`
 * and the data itself, `payloadIdOf`) and records publisher and integrity in the ledger; answers
 * the events as they are queued.
 * Throws when a write fails: nothing is acknowledged then (EDU-19).
 */
export async function offloadEvents(
  events: readonly AcceptedEvent[],
  offload: readonly number[],
  publisher: string,
  now: number,
  deps: OffloadDependencies,
): Promise<AcceptedEvent[]> {
  const result = [...events];
  const { settings } = deps;
  await Promise.all(
    offload.map(async (index) => {
      const event = events[index]!;
      const parsed = JSON.parse(event.json) as Record<string, unknown>;
      const data = eventDataOf(event.json, parsed)!;
      const digest = digestOf(data.bytes);
      const payloadId = payloadIdOf(event.source, event.id, { digest, contentType: data.contentType, form: data.form });
      await deps.store.put(payloadObjectKey(payloadId), data);
      await deps.ledger.recordPayload({
        payloadId,
        objectKey: payloadObjectKey(payloadId),
        source: event.source,
        eventId: event.id,
        publisher,
        digest,
        size: data.bytes.length,
        contentType: data.contentType,
        objectExpiresAt: now + settings.retentionSeconds * 1000,
      });
      const json = referencingEvent(parsed, `${settings.publicBaseUrl}${PAYLOAD_PATH_PREFIX}${payloadId}`, data);
      result[index] = { ...event, json, attributes: JSON.parse(json) as AcceptedEvent['attributes'] };
    }),
  );
  return result;
}
