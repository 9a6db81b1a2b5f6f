/**
 * The gates before a delivery may be admitted (WH-3, JSON-3, EDU-IDEM-12, review #8): a
 * subscription that is not active parks or drops its deliveries; a delivery past its key's
 * lifetime, or one that cannot be an HTTP request, becomes a dead letter; a multi-event message
 * for a target that takes no batches is split; one received before a long wait is over waits on.
 */
import type { Clock } from '../ports/clock.js';
import type { Subscription, SubscriptionStatus } from '../subscriptions/subscription.js';
import { SUBSCRIBER_FAILURE } from './attempt-outcome.js';
import type { DeadLetterReason, DeliveryLedger, DeliveryProgress, DeliveryRendering } from './delivery-records.js';
import { credentialShortfall } from '../credentials/sink-credential.js';
import type { DeliveryPolicy, DispatcherDependencies, QueuedDelivery } from './dispatch-ports.js';
import { keyDeadline } from './retry-schedule.js';
import { deadLetterStep, retryStep, type NextStep } from './settle-attempt.js';
import { deliveryFormat, requestWithoutToken, unsendableHeader, type WebhookRequest } from './webhook-request.js';
import { renderingFor } from './frozen-rendering.js';
import type { Sending } from './attempt.js';
import { tell } from '../operations/operational-events.js';
import { suspendedNotice } from './operational-notices.js';

export type Preparation =
  /** Its request the one to send but the bearer token (`webhook-request.ts`), rendered as the first attempt did (`frozen-rendering.ts`). */
  | { readonly kind: 'ready'; readonly sending: Omit<Sending, 'delivery'> }
  /** One delivery per event (JSON-3): `split.ts`. */
  | { readonly kind: 'split' }
  /** Settled without an attempt; `unsendableHeader` names the header that could not be sent. */
  | { readonly kind: 'settled'; readonly next: NextStep; readonly unsendableHeader?: string };

export interface PreparationContext {
  readonly ledger: Pick<DeliveryLedger, 'getProgress'>;
  readonly policy: Pick<DeliveryPolicy, 'retry' | 'keyTtlSeconds' | 'maxReceiveCount' | 'deadLetterRetentionSeconds'>;
  readonly origin: string;
  readonly now: Clock;
}

export type SubscriptionGate =
  | { readonly kind: 'active'; readonly subscription: Subscription }
  /** Deleted by its owner: nowhere to keep its deliveries for. */
  | { readonly kind: 'deleted' }
  /** Retired, suspended, …: its deliveries become dead letters for this reason. */
  | { readonly kind: 'not-active'; readonly reason: DeadLetterReason; readonly detail: string };

/**
 * Whether a subscription's deliveries may go on. One that may not be delivered to for want of an
 * acceptable sink credential is suspended here (WH-3, EDU-4).
 */
export async function gateSubscription(
  subscriptionId: string,
  deps: Pick<DispatcherDependencies, 'subscriptions' | 'policy' | 'log' | 'operations'>,
  now: Clock,
): Promise<SubscriptionGate> {
  let subscription = await deps.subscriptions.get(subscriptionId);
  // Holding deliveries back (or dropping them) must not rest on a cached status: a resume a
  // moment ago would otherwise park the very deliveries it sent again.
  if (subscription?.status !== 'active') subscription = await deps.subscriptions.get(subscriptionId, { fresh: true });
  if (!subscription) return { kind: 'deleted' };
  const shortfall =
    subscription.status === 'active'
      ? credentialShortfall(subscription.credential, deps.policy.sinkCredentials)
      : undefined;
  if (shortfall !== undefined) {
    // A record from before credentials were required (or a bearer token where only OAuth2 is
    // allowed): nothing goes out without a token (WH-3). Parked like any suspension; the PATCH
    // that sets a credential reactivates it and sends them again.
    await deps.subscriptions.updateStatus(
      subscriptionId,
      'suspended',
      `Suspended: ${shortfall}.`,
      'credential-required',
    );
    deps.log.warn('subscription suspended: no acceptable sink credential', {
      subscriptionId,
      credential: subscription.credential?.kind ?? 'none',
    });
    const notice = suspendedNotice(
      subscription,
      `Suspended: ${shortfall}.`,
      'credential-required',
      subscription.version,
      now(),
    );
    await tell(deps.operations, [notice], deps.log);
    subscription = { ...subscription, status: 'suspended', statusReason: shortfall };
  }
  if (subscription.status === 'active') return { kind: 'active', subscription };
  const [reason, detail] = notActive(subscription.status, subscription.statusReason);
  return { kind: 'not-active', reason, detail };
}

