/**
 * The router's last step (route-events.ts): each claim of the batch is settled. A record that
 * failed has its claim released, so its retry routes it at once; the others are marked routed —
 * in one write for the batch when the ledger can (`RoutedEventLedger.batch`), else one each.
 * A write that fails here fails no record: the deliveries are queued, and a repeat of the event
 * after the lock expires is routed again with the same delivery keys, which the targets recognise.
 */
import type { Log } from '../ports/log.js';
import { errorMessage } from '../errors/describe-error.js';
import type { ClaimedIdentity, RoutedEventBatch, RoutedEventLedger } from './routed-events.js';

/** Settles the claims; returns how many are routed (not in `failed`). */
export async function settleClaims(
  claimed: readonly (ClaimedIdentity & { readonly record: { readonly recordId: string } })[],
  failed: ReadonlySet<string>,
  ledger: RoutedEventLedger,
  batch: RoutedEventBatch | undefined,
  log: Log | undefined,
): Promise<number> {
  const routed = claimed.filter(({ record }) => !failed.has(record.recordId));
  const notStored = (event: ClaimedIdentity['event'], error: unknown) =>
    log?.info('routed marker not stored', { source: event.source, id: event.id, error: errorMessage(error) });
  await Promise.all([
    ...claimed
      .filter(({ record }) => failed.has(record.recordId))
      .map(({ event, claimId }) =>
        // The record comes back anyway; a claim not released only waits out its lock, so a
        // failure here must not fail the records of the batch that did succeed.
        (batch ?? ledger)
          .abandon(event, claimId)
          .catch((error: unknown) =>
            log?.info('routing claim not released', { source: event.source, id: event.id, error: errorMessage(error) }),
          ),
      ),
    batch
      ? routed.length > 0 &&
        batch
          .completeAll(routed.map(({ event, claimId, routes }) => ({ event, claimId, ...(routes ? { routes } : {}) })))
          .catch((error: unknown) => routed.forEach(({ event }) => notStored(event, error)))
      : Promise.all(
          routed.map(({ event, claimId, routes }) =>
            ledger.complete(event, claimId, routes).catch((error: unknown) => notStored(event, error)),
          ),
        ),
  ]);
  return routed.length;
}
