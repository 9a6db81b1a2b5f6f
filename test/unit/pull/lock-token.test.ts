/**
 * Lock tokens (functions/core/pull/lock-token.ts) without emulators: sealed, bound to the
 * subscription and the client, and expiring by their own time, a margin before SQS's deadline.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  LOCK_SAFETY_MARGIN_MS,
  lockExpiry,
  lockTokenVerdict,
  openLockToken,
  sealLockToken,
  type LockTokenContents,
} from '../../../functions/core/pull/lock-token.js';

const key = randomBytes(32);
const NOW = Date.UTC(2026, 10, 23, 18);
const contents: LockTokenContents = {
  subscriptionId: 'sub-1',
  clientId: 'client-a',
  messageId: 'm-1',
  receiptHandle: 'AQEB-secret-receipt-handle==',
  lockedUntil: NOW + 60_000,
  deliveryCount: 3,
  deliveryKey: '1c6a3c2e-0d4b-4f1a-9a7e-2b1f0c3d4e5f',
};
const caller = { subscriptionId: 'sub-1', clientId: 'client-a', now: NOW };

describe('lock tokens (CARD-7, EDU-17)', () => {
  it('EDU-17: a sealed token opens to exactly what was sealed, and never shows the receipt handle', () => {
    const token = sealLockToken(contents, key);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(token).not.toContain('secret');
    expect(Buffer.from(token, 'base64url').toString('latin1')).not.toContain('AQEB');
    expect(openLockToken(token, key)).toEqual(contents);
    // A fresh IV every time: two seals of the same lock differ.
    expect(sealLockToken(contents, key)).not.toBe(token);
  });

  it('EDU-17: a token altered in any byte, cut short, sealed with another key, or not a string does not open (InvalidToken)', () => {
    const token = sealLockToken(contents, key);
    const bytes = Buffer.from(token, 'base64url');
    for (let index = 0; index < bytes.length; index += 7) {
      const altered = Buffer.from(bytes);
      altered[index] = altered[index]! ^ 0x01;
      expect(openLockToken(altered.toString('base64url'), key)).toBeUndefined();
    }
    expect(openLockToken(token.slice(0, 30), key)).toBeUndefined();
    expect(openLockToken(token, randomBytes(32))).toBeUndefined();
    for (const garbage of [undefined, 42, '', 'not a token!', 'A'.repeat(5000)]) expect(openLockToken(garbage, key)).toBeUndefined();
    expect(lockTokenVerdict(openLockToken('x', key), caller)).toEqual({ ok: false, code: 'InvalidToken' });
  });

  it('EDU-7: a genuine token of another subscription or another client is NotOwner', () => {
    const opened = openLockToken(sealLockToken(contents, key), key);
    expect(lockTokenVerdict(opened, { ...caller, subscriptionId: 'sub-2' })).toEqual({ ok: false, code: 'NotOwner' });
    expect(lockTokenVerdict(opened, { ...caller, clientId: 'client-b' })).toEqual({ ok: false, code: 'NotOwner' });
    expect(lockTokenVerdict(opened, caller)).toEqual({ ok: true, contents });
  });

  it('EDU-17: a token is LockLost from its expiry on, decided without SQS', () => {
    const opened = openLockToken(sealLockToken(contents, key), key);
    expect(lockTokenVerdict(opened, { ...caller, now: contents.lockedUntil - 1 })).toMatchObject({ ok: true });
    expect(lockTokenVerdict(opened, { ...caller, now: contents.lockedUntil })).toEqual({ ok: false, code: 'LockLost' });
  });

  it("EDU-17: a lock expires a safety margin before SQS's visibility deadline, counted from the start of the receive", () => {
    expect(LOCK_SAFETY_MARGIN_MS).toBeGreaterThanOrEqual(1000);
    expect(lockExpiry(NOW, 10)).toBe(NOW + 10_000 - LOCK_SAFETY_MARGIN_MS);
    expect(lockExpiry(NOW, 43_200)).toBe(NOW + 43_200_000 - LOCK_SAFETY_MARGIN_MS);
  });
});
