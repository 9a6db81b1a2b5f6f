/**
 * Koerier's one idempotency mechanism (EDU-IDEM): the guard every mutating route runs through and
 * its store port. As a client (deliveries), the key is the delivery id fixed by the router; see
 * functions/core/delivery-message/delivery-message.ts.
 */
export { IDEMPOTENCY_KEY_HEADER, readIdempotencyKey } from './key.js';
export { requestFingerprint } from './fingerprint.js';
export {
  isClaimable,
  scopeKey,
  epochSeconds,
  type IdempotencyScope,
  type IdempotencyEntry,
  type IdempotencyStore,
  type ClaimRequest,
  type ClaimResult,
  type StoredResponse,
} from './store.js';
export { withIdempotency, IDEMPOTENT_REPLAYED_HEADER, REPLAYED_HEADERS, type IdempotencyContext } from './guard.js';
export { withPreparedIdempotency, type PreparedRequest } from './prepared-guard.js';
