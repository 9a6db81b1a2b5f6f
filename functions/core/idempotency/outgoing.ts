/**
 * Koerier as a client (deliveries): one key per operation, kept for its whole life and reused on
 * every retry with the same payload (EDU-IDEM-9, 11), never retried past the receiver's TTL
 * (EDU-IDEM-12); after that a new request is a new operation with a new key (EDU-IDEM-13).
 */
import { randomUUID } from 'node:crypto';
import { payloadFingerprint } from './fingerprint.js';
import { systemClock, type Clock } from './store.js';

/** Kept with the delivery (e.g. in its queue message) so every retry sends the same key. */
export interface OutgoingOperation {
  /** UUIDv4, sent as the Idempotency-Key header. */
  readonly key: string;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms: after this the receiver may have forgotten the key. */
  readonly expiresAt: number;
  readonly payloadFingerprint: string;
}

/** `ttlSeconds` is the receiver's entry lifetime (7 days unless agreed otherwise, EDU-IDEM-7). */
export function startOutgoingOperation(payload: string | Buffer, ttlSeconds: number, clock: Clock = systemClock): OutgoingOperation {
  const createdAt = clock.now();
  return { key: randomUUID(), createdAt, expiresAt: createdAt + ttlSeconds * 1000, payloadFingerprint: payloadFingerprint(payload) };
}

/** Whether `payload` may be sent again under `op.key`: only before expiry and only unchanged. */
export function mayRetry(op: OutgoingOperation, payload: string | Buffer, clock: Clock = systemClock): boolean {
  return clock.now() < op.expiresAt && payloadFingerprint(payload) === op.payloadFingerprint;
}
