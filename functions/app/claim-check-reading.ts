/**
 * What the delivery and pull apps need to hand events out through the claim check (EDU-1): the
 * object store and the payload ledger as getters, so the S3 client and the ledger are built only
 * when an event by reference goes out, and a container that never meets one never pays for them.
 */
import type { OutgoingEventsDependencies } from '../core/claim-check/outgoing-events.js';
import type { KoerierDependencies } from './dependencies.js';

export function claimCheckReading(
  deps: Pick<KoerierDependencies, 'config' | 'claimCheckStore' | 'payloadLedger'>,
): Omit<OutgoingEventsDependencies, 'fits'> {
  return {
    get store() {
      return deps.claimCheckStore;
    },
    get ledger() {
      return deps.payloadLedger;
    },
    publicBaseUrl: deps.config.publicBaseUrl,
    defaultMaxInlineBytes: deps.config.inlineEventBytes,
  };
}
