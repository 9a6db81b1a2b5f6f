/**
 * The HTTP request of one delivery attempt (WH-1, WH-3, HTTP-4, EDU-IDEM-2): a POST of the
 * events exactly as they were accepted (CE-13), in the subscription's content mode, with the
 * delivery's own Idempotency-Key (the same on every attempt, EDU-IDEM-9, 11), the bearer token
 * and Koerier's `WebHook-Request-Origin`.
 */
import { toBatchMessage, toBinaryMessage, toStructuredMessage, type ContentMode } from '../cloudevents/index.js';
import type { EventText } from '../cloudevents/event-text.js';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency/index.js';
import { CORRELATION_ID_HEADER } from '../ids/correlation-id.js';
import type { Subscription } from '../subscriptions/subscription.js';
import type { DeliveryMessage } from '../delivery-message/delivery-message.js';
import { takesBatches } from '../delivery-message/delivery-rules.js';
import { cloudEventAsNotificatie } from '../zgw/notificatie-mapping.js';
import { claimCheckAttributes } from '../claim-check/payload-reference.js';

export interface WebhookRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /**
   * Set on a notificatie whose data is in the claim check (issue 34): its body can only be made once
   * the attempt has the data back inline (attempt.ts); never sent as it is.
   */
  readonly awaitsClaimCheckData?: true;
}

/**
 * The format a delivery of `eventCount` events goes out in, or `split` when it must become one
 * delivery per event: a batch only reaches a target that declared it takes batches (EDU-11,
 * JSON-3), and binary mode carries one event.
 */
export function deliveryFormat(
  subscription: Pick<Subscription, 'contentMode' | 'batchSupported'>,
  eventCount: number,
): ContentMode | 'split' {
  if (takesBatches(subscription)) return 'batch';
  if (eventCount !== 1) return 'split';
  return subscription.contentMode === 'binary' ? 'binary' : 'structured';
}

export interface WebhookRequestParts {
  readonly message: DeliveryMessage;
  /** `message.events` as event texts already read, where the caller holds them (a binary rendering reads their attributes). */
  readonly events?: readonly EventText[];
  readonly sink: string;
  readonly format: ContentMode;
  readonly origin: string;
  /** The subscription's `bodyShape`: a ZGW abonnement's deliveries are notificaties, not CloudEvents. */
  readonly bodyShape?: Subscription['bodyShape'] | undefined;
}

export function webhookRequest(
  options: WebhookRequestParts & {
    /** The bearer token (WH-3: "the delivery MUST carry a token"). */
    readonly accessToken: string;
  },
): WebhookRequest {
  return withAccessToken(requestWithoutToken(options), options.accessToken);
}

/**
 * The request but its bearer token: built once per delivery, when it is prepared (where
 * `unsendableHeader` judges it), and sent with the token `withAccessToken` adds (issue 15: building
 * it twice cost about 3 µs a delivery).
 */
export function requestWithoutToken({
  message,
  events,
  format,
  sink,
  origin,
  bodyShape,
}: WebhookRequestParts): WebhookRequest {
  const [first] = message.events;
  const encoded =
    bodyShape === 'zgw-notificatie'
      ? zgwNotificatieMessage(first!)
      : format === 'batch'
        ? toBatchMessage(message.events)
        : format === 'binary'
          ? toBinaryMessage(events?.[0] ?? first!)
          : toStructuredMessage(first!);
  return {
    url: sink,
    headers: {
      ...encoded.headers,
      [IDEMPOTENCY_KEY_HEADER]: message.deliveryId,
      'webhook-request-origin': origin,
      // The ingest request's correlation id (core/ids/correlation-id.ts): the receiver can quote it to the operator.
      ...(message.correlationId ? { [CORRELATION_ID_HEADER]: message.correlationId } : {}),
      ...replayHeaders(message),
    },
    body: encoded.body,
    ...('awaitsClaimCheckData' in encoded && encoded.awaitsClaimCheckData
      ? { awaitsClaimCheckData: true as const }
      : {}),
  };
}

/**
 * A ZGW abonnement's delivery (issue 34, docs/ZGW.md): the notificatie the event maps back to, as
 * Open Notificaties posts it. An event without one throws: the delivery cannot be made (a dead
 * letter `not-sendable`), never a CloudEvent where a notificatie was promised. One whose data is in
 * the claim check is made at the attempt, once the data is back (the abonnement takes every event
 * inline: abonnement-subscription.ts).
 */
function zgwNotificatieMessage(event: string): {
  headers: Record<string, string>;
  body: Buffer;
  awaitsClaimCheckData?: true;
} {
  const parsed = JSON.parse(event) as Parameters<typeof cloudEventAsNotificatie>[0] & Record<string, unknown>;
  const headers = { 'content-type': 'application/json' };
  // Its data is in the claim check (an event above 64 KiB): the attempt brings it back inline first.
  if (claimCheckAttributes.digest in parsed) return { headers, body: Buffer.alloc(0), awaitsClaimCheckData: true };
  const notificatie = cloudEventAsNotificatie(parsed);
  if (notificatie === undefined) throw new Error('the event has no notificatie');
  return { headers, body: Buffer.from(JSON.stringify(notificatie), 'utf8') };
}

/**
 * `request` with its bearer token; WH-3: never without one. `exact`: the credential is the whole
 * `Authorization` value (a ZGW abonnement's `auth`, sent as the consumer gave it).
 */
export function withAccessToken(request: WebhookRequest, accessToken: string, exact = false): WebhookRequest {
  if (!accessToken) throw new Error('WH-3: a delivery request carries an access token');
  const authorization = exact ? accessToken : `Bearer ${accessToken}`;
  return { ...request, headers: { ...request.headers, authorization } };
}

/**
 * A replayed delivery says so beside the event, never in it (docs/REPLAY.md): which replay, and the
 * event's place in it in acceptance order, so a receiver can tell it from a first delivery and put
 * a replay back in order.
 */
export const REPLAY_HEADERS = { id: 'koerier-replay-id', sequence: 'koerier-replay-sequence' } as const;

function replayHeaders(message: DeliveryMessage): Record<string, string> {
  return message.replay
    ? { [REPLAY_HEADERS.id]: message.replay.id, [REPLAY_HEADERS.sequence]: String(message.replay.sequence) }
    : {};
}

/**
 * Why `request` cannot be sent as it is, before anything is sent (review item 8): a header value
 * the HTTP client refuses (characters above U+00FF, control characters), e.g. a Content-Type made
 * from an event's `datacontenttype` in binary mode. Such a delivery is the event's (or Koerier's)
 * fault, never the target's. Returns the header's name (never its value); undefined when sendable.
 */
export function unsendableHeader(request: WebhookRequest): string | undefined {
  for (const [name, value] of Object.entries(request.headers)) {
    if (!HEADER_NAME.test(name) || !HEADER_VALUE.test(value)) return name;
  }
  return undefined;
}

/** RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** RFC 9110 field-value as Node and undici accept it: visible ASCII, space, tab and obs-text. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
