/**
 * The `OperationalEvents` port (core/operations) over the inbound queue: Koerier's own events take
 * the path every accepted event takes (router, route index, entitlement, delivery), with the same
 * message attributes the ingest writes, so nothing downstream tells them apart but their type.
 */
import { inboundMessageAttributes } from '../core/ingest/index.js';
import type { InboundQueue } from '../core/ingest/ports.js';
import {
  operationalEventJson,
  type OperationalEvents,
  type OperationalNotice,
} from '../core/operations/operational-events.js';

/** The `koerier-publisher` message attribute of Koerier's own events (for the logs; the router does not decide by it). */
export const KOERIER_PUBLISHER = 'koerier (operations)';

export class InboundQueueOperationalEvents implements OperationalEvents {
  constructor(
    private readonly inbound: InboundQueue,
    /** The events' `source`: the deployment itself. */
    private readonly source: string,
  ) {}

  async publish(notices: readonly OperationalNotice[]): Promise<void> {
    if (notices.length === 0) return;
    const receivedAt = new Date().toISOString();
    await this.inbound.send(
      notices.map((notice) => ({
        body: operationalEventJson(notice, this.source),
        attributes: {
          [inboundMessageAttributes.publisher]: KOERIER_PUBLISHER,
          [inboundMessageAttributes.receivedAt]: receivedAt,
        },
      })),
    );
  }
}
