/**
 * Lock tokens (functions/core/pull/lock-token.ts) without emulators: sealed, bound to the
 * subscription and the client, and expiring by their own time, a margin before SQS's deadline.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
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

/**
 * Seals any plaintext as lock-token.ts seals a token (AES-256-GCM, its AAD, iv | tag | ciphertext):
 * what holding the key could produce, such as a token of a later format during a deployment.
 */
function sealRaw(plaintext: string, sealKey: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
  cipher.setAAD(Buffer.from('koerier lock token v1', 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}
const fields = (c: LockTokenContents): unknown[] => [
  1,
  c.subscriptionId,
  c.clientId,
  c.messageId,
  c.receiptHandle,
  c.lockedUntil,
  c.deliveryCount,
  c.deliveryKey,
];

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
    for (const garbage of [undefined, 42, '', 'not a token!', 'A'.repeat(5000)])
      expect(openLockToken(garbage, key)).toBeUndefined();
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

  it('EDU-17: only the exact text handed out opens: a token with a character outside base64url before or after it is InvalidToken', () => {
    // Base64url decoding skips such characters, so without this a lock could pass the settle's
    // duplicate check under a second spelling and reach SQS twice in one request.
    const token = sealLockToken(contents, key);
    expect(openLockToken(`${token}!`, key)).toBeUndefined();
    expect(openLockToken(`!${token}`, key)).toBeUndefined();
    expect(openLockToken(`${token}\n`, key)).toBeUndefined();
  });

  it('EDU-17: a token of more than 4,096 characters is refused even when it is genuinely sealed; up to 4,096 it opens', () => {
    // The bound (MAX_TOKEN_LENGTH, far above a real token) keeps an attacker from making every
    // settle decrypt megabytes. 3,072 sealed bytes are exactly 4,096 base64url characters.
    const withHandle = (length: number): LockTokenContents => ({ ...contents, receiptHandle: 'h'.repeat(length) });
    // Each character of the receipt handle adds one sealed byte.
    const handleAtLimit = 3072 - Buffer.from(sealLockToken(withHandle(0), key), 'base64url').length;
    const atLimit = withHandle(handleAtLimit);
    const longest = sealLockToken(atLimit, key);
    expect(longest).toHaveLength(4096);
    expect(openLockToken(longest, key)).toEqual(atLimit);
    const tooLong = withHandle(handleAtLimit + 1);
    expect(sealLockToken(tooLong, key).length).toBeGreaterThan(4096);
    expect(openLockToken(sealLockToken(tooLong, key), key)).toBeUndefined();
  });

  it('EDU-17: a token sealed with the key but not of format 1, or with any member of the wrong type, does not open', () => {
    // Such a token never comes from this Koerier, but the key outlives a format: a later format's
    // token must not be read as this one, nor give a settle a receipt handle that is not a string.
    expect(openLockToken(sealRaw(JSON.stringify(fields(contents)), key), key)).toEqual(contents);
    const wrong: unknown[] = [2, 7, 7, 7, 7, '1', '3', 7];
    for (const [index, value] of wrong.entries()) {
      const altered = fields(contents);
      altered[index] = value;
      expect(openLockToken(sealRaw(JSON.stringify(altered), key), key), `member ${index}`).toBeUndefined();
    }
    expect(openLockToken(sealRaw('not json', key), key)).toBeUndefined();
  });

  it('ORD-5: an ordered event’s token carries its lane key and place and opens with them; a token with a partial lane does not open', () => {
    const ordered: LockTokenContents = { ...contents, lane: { key: 'leerling-7', sequence: 42 } };
    expect(openLockToken(sealLockToken(ordered, key), key)).toEqual(ordered);
    expect(openLockToken(sealLockToken(contents, key), key)).toEqual(contents);
    expect(openLockToken(sealRaw(JSON.stringify([...fields(contents), 'leerling-7']), key), key)).toBeUndefined();
    expect(openLockToken(sealRaw(JSON.stringify([...fields(contents), 'leerling-7', '42']), key), key)).toBeUndefined();
  });
});