/** Where an active subscription's delivery goes before admission; reads its progress when it has one. */
export async function prepare(
  delivery: QueuedDelivery,
  subscription: Subscription,
  context: PreparationContext,
): Promise<Preparation> {
  const { policy, now } = context;
  if (now() >= keyDeadline(delivery.message.createdAt, policy.keyTtlSeconds)) {
    // EDU-IDEM-12: the receiver may have forgotten the key; never send under it again.
    const progress = await progressOf(delivery, context.ledger);
    return {
      kind: 'settled',
      next: deadLetterStep(
        delivery,
        'exhausted',
        "the delivery's Idempotency-Key lifetime has passed",
        progress,
        undefined,
        policy,
        now(),
      ),
    };
  }
  const { length } = delivery.message.events;
  // Known before the progress is read: a split needs no read.
  if (deliveryFormat(subscription, length) === 'split') return { kind: 'split' };
  const progress = await progressOf(delivery, context.ledger);
  // EDU-IDEM-11: a retry sends what the first attempt sent, whatever was PATCHed since.
  const rendering = renderingFor(subscription, length, progress);
  if (rendering === 'split') return { kind: 'split' };
  const request = requestOf(delivery, subscription, rendering, context.origin);
  const header = request ? unsendableHeader(request) : 'body';
  if (!request || header !== undefined) {
    // Nothing was sent, so the target is not at fault: no attempt, no rate slot, no breaker.
    const next = deadLetterStep(
      delivery,
      'not-sendable',
      SUBSCRIBER_FAILURE['not-sendable'].detail,
      progress,
      undefined,
      policy,
      now(),
    );
    return { kind: 'settled', next, unsendableHeader: header ?? 'body' };
  }
  // Received before a wait longer than one visibility timeout is over: wait on.
  if (progress?.nextAttemptAt !== undefined && progress.nextAttemptAt - now() > 1000) {
    return {
      kind: 'settled',
      next: retryStep(delivery, progress.nextAttemptAt - now(), 'up', progress, policy, now()),
    };
  }
  return { kind: 'ready', sending: { rendering, request, progress } };
}

/** A first receive has no earlier attempts: the read is skipped, so the common case costs nothing. */
export async function progressOf(
  delivery: QueuedDelivery,
  ledger: Pick<DeliveryLedger, 'getProgress'>,
): Promise<DeliveryProgress | undefined> {
  return delivery.receiveCount > 1
    ? ledger.getProgress(delivery.message.subscriptionId, delivery.message.deliveryId)
    : undefined;
}

/** Why the deliveries of a subscription that is not active become dead letters. */
function notActive(status: SubscriptionStatus, reason: string | undefined): [DeadLetterReason, string] {
  const why = reason ? `: ${reason}` : '';
  if (status === 'retired') return ['subscription-retired', `the subscription is retired${why}`];
  if (status === 'suspended')
    return ['subscription-suspended', `the subscription is suspended${why}; resuming it sends this delivery again`];
  return ['subscription-not-active', `the subscription is ${status}${why}`];
}

/**
 * The delivery's request without its token; undefined when its body cannot be made. The token is
 * not judged here: every one Koerier sends is a RFC 6750 b64token, checked where it is stored or fetched.
 */
function requestOf(
  delivery: QueuedDelivery,
  subscription: Subscription,
  { format }: DeliveryRendering,
  origin: string,
): WebhookRequest | undefined {
  try {
    return requestWithoutToken({
      message: delivery.message,
      ...(delivery.events ? { events: delivery.events } : {}),
      sink: subscription.sink,
      format,
      origin,
      bodyShape: subscription.bodyShape,
    });
  } catch {
    return undefined;
  }
}
