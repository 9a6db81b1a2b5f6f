/**
 * The push hand-out's check (issue 29, item 3): whether a queued delivery may still go to its
 * subscription, asked of `mayReceive` for each of its events as the subscription and the owner's
 * entitlements are now, before any attempt (a retry included).
 */
import { EventText } from '../cloudevents/event-text.js';
import { mayReceive, type WithheldReason } from '../routing/may-receive.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { QueuedDelivery } from './dispatch-ports.js';

/**
 * Whether a delivery may go to the subscription as it is now (`mayReceive`, issue 29 item 3): `send`;
 * the reason its events are withheld; or, when only some of them are, `split`, so that each goes
 * (or is withheld) on its own under a key of its own, never the same key with another body.
 */
export function withheldFrom(
  delivery: QueuedDelivery,
  subscription: Subscription,
  entitlements: Entitlements,
): 'send' | 'split' | WithheldReason {
  const events = delivery.events ?? delivery.message.events.map((json) => new EventText(json));
  const verdicts = events.map((event) => mayReceive(subscription, event, entitlements));
  const withheld = verdicts.find((verdict) => verdict !== 'receives');
  if (withheld === undefined) return 'send';
  return verdicts.some((verdict) => verdict === 'receives') ? 'split' : withheld;
}
