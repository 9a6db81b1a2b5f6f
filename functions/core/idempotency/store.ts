/**
 * The idempotency store port (EDU-IDEM, section 8.3.9 of the Edukoppeling profile) and the one
 * definition of when an existing entry may be claimed again. Every store implements exactly
 * this rule; the DynamoDB store writes it as a condition expression.
 */

/** EDU-IDEM-16: keys live per client and per operation, so two clients never collide. */
export interface IdempotencyScope {
  readonly clientId: string;
  readonly operation: string;
  /** The Idempotency-Key, lower-cased. */
  readonly key: string;
}

/** What a repeat gets back: the first response's status, the headers that matter, its exact body. */
export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

interface EntryBase {
  readonly fingerprint: string;
  /** Epoch seconds (DynamoDB TTL unit). The entry counts as absent once this is in the past. */
  readonly expiresAt: number;
}

export type IdempotencyEntry =
  | (EntryBase & {
      readonly state: 'in-progress';
      /** Epoch ms. */
      readonly lockExpiresAt: number;
      /** The answer the attempt will give once its side effect is done, stored with the claim (prepared requests). */
      readonly pending?: StoredResponse | undefined;
    })
  | (EntryBase & { readonly state: 'completed'; readonly response: StoredResponse });

export interface ClaimRequest {
  readonly scope: IdempotencyScope;
  readonly fingerprint: string;
  /** Random per attempt: only the attempt holding the claim may complete or release it. */
  readonly claimId: string;
  /** Epoch ms, the moment the claim is made. */
  readonly now: number;
  /** Epoch ms. */
  readonly lockExpiresAt: number;
  /** Epoch seconds. */
  readonly expiresAt: number;
  /** The answer known before the side effect (a prepared request), stored with the claim so no second write is needed. */
  readonly pending?: StoredResponse | undefined;
}

export type ClaimResult =
  /** `replaced`: the prepared claim (one with a `pending` answer) this claim took over, its lock lapsed; absent otherwise. */
  | { readonly claimed: true; readonly replaced?: IdempotencyEntry | undefined }
  /** `existing` is absent when the entry vanished between the failed write and the read. */
  | { readonly claimed: false; readonly existing: IdempotencyEntry | undefined };

export interface IdempotencyStore {
  /** Conditional write: succeeds only when `isClaimable(existing, request)`; otherwise returns what is there. */
  claim(request: ClaimRequest): Promise<ClaimResult>;
  /** Stores the response if `claimId` still holds the claim; false when another attempt took it over. */
  complete(scope: IdempotencyScope, claimId: string, response: StoredResponse): Promise<boolean>;
  /** Frees the key (5xx, thrown error) if `claimId` still holds the claim. */
  release(scope: IdempotencyScope, claimId: string): Promise<void>;
  /**
   * The attempt holding `claimId` finished its side effect and answers with the pending answer of
   * its claim. A store may record this without a write: repeats it serves itself see the entry as
   * completed, and repeats elsewhere see it in progress until the lock expires and then take it
   * over (see `withPreparedIdempotency`). A store without it gets the completion written instead.
   */
  confirm?(scope: IdempotencyScope, claimId: string): Promise<void>;
}

/** Epoch seconds of an epoch-ms instant, the unit of `expiresAt`. */
export function epochSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/**
 * The claim condition. An entry is treated as absent once its TTL has passed (DynamoDB deletes
 * lazily, dynalite never). A crashed attempt's lock may be taken over after it expires, but only
 * by the same request: a different request with that key still gets 422.
 */
export function isClaimable(
  existing: IdempotencyEntry | undefined,
  request: Pick<ClaimRequest, 'now' | 'fingerprint'>,
): boolean {
  if (existing === undefined) return true;
  if (existing.expiresAt < epochSeconds(request.now)) return true;
  return (
    existing.state === 'in-progress' &&
    existing.lockExpiresAt < request.now &&
    existing.fingerprint === request.fingerprint
  );
}

/** The string a store keys an entry by; each part URI-encoded so no separator can be forged. */
export function scopeKey(scope: IdempotencyScope): string {
  return ['idempotency', scope.clientId, scope.operation, scope.key].map(encodeURIComponent).join('#');
}
