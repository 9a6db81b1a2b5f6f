/**
 * An abonnement is delivered as a Koerier push subscription (issue 34 item 4, docs/ZGW.md): one
 * dispatcher, with its retries, backoff, dead letters and redrive, for CloudEvents and notificaties
 * alike. The subscription has the abonnement's uuid as its id, the consumer as its owner, the
 * callback as its sink, the kanalen as its type filter, `auth` as an `authorization` credential
 * (sent as the whole header, opened only by the delivery), `bodyShape` `zgw-notificatie` with the
 * largest `maxInlineBytes` (both absent with `sendCloudevents`: the CloudEvent is delivered) and `zgwAbonnement`, the kanalen with their
 * filters on kenmerken, which routing applies and which keeps the subscriptions API from changing
 * it; neither can be set through that API. It is active at once: Open Notificaties' callback checks,
 * made before the abonnement is stored, take the place of the validation handshake.
 */
import { ZGW_TYPE_PREFIX } from './notificatie-mapping.js';
import type { AbonnementRecord } from './ports.js';
import { sealSinkCredential, type CredentialCipher } from '../credentials/sink-credential.js';
import type { Filter } from '../subscriptions/filters.js';
import { MAX_INLINE_BYTES } from '../subscriptions/subscription-body.js';
import type { SubscriptionDraft, SubscriptionStore } from '../subscriptions/store.js';

/** What the abonnementen use cases ask of the subscriptions behind them. */
export interface AbonnementDeliveries {
  /** Makes or replaces the subscription that delivers `abonnement` with this `auth`. */
  put(abonnement: AbonnementRecord, auth: string): Promise<void>;
  /** Removes it, when there is one. */
  remove(uuid: string): Promise<void>;
}

/**
 * The kanalen as a filter: an event of kanaal `k` has a type starting `nl.overheid.k.`. No kanalen,
 * no events (an empty `any` matches nothing), as in Open Notificaties.
 */
export function kanalenFilter(abonnement: Pick<AbonnementRecord, 'kanalen'>): Filter {
  return { any: abonnement.kanalen.map((group) => ({ prefix: { type: `${ZGW_TYPE_PREFIX}${group.naam}.` } })) };
}

export function abonnementSubscriptionDraft(
  abonnement: AbonnementRecord,
  credential: NonNullable<SubscriptionDraft['credential']>,
  updatedAt: string,
): SubscriptionDraft {
  return {
    id: abonnement.uuid,
    owner: abonnement.clientId,
    sink: abonnement.callbackUrl,
    filters: [kanalenFilter(abonnement)],
    delivery: 'push',
    contentMode: 'structured',
    batchSupported: false,
    credential,
    validation: 'agreed',
    status: 'active',
    // `sendCloudevents`: the CloudEvent itself (NL GOV profile), as any subscriber of /v1/subscriptions receives it.
    // A notificatie has no `dataref` to follow: one whose data is in the claim check goes out whole.
    ...(abonnement.sendCloudevents ? {} : { bodyShape: 'zgw-notificatie' as const, maxInlineBytes: MAX_INLINE_BYTES }),
    zgwAbonnement: { kanalen: abonnement.kanalen.map(({ naam, filters }) => ({ naam, filters })) },
    createdAt: abonnement.createdAt,
    updatedAt,
  };
}

export function storedAbonnementDeliveries(
  store: Pick<SubscriptionStore, 'get' | 'create' | 'save' | 'delete'>,
  cipher: CredentialCipher,
  now: () => number,
): AbonnementDeliveries {
  return {
    async put(abonnement, auth) {
      const credential = await sealSinkCredential({ kind: 'authorization', value: auth }, abonnement.uuid, cipher);
      const draft = abonnementSubscriptionDraft(abonnement, credential, new Date(now()).toISOString());
      const current = await store.get(abonnement.uuid);
      if (current === undefined) await store.create(draft);
      else await store.save(draft, current);
    },
    async remove(uuid) {
      const current = await store.get(uuid);
      if (current !== undefined) await store.delete(current);
    },
  };
}
