/**
 * One delivery key, one body (EDU-IDEM-11; issue 36, item 3). How a delivery's events become a
 * request body depends on two settings its owner may PATCH at any time: `contentmode` and
 * `maxinlinebytes`. Read afresh at every attempt, a PATCH between a failed attempt and its retry
 * would send the same `Idempotency-Key` with another body, and a receiver keeping Edukoppeling
 * Appendix C answers that with 422, which dead-letters the event.
 *
 * Frozen, not re-keyed: the first attempt's rendering is kept with the delivery's progress (which
 * every failed attempt writes, so it is there for each retry) and every retry renders the same.
 * A new key for a new rendering would make the retry a new operation: a receiver that had processed
 * the first attempt (and whose answer was lost) would process the event a second time, which is
 * what the key exists to prevent. A PATCH takes effect for every delivery not attempted yet.
 *
 * Kept from the first attempt rather than fixed when the router queues the delivery: until an
 * attempt has gone out no body exists under the key, so the owner's latest settings may still
 * apply; and it covers deliveries made by a split, a redrive or a replay alike.
 *
 * The one rendering not kept: a batch for a target that no longer takes batches. Such a delivery
 * is split (`split.ts`) into single-event deliveries with keys of their own, so no key is ever sent
 * with another body that way either.
 */
import { CONTENT_MODES, type ContentMode } from '../cloudevents/index.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { DeliveryProgress, DeliveryRendering } from './delivery-records.js';
import { deliveryFormat } from './webhook-request.js';

/**
 * How an attempt of a delivery of `eventCount` events renders it: as its first attempt did, when
 * there was one; else from the subscription now. `split` when it must become one delivery per event.
 */
export function renderingFor(
  subscription: Pick<Subscription, 'contentMode' | 'batchSupported' | 'maxInlineBytes'>,
  eventCount: number,
  progress: Pick<DeliveryProgress, 'rendering'> | undefined,
): DeliveryRendering | 'split' {
  const format = deliveryFormat(subscription, eventCount);
  if (format === 'split') return 'split';
  if (progress?.rendering) return progress.rendering;
  return {
    format,
    ...(subscription.maxInlineBytes === undefined ? {} : { maxInlineBytes: subscription.maxInlineBytes }),
  };
}

/**
 * `subscription` with the inline limit `rendering` was made with, for the claim check to decide as
 * the first attempt did which data goes inline and which by reference.
 */
export function asRendered<S extends Pick<Subscription, 'maxInlineBytes'>>(
  subscription: S,
  rendering: DeliveryRendering,
): S {
  if (subscription.maxInlineBytes === rendering.maxInlineBytes) return subscription;
  const { maxInlineBytes: _now, ...rest } = subscription;
  return (rendering.maxInlineBytes === undefined ? rest : { ...rest, maxInlineBytes: rendering.maxInlineBytes }) as S;
}

/** A rendering as a store read it back: undefined unless `format` is a content mode (a record from before renderings were kept has none). */
export function storedRendering(
  format: string | undefined,
  maxInlineBytes: number | undefined,
): DeliveryRendering | undefined {
  if (!CONTENT_MODES.includes(format as ContentMode)) return undefined;
  return {
    format: format as ContentMode,
    ...(maxInlineBytes === undefined || !Number.isInteger(maxInlineBytes) ? {} : { maxInlineBytes }),
  };
}
