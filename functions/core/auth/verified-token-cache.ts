/**
 * Client tokens that passed every check of ./access-tokens.ts, remembered for a short while so a
 * publisher sending the same token hundreds of times a second pays the signature check once
 * (issue 15: the ECDSA verification was the largest piece of the ingest's own CPU time).
 *
 * What makes that safe:
 * - The key is the SHA-256 of the whole compact token, so any change to header, payload or
 *   signature is another key: a token with one byte flipped is verified from scratch and refused.
 *   Only the digest is kept, never the bearer token itself.
 * - Only successes are remembered, and only the principal they yielded; the scope a route needs is
 *   checked on every request.
 * - An entry ends at the token's `exp` (without the 60 s skew tolerance: from there on the full
 *   check decides, as before) and at most `VERIFIED_TOKEN_MAX_AGE_MS` after the check, which is
 *   the key set's refetch cooldown (functions/app/authentication.ts): a key the issuer withdraws
 *   stops vouching for a remembered token within that time, as jose would have refetched by then
 *   at the earliest. Every other check (`nbf`, `iat` not in the future, issuer, audience, type,
 *   lifetime, client claim) holds at a later time if it held at the first.
 * - It is bounded: past `MAX_VERIFIED_TOKENS` entries the oldest is forgotten.
 */
import { createHash } from 'node:crypto';

/** How long a verified token is taken on trust without another signature check. */
export const VERIFIED_TOKEN_MAX_AGE_MS = 30_000;

/** The most tokens one container remembers: a publisher usually holds one token at a time. */
export const MAX_VERIFIED_TOKENS = 1000;

interface Entry<Verified> {
  readonly principal: Verified;
  /** Epoch ms after which the entry is not used. */
  readonly until: number;
}

/** `Verified`: what the checks yielded (the principal, in ./access-tokens.ts). */
export class VerifiedTokenCache<Verified> {
  private readonly entries = new Map<string, Entry<Verified>>();

  constructor(private readonly maxEntries = MAX_VERIFIED_TOKENS) {}

  get size(): number {
    return this.entries.size;
  }

  /** The principal of `token` if it passed the checks less than the max age ago and has not expired at `now`. */
  get(token: string, now: number): Verified | undefined {
    const key = digestOf(token);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (now >= entry.until) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.principal;
  }

  /** Remembers a token that has just passed every check at `now`; `expiresAt` is its `exp` (epoch seconds). */
  set(token: string, principal: Verified, expiresAt: number, now: number): void {
    const until = Math.min(expiresAt * 1000, now + VERIFIED_TOKEN_MAX_AGE_MS);
    if (until <= now) return;
    const key = digestOf(token);
    this.entries.delete(key);
    this.entries.set(key, { principal, until });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}

function digestOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
