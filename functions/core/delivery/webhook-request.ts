/**
 * The HTTP request of one delivery attempt (WH-1, WH-3, HTTP-4, EDU-IDEM-2): a POST of the
 * events exactly as they were accepted (CE-13), in the subscription's content mode, with the
 * delivery's own Idempotency-Key (the same on every attempt, EDU-IDEM-9, 11), the bearer token
 * and Koerier's `WebHook-Request-Origin`.
 */
import { toBatchMessage, toBinaryMessage, toStructuredMessage } from '../cloudevents/index.js';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency/index.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { DeliveryMessage } from './delivery-message.js';

export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export type DeliveryFormat = 'structured' | 'binary' | 'batch';

/**
 * The format a delivery of `eventCount` events goes out in, or `split` when it must become one
 * delivery per event: a batch only reaches a target that declared it takes batches (EDU-11,
 * JSON-3), and binary mode carries one event.
 */
export function deliveryFormat(subscription: Pick<Subscription, 'contentMode' | 'batchSupported'>, eventCount: number): DeliveryFormat | 'split' {
  if (subscription.contentMode === 'batch' && subscription.batchSupported) return 'batch';
  if (eventCount !== 1) return 'split';
  return subscription.contentMode === 'binary' ? 'binary' : 'structured';
}

export function webhookRequest(options: {
  readonly message: DeliveryMessage;
  readonly sink: string;
  readonly format: DeliveryFormat;
  readonly origin: string;
  /** The bearer token, when the subscription has a credential (WH-3). */
  readonly accessToken?: string;
}): WebhookRequest {
  const { message, format } = options;
  const [first] = message.events;
  const encoded = format === 'batch' ? toBatchMessage(message.events) : format === 'binary' ? toBinaryMessage(first!) : toStructuredMessage(first!);
  return {
    url: options.sink,
    headers: {
      ...encoded.headers,
      [IDEMPOTENCY_KEY_HEADER]: message.deliveryId,
      'webhook-request-origin': options.origin,
      ...(options.accessToken ? { authorization: `Bearer ${options.accessToken}` } : {}),
    },
    body: encoded.body,
  };
}
