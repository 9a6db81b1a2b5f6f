/**
 * Koerier's one idempotency mechanism (EDU-IDEM): the guard every mutating route runs through,
 * its store port, and the client-side helpers deliveries use.
 */
export { IDEMPOTENCY_KEY_HEADER, readIdempotencyKey } from './key.js';
export { requestFingerprint, payloadFingerprint } from './fingerprint.js';
export {
  systemClock,
  isClaimable,
  scopeKey,
  epochSeconds,
  type Clock,
  type IdempotencyScope,
  type IdempotencyEntry,
  type IdempotencyStore,
  type ClaimRequest,
  type ClaimResult,
  type StoredResponse,
} from './store.js';
export { withIdempotency, IDEMPOTENT_REPLAYED_HEADER, REPLAYED_HEADERS, type IdempotencyContext } from './guard.js';
export { startOutgoingOperation, mayRetry, type OutgoingOperation } from './outgoing.js';
export { InMemoryIdempotencyStore } from './memory-store.js';
