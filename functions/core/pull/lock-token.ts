/**
 * Lock tokens (docs/PULL.md): what a consumer settles a received event with. Opaque to the
 * consumer, sealed with AES-256-GCM, so it can neither read the SQS receipt handle inside nor
 * forge or alter a token: a token that does not open is `InvalidToken`. It is bound to the
 * subscription and the client that received it (`NotOwner` for anyone else) and carries its own
 * expiry, so an expired lock is answered `LockLost` without asking SQS — which would accept a
 * stale receipt handle and may or may not act on it.
 *
 * The expiry is set a safety margin before SQS's own visibility deadline (`LOCK_SAFETY_MARGIN_MS`):
 * the deadline runs from when SQS handed the message out, which is after the receive began (the
 * time the expiry counts from), and the margin covers the time a settle call takes to reach SQS.
 * So a token Koerier still accepts always names a message SQS still keeps invisible for it.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface LockTokenContents {
  readonly subscriptionId: string;
  readonly clientId: string;
  readonly messageId: string;
  readonly receiptHandle: string;
  /** Epoch ms: Koerier accepts the token until then. */
  readonly lockedUntil: number;
  readonly deliveryCount: number;
  readonly deliveryKey: string;
  /**
   * An ordered subscription's event (docs/ORDERING.md, "Pull"): its lane's key and its place, so
   * that acknowledging it moves the lane on (SQS gives no body for a receipt handle).
   */
  readonly lane?: { readonly key: string; readonly sequence: number };
}

/** What a settle answers for a token that it does not pass to SQS. */
export type LockTokenFailure = 'InvalidToken' | 'NotOwner' | 'LockLost';

export const LOCK_SAFETY_MARGIN_MS = 2_000;
const FORMAT = 1;
const AAD = Buffer.from('koerier lock token v1', 'utf8');
const IV_BYTES = 12;
const TAG_BYTES = 16;
/**
 * Longer than any genuine token (a receipt handle is at most 1,024 characters): refused before
 * decrypting. An ordered event's key travels in its token too: a key of more than about 1,500
 * characters makes a token this refuses (docs/ORDERING.md, "Limits").
 */
const MAX_TOKEN_LENGTH = 4096;

export function sealLockToken(contents: LockTokenContents, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(AAD);
  const plaintext = JSON.stringify([
    FORMAT,
    contents.subscriptionId,
    contents.clientId,
    contents.messageId,
    contents.receiptHandle,
    contents.lockedUntil,
    contents.deliveryCount,
    contents.deliveryKey,
    ...(contents.lane ? [contents.lane.key, contents.lane.sequence] : []),
  ]);
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

/** The contents, or undefined for anything that is not a token sealed with `key`. */
export function openLockToken(token: unknown, key: Buffer): LockTokenContents | undefined {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(AAD);
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const plaintext = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
    const fields = JSON.parse(plaintext) as unknown[];
    const [format, subscriptionId, clientId, messageId, receiptHandle, lockedUntil, deliveryCount, deliveryKey] =
      fields;
    const [laneKey, sequence] = fields.slice(8);
    const lane = typeof laneKey === 'string' && typeof sequence === 'number' ? { key: laneKey, sequence } : undefined;
    if (
      !(fields.length === 8 || (fields.length === 10 && lane !== undefined)) ||
      format !== FORMAT ||
      typeof subscriptionId !== 'string' ||
      typeof clientId !== 'string' ||
      typeof messageId !== 'string' ||
      typeof receiptHandle !== 'string' ||
      typeof lockedUntil !== 'number' ||
      typeof deliveryCount !== 'number' ||
      typeof deliveryKey !== 'string'
    ) {
      return undefined;
    }
    const contents = { subscriptionId, clientId, messageId, receiptHandle, lockedUntil, deliveryCount, deliveryKey };
    return lane === undefined ? contents : { ...contents, lane };
  } catch {
    return undefined;
  }
}

/**
 * Whether a settle may pass the token on to SQS: only a genuine token, of this subscription and
 * this client, whose lock has not expired.
 */
export function lockTokenVerdict(
  contents: LockTokenContents | undefined,
  caller: { readonly subscriptionId: string; readonly clientId: string; readonly now: number },
):
  | { readonly ok: true; readonly contents: LockTokenContents }
  | { readonly ok: false; readonly code: LockTokenFailure } {
  if (!contents) return { ok: false, code: 'InvalidToken' };
  if (contents.subscriptionId !== caller.subscriptionId || contents.clientId !== caller.clientId)
    return { ok: false, code: 'NotOwner' };
  if (caller.now >= contents.lockedUntil) return { ok: false, code: 'LockLost' };
  return { ok: true, contents };
}

/** When a lock taken at `startedAt` for `lockSeconds` stops being accepted. */
export function lockExpiry(startedAt: number, lockSeconds: number): number {
  return startedAt + lockSeconds * 1000 - LOCK_SAFETY_MARGIN_MS;
}
