/**
 * The subscription record (EDU-7, EDU-13, EDU-14): what a receiver asked for, where it goes, and
 * whether the target consented (WH-4, WH-5). The subscriptions API, the router and the delivery
 * function all read this one shape; `functions/aws/dynamodb-subscription-store.ts` stores it.
 */
import type { AlertContacts } from './alert-contacts.js';
import type { ContentMode } from '../cloudevents/index.js';
import type { StoredSinkCredential } from '../credentials/sink-credential.js';
import type { OrderingSettings } from '../ordering/ordering-settings.js';
import type { Filter } from './filters.js';

/**
 * - `pending`: waiting for the target's consent (validation handshake, WH-4); nothing is routed.
 * - `active`: consented (or agreed out of band, WH-5); events are routed and delivered.
 * - `rejected`: the target refused, does not support the handshake, or never consented in time.
 * - `retired`: the target answered 410 Gone (WH-2); final.
 * - `suspended`: the delivery function paused it (e.g. a target that keeps failing); events are
 *   still routed so they can be delivered once it resumes.
 */
export type SubscriptionStatus = 'pending' | 'active' | 'rejected' | 'retired' | 'suspended';

export const SUBSCRIPTION_STATUSES: readonly SubscriptionStatus[] = [
  'pending',
  'active',
  'rejected',
  'retired',
  'suspended',
];

/**
 * `handshake`: Koerier sends the validation request and waits for consent (WH-4).
 * `agreed`: consent was agreed out of band (WH-5, Edukoppeling rule 3f); only clients the
 * configuration names may choose it.
 */
export type ValidationMode = 'handshake' | 'agreed';

/**
 * Why a subscription is suspended, for machines (the words are in `statusReason`):
 * `credential-required`: it has no sink credential, or one of a kind the deployment no longer
 * accepts (WH-3, EDU-4); a PATCH that sets an acceptable credential reactivates it.
 * `target-failing`: its target kept failing; `POST …/resume` reactivates it.
 * `paused`: its owner (or an admin) paused it with `POST …/pause`; `POST …/resume` reactivates it.
 */
export type SuspensionCause = 'credential-required' | 'target-failing' | 'paused';

/**
 * `push`: Koerier sends each event to the subscriber's webhook. `pull`: Koerier keeps the events
 * in the subscription's own queue and the consumer receives them (docs/PULL.md, CARD-7, EDU-17).
 */
export type DeliveryMode = 'push' | 'pull';

/** A pull subscription's queue settings (docs/PULL.md). */
export interface PullSettings {
  /** Deliveries of one event before it goes to the dead letters: 1–1,000. */
  readonly maxDeliveryCount: number;
  /** How long an unsettled event stays in the queue: 60 s – 14 days. */
  readonly retentionSeconds: number;
}

export const PULL_LIMITS = {
  maxDeliveryCount: { min: 1, max: 1000, default: 10 },
  retentionSeconds: { min: 60, max: 14 * 24 * 3600, default: 7 * 24 * 3600 },
} as const;

