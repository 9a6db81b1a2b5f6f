/**
 * The ingest use case wired to in-memory adapters, for the unit tests that publish through
 * `acceptEvents` without emulators: the settings a test varies, the stores it reads back, and a
 * CloudEvent to send. One place, so that the tests of refusals, of the use case and of data
 * contracts at the ingest build the same thing.
 */
import { randomUUID } from 'node:crypto';
import { parsePublishGrants } from '../../../functions/core/auth/publish-grants.js';
import { InMemoryClaimCheckStore, InMemoryPayloadLedger } from '../../support/memory/claim-check-memory-adapters.js';
import { InMemoryIdempotencyStore } from '../../support/memory/memory-idempotency-store.js';
import type { IngestDependencies, IngestSettings } from '../../../functions/core/ingest/index.js';
import { InMemoryInboundQueue, InMemoryRateWindow } from '../../support/memory/ingest-memory-adapters.js';
import { silentLog } from '../../../functions/core/ports/log.js';

export const PUBLIC_BASE_URL = 'https://koerier.example';

/** The ingest's limits as deployed, a small publish rate, and `grants` (client id → source prefixes). */
export function ingestSettings(
  grants: Record<string, readonly string[]>,
  overrides: Partial<IngestSettings> = {},
): IngestSettings {
  return {
    publishRatePerMinute: 3,
    maxEventBytes: 64 * 1024,
    inlineEventBytes: 64 * 1024,
    maxQueuedEventBytes: 248 * 1024,
    publishGrants: parsePublishGrants(JSON.stringify(grants)),
    idempotency: { ttlSeconds: 3600, lockSeconds: 60 },
    ...overrides,
  };
}

export interface MemoryIngest {
  readonly deps: IngestDependencies;
  readonly queue: InMemoryInboundQueue;
  readonly store: InMemoryClaimCheckStore;
  readonly ledger: InMemoryPayloadLedger;
}

/** In-memory stores behind `acceptEvents`; the clock also drives the rate window. `rest` replaces or adds dependencies. */
export function memoryIngest(
  settings: IngestSettings,
  clock: () => number,
  rest: Partial<IngestDependencies> = {},
): MemoryIngest {
  const queue = new InMemoryInboundQueue();
  const store = new InMemoryClaimCheckStore();
  const ledger = new InMemoryPayloadLedger();
  const deps: IngestDependencies = {
    idempotency: new InMemoryIdempotencyStore(),
    rateWindow: new InMemoryRateWindow(clock),
    inbound: queue,
    claimCheck: { store, ledger, publicBaseUrl: PUBLIC_BASE_URL, retentionSeconds: 15 * 86400 },
    settings,
    log: silentLog,
    clock,
    ...rest,
  };
  return { deps, queue, store, ledger };
}

/** A valid CloudEvent from `source`, with a fresh id; `overrides` replace or add members. */
export const cloudEvent = (source: string, overrides: Record<string, unknown> = {}) => ({
  specversion: '1.0',
  id: randomUUID(),
  source,
  type: 'nl.edu.leerling.ingeschreven',
  ...overrides,
});
