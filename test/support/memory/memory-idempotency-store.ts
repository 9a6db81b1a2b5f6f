/**
 * An in-process IdempotencyStore with the same semantics as the DynamoDB one (one shared contract
 * suite runs against both). For unit tests and single-process tools; entries are not shared
 * between processes, so it is never a substitute for DynamoDB in a deployment.
 */
import {
  isClaimable,
  scopeKey,
  type ClaimRequest,
  type ClaimResult,
  type IdempotencyEntry,
  type IdempotencyScope,
  type IdempotencyStore,
  type StoredResponse,
} from '../../../functions/core/idempotency/store.js';

type Held = IdempotencyEntry & { readonly claimId?: string };

export class InMemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Held>();

  async claim(request: ClaimRequest): Promise<ClaimResult> {
    const id = scopeKey(request.scope);
    const existing = this.#entries.get(id);
    if (!isClaimable(existing, request)) return { claimed: false, existing: existing && publicView(existing) };
    this.#entries.set(id, {
      state: 'in-progress',
      fingerprint: request.fingerprint,
      expiresAt: request.expiresAt,
      lockExpiresAt: request.lockExpiresAt,
      claimId: request.claimId,
      ...(request.pending ? { pending: structuredClone(request.pending) } : {}),
    });
    return existing?.state === 'in-progress' && existing.pending
      ? { claimed: true, replaced: publicView(existing) }
      : { claimed: true };
  }

  async complete(scope: IdempotencyScope, claimId: string, response: StoredResponse): Promise<boolean> {
    const id = scopeKey(scope);
    const held = this.#entries.get(id);
    if (held?.state !== 'in-progress' || held.claimId !== claimId) return false;
    this.#entries.set(id, {
      state: 'completed',
      fingerprint: held.fingerprint,
      expiresAt: held.expiresAt,
      response: structuredClone(response),
    });
    return true;
  }

  /** One process sees every repeat, so a confirmed claim is simply completed with its pending answer. */
  async confirm(scope: IdempotencyScope, claimId: string): Promise<void> {
    const held = this.#entries.get(scopeKey(scope));
    if (held?.state === 'in-progress' && held.pending) await this.complete(scope, claimId, held.pending);
  }

  async release(scope: IdempotencyScope, claimId: string): Promise<void> {
    const id = scopeKey(scope);
    if (this.#entries.get(id)?.claimId === claimId) this.#entries.delete(id);
  }
}

function publicView(held: Held): IdempotencyEntry {
  const { claimId: _claimId, ...entry } = held;
  return structuredClone(entry);
}
