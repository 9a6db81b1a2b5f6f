/**
 * The delivery side of the claim check: per subscription, the largest event it takes inline
 * (`maxInlineBytes`, default the deployment's inline threshold). An event whose data is in the
 * claim check goes out with its data inline again when the rebuilt event fits that limit, and
 * otherwise by reference — and then the subscription's owner is recorded as a reader first, so
 * the fetch that follows is allowed (and nobody else's).
 */
import {
  payloadReferenceOf,
  mayFitInline,
  rehydratedEvent,
  digestOf,
  payloadObjectKey,
  PAYLOAD_PATH_PREFIX,
} from './payload-reference.js';
import type { ClaimCheckStore, PayloadLedger } from './ports.js';

export interface OutgoingEventsDependencies {
  readonly store: Pick<ClaimCheckStore, 'get'>;
  readonly ledger: Pick<PayloadLedger, 'addReaders' | 'get'>;
  readonly publicBaseUrl: string;
  /** A subscription without its own `maxInlineBytes` takes events up to this size inline. */
  readonly defaultMaxInlineBytes: number;
  /**
   * The delivery path's own bound on one event with its data inline, beyond `maxInlineBytes` (pull:
   * one receive answer, where the text is escaped once more). An event it refuses goes by reference.
   */
  readonly fits?: (inline: string) => boolean;
}

export class ClaimCheckUnavailableError extends Error {
  override name = 'ClaimCheckUnavailableError';
}

/** The events as they go to `subscription`; throws ClaimCheckUnavailableError when the data cannot be read or recorded. */
export async function outgoingEvents(
  subscription: { readonly owner: string; readonly maxInlineBytes?: number },
  events: readonly string[],
  deps: OutgoingEventsDependencies,
): Promise<string[]> {
  const limit = subscription.maxInlineBytes ?? deps.defaultMaxInlineBytes;
  const prefix = `${deps.publicBaseUrl}${PAYLOAD_PATH_PREFIX}`;
  const byReference: string[] = [];
  const result = await Promise.all(
    events.map(async (json) => {
      if (!json.includes(prefix)) return json;
      const event = JSON.parse(json) as Record<string, unknown>;
      const reference = payloadReferenceOf(event, prefix);
      if (reference === undefined) return json;
      if (mayFitInline(reference, limit)) {
        const payload = await readObject(reference.payloadId, deps).catch((error: unknown) => {
          throw new ClaimCheckUnavailableError(`the claim check could not be read: ${String(error)}`);
        });
        // A missing object has expired: the reference goes out, and its fetch answers 410.
        if (payload !== undefined) {
          if (digestOf(payload.bytes) !== reference.digest)
            throw new ClaimCheckUnavailableError('the claim-check object does not match its digest');
          const inline = rehydratedEvent(event, payload.bytes, payload.form);
          if (Buffer.byteLength(inline) <= limit && (deps.fits?.(inline) ?? true)) return inline;
        }
      }
      byReference.push(reference.payloadId);
      return json;
    }),
  );
  if (byReference.length > 0) {
    try {
      await Promise.all(
        [...new Set(byReference)].map((payloadId) => deps.ledger.addReaders(payloadId, [subscription.owner])),
      );
    } catch (error) {
      throw new ClaimCheckUnavailableError(`the readers could not be recorded: ${String(error)}`);
    }
  }
  return result;
}

/**
 * What `json` is expected to take going out to a subscription with `limit`, without reading
 * anything: its data's size when it may come back inline, its own size otherwise. A caller with a
 * byte budget plans its reads by it.
 */
export function expectedOutgoingBytes(json: string, limit: number, publicBaseUrl: string): number {
  const prefix = `${publicBaseUrl}${PAYLOAD_PATH_PREFIX}`;
  const reference = json.includes(prefix)
    ? payloadReferenceOf(JSON.parse(json) as Record<string, unknown>, prefix)
    : undefined;
  return reference !== undefined && mayFitInline(reference, limit) ? reference.size : Buffer.byteLength(json);
}

/** Data moved at ingest sits under its payload key; an upload's under its own, which only the ledger knows. */
async function readObject(payloadId: string, deps: OutgoingEventsDependencies) {
  const payload = await deps.store.get(payloadObjectKey(payloadId));
  if (payload !== undefined) return payload;
  const record = await deps.ledger.get(payloadId);
  return record === undefined || record.objectKey === payloadObjectKey(payloadId)
    ? undefined
    : deps.store.get(record.objectKey);
}
