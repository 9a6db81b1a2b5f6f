/**
 * The secret in the `WebHook-Request-Callback` URL (WH-4): the only authentication of an approval.
 * Only its hash is stored, and it is compared in constant time, so neither a copy of the table nor
 * the time an answer takes gives the secret away.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function newApprovalToken(): { readonly token: string; readonly hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashApprovalToken(token) };
}

export function hashApprovalToken(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

export function approvalTokenMatches(token: string, storedHash: string): boolean {
  const left = Buffer.from(hashApprovalToken(token));
  const right = Buffer.from(storedHash);
  return left.length === right.length && timingSafeEqual(left, right);
}