export interface Subscription {
  /** In UUIDv4 form, assigned by Koerier: derived from the owner and the create's Idempotency-Key. */
  readonly id: string;
  /** The client (OAuth2 client id) that created it; the only one that sees and changes it. */
  readonly owner: string;
  /** Absolute URL of the webhook: https, or plain http to loopback on the laptop host. Empty for pull. */
  readonly sink: string;
  /** Only events with exactly this `source`. */
  readonly source?: string;
  /** Only events whose `type` equals one of these (EDU-8: a version is part of the type). */
  readonly types?: readonly string[];
  /** CloudEvents Subscriptions API filters; all must match. */
  readonly filters?: readonly Filter[];
  /**
   * `push` (webhook) or `pull` (the consumer receives from the subscription's queue). A pull
   * subscription has no sink, credential or handshake: it keeps `sink` empty, `validation`
   * `agreed`, `contentMode` `structured`, and its queue settings in `pull`.
   */
  readonly delivery: DeliveryMode;
  /** Pull subscriptions only. */
  readonly pull?: PullSettings;
  /** HTTP-4: structured by default; binary and batch per subscription. */
  readonly contentMode: ContentMode;
  /**
   * The target declared it accepts `application/cloudevents-batch+json` (handshake `Accept-Post`,
   * or the subscription itself when validation is agreed out of band). Batches go only where
   * this is true (JSON-3); otherwise a `batch` subscription gets structured single events.
   */
  readonly batchSupported: boolean;
  readonly credential?: StoredSinkCredential;
  readonly validation: ValidationMode;
  readonly status: SubscriptionStatus;
  /** Why the status is what it is, in words for the subscriber (e.g. the target's refusal). */
  readonly statusReason?: string;
  /** Set while `suspended`: the cause, which decides how it is reactivated. */
  readonly suspendedFor?: SuspensionCause;
  /** `WebHook-Allowed-Rate` (WH-6); absent when the target allowed any rate (`*`) or said nothing. */
  readonly allowedRatePerMinute?: number;
  /** Every delivery carries an HTTP Message Signature (RFC 9421) with a Content-Digest (issue 12, item 6). */
  readonly signDeliveries?: boolean;
  /** Override of how long deliveries are retried (seconds), within the idempotency TTL. */
  readonly retryWindowSeconds?: number;
  /** The largest event delivered with its data inline; larger ones go with `dataref` (EDU-1). Default: the deployment's inline threshold. */
  readonly maxInlineBytes?: number;
  /** Who is told out of band when the subscription needs its owner (SELF-3, core/alerts). */
  readonly alerts?: AlertContacts;
  /** Ordered delivery per key (issue 33, docs/ORDERING.md); absent: no order. */
  readonly ordering?: OrderingSettings;
  /**
   * What a delivery's body is, when not the CloudEvent itself: `zgw-notificatie`, the notificatie
   * of a ZGW abonnement (issue 34, docs/ZGW.md). Set only by the ZGW adapter, never through the
   * subscriptions API, so one dispatcher serves both.
   */
  readonly bodyShape?: 'zgw-notificatie';
  /**
   * Set on the subscription that delivers a ZGW abonnement (issue 34, docs/ZGW.md), by the adapter
   * only: its kanalen with their filters on kenmerken, which routing applies to the event's data,
   * and the mark that the subscriptions API may read it but not change or delete it.
   */
  readonly zgwAbonnement?: ZgwAbonnementTerms;
  /** SHA-256 (base64url) of the secret in the handshake callback URL, while a handshake is open. */
  readonly validationTokenHash?: string;
  /** ISO 8601: a pending handshake counts as refused after this (no consent in time). */
  readonly validationExpiresAt?: string;
  /** Route index entries written for this subscription, so a change can remove exactly those. */
  readonly routeKeys: readonly string[];
  /** ISO 8601. */
  readonly createdAt: string;
  /** ISO 8601. */
  readonly updatedAt: string;
  /** Optimistic locking: every write checks the version it read and increments it. */
  readonly version: number;
}

/** Statuses whose subscriptions are in the route index, i.e. receive newly routed events. */
export function isRoutable(status: SubscriptionStatus): boolean {
  return status === 'active' || status === 'suspended';
}

/** Statuses the delivery function may send to. */
export function isDeliverable(status: SubscriptionStatus): boolean {
  return status === 'active';
}

/**
 * The status a reader should act on: a pending handshake whose deadline passed without consent
 * is a refusal, whether or not anything wrote that down yet.
 */
export function effectiveStatus(
  subscription: Pick<Subscription, 'status' | 'validationExpiresAt'>,
  now: Date,
): SubscriptionStatus {
  if (
    subscription.status === 'pending' &&
    subscription.validationExpiresAt &&
    Date.parse(subscription.validationExpiresAt) < now.getTime()
  ) {
    return 'rejected';
  }
  return subscription.status;
}

/** An abonnement's kanalen and their filters on kenmerken, as its subscription keeps them (docs/ZGW.md). */
export interface ZgwAbonnementTerms {
  readonly kanalen: readonly { readonly naam: string; readonly filters: Readonly<Record<string, string>> }[];
}
