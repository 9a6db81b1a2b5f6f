/**
 * What a client asked for, as the store keeps it: the checked input with its identity, the
 * credential sealed (EDU-14), and the id a create gets (EDU-IDEM-8).
 */
import { createHash } from 'node:crypto';
import { sealSinkCredential, type CredentialCipher } from '../credentials/sink-credential.js';
import { uuidFromHash } from '../ids/stable-uuid.js';
import type { SubscriptionTerms } from './lifecycle.js';
import type { Subscription } from './subscription.js';
import type { SubscriptionInput } from './subscription-input.js';

export async function termsOf(
  input: SubscriptionInput,
  identity: Pick<Subscription, 'id' | 'owner' | 'createdAt' | 'updatedAt'>,
  cipher: CredentialCipher,
): Promise<SubscriptionTerms> {
  return {
    ...identity,
    sink: input.sink,
    ...(input.source === undefined ? {} : { source: input.source }),
    ...(input.types === undefined ? {} : { types: input.types }),
    ...(input.filters === undefined ? {} : { filters: input.filters }),
    delivery: input.delivery,
    ...(input.pull === undefined ? {} : { pull: input.pull }),
    contentMode: input.contentMode,
    batchSupported: input.validation === 'agreed' && input.batchSupported === true,
    ...(input.credential === undefined
      ? {}
      : { credential: await sealSinkCredential(input.credential, identity.id, cipher) }),
    validation: input.validation,
    ...(input.retryWindowSeconds === undefined ? {} : { retryWindowSeconds: input.retryWindowSeconds }),
    ...(input.signDeliveries ? { signDeliveries: true } : {}),
    ...(input.maxInlineBytes === undefined ? {} : { maxInlineBytes: input.maxInlineBytes }),
    ...(input.alerts === undefined ? {} : { alerts: input.alerts }),
    ...(input.ordering === undefined ? {} : { ordering: input.ordering }),
  };
}

/**
 * An id in UUIDv4 form (RFC 9562: version 4, variant 10) derived from the owner and the
 * Idempotency-Key, itself a random UUIDv4: a retried create lands on the same id, and no other
 * client's key can produce it.
 */
export function subscriptionIdOf(owner: string, idempotencyKey: string): string {
  return uuidFromHash(createHash('sha256').update(JSON.stringify(['subscription', owner, idempotencyKey])));
}

/** What a create asked for (not what the handshake later found), to tell its retry from another request. */
export function requestedTerms(s: SubscriptionTerms): string {
  return JSON.stringify([
    s.owner,
    s.sink,
    s.source,
    s.types,
    s.filters,
    s.contentMode,
    s.validation,
    s.validation === 'agreed' && s.batchSupported,
    s.retryWindowSeconds,
    s.maxInlineBytes,
    s.credential?.kind,
    s.signDeliveries === true,
    s.delivery,
    s.pull,
    s.alerts,
    s.ordering,
  ]);
}
