/**
 * A UUIDv4-shaped id derived from a SHA-256 hash: the same inputs always give the same id. Koerier
 * uses it where a retry must find again what its first attempt made (a delivery's Idempotency-Key,
 * a subscription created under an Idempotency-Key), and receivers still see a valid UUIDv4.
 */
import type { Hash } from 'node:crypto';

export function uuidFromHash(hash: Hash): string {
  const bytes = hash.digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
