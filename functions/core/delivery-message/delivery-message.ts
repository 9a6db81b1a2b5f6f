/**
 * The message on the deliveries queue: one per (event or batch of events, subscription). The
 * router writes it, the delivery function sends it. Its `deliveryId` is fixed here, once, and is
 * the `Idempotency-Key` of every attempt (EDU-IDEM-9, EDU-IDEM-11).
 *
 * Its own area because it is the contract between two: routing writes it and delivery reads it
 * (and writes it again for a split or a redrive). Both import it; neither imports the other for it,
 * so `core/routing` does not depend on `core/delivery`.
 */
import { arrayElementSpans, memberValueSpan } from '../cloudevents/json-spans.js';
import { EventText } from '../cloudevents/event-text.js';
import { attributesOf } from '../cloudevents/stored-event.js';
import { isCorrelationId } from '../ids/correlation-id.js';

export interface DeliveryMessage {
  readonly version: 1;
  /** UUIDv4: the Idempotency-Key sent with every attempt of this delivery. */
  readonly deliveryId: string;
  readonly subscriptionId: string;
  /** Stored events in the JSON event format, exactly as accepted (CE-13). One, unless the
   * subscription takes batches (EDU-11, JSON-3). */
  readonly events: readonly string[];
  /** Epoch ms when the delivery was created: attempts stop when the key's lifetime from here has
   * passed (EDU-IDEM-12). */
  readonly createdAt: number;
  /** Set by a redrive: a new operation, so a new key (EDU-IDEM-13). */
  readonly redriveOf?: string;
  /** The ingest request's correlation id: on the delivery's log lines and the webhook request's `X-Correlation-ID`. */
  readonly correlationId?: string;
  /**
   * Set by a replay (docs/REPLAY.md): which one, and the event's place in it, in acceptance order
   * from 1. The event itself is unchanged; push sends this as headers, pull beside the event.
   */
  readonly replay?: ReplayMark;
  /**
   * An ordered subscription's event with a key (issue 33, docs/ORDERING.md): set by the router with
   * the key alone; the ordered outbox (ordered-outbox.ts) gives it its place in the key's lane (`sequence`, from 1).
   */
  readonly ordering?: OrderingMark;
}

export interface OrderingMark {
  readonly key: string;
  /** The event's place in acceptance order (core/ordering/acceptance-position.ts): the lane appends by it. */
  readonly position?: number;
  readonly sequence?: number;
  /**
   * A head queued again because a copy of the event before it came back settled (ordered-outbox.ts,
   * `resendHead`); such a copy, found settled itself, does not queue one more.
   */
  readonly resent?: true;
}

/**
 * What a delivery made from another keeps of it — a dead letter, a single-event split, a redrive:
 * the dead letter it redrives, the publish request's correlation id, and the replay it came from
 * (so a redrive of a replayed event of an ordered subscription finds the replay's lane again,
 * core/ordering/replay-lanes.ts), each only where set.
 */
export function lineageOf(
  from: Pick<DeliveryMessage, 'redriveOf' | 'correlationId' | 'replay'>,
): Pick<DeliveryMessage, 'redriveOf' | 'correlationId' | 'replay'> {
  return {
    ...(from.redriveOf === undefined ? {} : { redriveOf: from.redriveOf }),
    ...(from.correlationId === undefined ? {} : { correlationId: from.correlationId }),
    ...(from.replay === undefined ? {} : { replay: { id: from.replay.id, sequence: from.replay.sequence } }),
  };
}

export interface ReplayMark {
  readonly id: string;
  readonly sequence: number;
}

/**
 * The events are spliced into the message as JSON values, not as JSON strings: a string would
 * escape every quote of the event and could push an event near the size limit past SQS's
 * 256 KiB. Decoding slices each event's text back out byte for byte (CE-13).
 */
export function encodeDeliveryMessage(message: DeliveryMessage): string {
  const { events, ...rest } = message;
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)},"events":[${events.join(',')}]}`;
}

export function decodeDeliveryMessage(body: string): DeliveryMessage {
  return decodeDelivery(body).message;
}

/** An event by what names it (CE-17) and its type, as an attempt record lists it. */
export interface EventName {
  readonly source: string;
  readonly id: string;
  readonly type: string;
}

/**
 * The message, its events as event texts, and its events by name. The message's own members are
 * parsed without its events; each event's context attributes are parsed once, here, without its
 * data (EventText, issue 29 item 4), and kept for every later use — the hand-out check, the attempt
 * record, a binary rendering — where the message was once parsed whole and then each event again
 * (issue 15 took the attempt record's parse away: about 5 µs a delivery). An event whose `source`,
 * `id` or `type` is not a string is left out of `eventNames`, as `eventReferences`
 * (core/delivery/delivery-views.ts) leaves it out.
 */
export function decodeDelivery(body: string): {
  readonly message: DeliveryMessage;
  readonly events: readonly EventText[];
  readonly eventNames: readonly EventName[];
} {
  const { value, events } = splitMessage(body);
  if (
    value.version !== 1 ||
    typeof value.deliveryId !== 'string' ||
    typeof value.subscriptionId !== 'string' ||
    typeof value.createdAt !== 'number'
  ) {
    throw new TypeError('Not a Koerier delivery message');
  }
  const parsed = Array.isArray(value.events) && value.events.length === events.length ? value.events : undefined;
  // A small message was parsed whole (cheaper than finding its events first): each event's attributes come with it.
  const texts = events.map(
    (json, i) => new EventText(json, parsed && attributesOf(parsed[i] as Record<string, unknown>)),
  );
  const eventNames = texts.flatMap(({ attributes: { source, id, type } }) =>
    typeof source === 'string' && typeof id === 'string' && typeof type === 'string' ? [{ source, id, type }] : [],
  );
  const { correlationId, events: _, ...rest } = value as Omit<DeliveryMessage, 'events'> & { events: unknown };
  // It becomes a header of the webhook request: only a well-formed one travels on.
  return {
    message: { ...rest, ...(isCorrelationId(correlationId) ? { correlationId } : {}), events },
    events: texts,
    eventNames,
  };
}

/** Below this a message is parsed whole: finding its events first costs more than it saves (bench/event-hops.ts). */
const WHOLE_PARSE_BELOW = 2048;

type MessageMembers = Partial<Omit<DeliveryMessage, 'events'>> & { events?: unknown };

/**
 * The message's members but its events, and each event's text. The events are found by walking the
 * text (json-spans.ts) and the rest parsed with an empty list in their place; the queue holds only
 * messages Koerier wrote, so anything that does not take that shape is read whole and refused there.
 */
function splitMessage(body: string): { value: MessageMembers; events: string[] } {
  if (body.length < WHOLE_PARSE_BELOW) {
    const value = JSON.parse(body) as MessageMembers;
    if (
      !Array.isArray(value.events) ||
      !value.events.every((e) => e !== null && typeof e === 'object' && !Array.isArray(e))
    )
      throw new TypeError('Not a Koerier delivery message');
    const span = memberValueSpan(body, 'events')!;
    const eventsText = body.slice(span[0], span[1]).trim();
    return { value, events: arrayElementSpans(eventsText).map(([start, end]) => eventsText.slice(start, end)) };
  }
  try {
    const span = memberValueSpan(body, 'events');
    if (span) {
      const eventsText = body.slice(span[0], span[1]).trim();
      const events = eventsText.startsWith('[')
        ? arrayElementSpans(eventsText).map(([start, end]) => eventsText.slice(start, end))
        : [];
      if (eventsText.startsWith('[') && events.every((event) => event.startsWith('{') && event.endsWith('}'))) {
        const value = JSON.parse(`${body.slice(0, span[0])}[]${body.slice(span[1])}`) as MessageMembers;
        if (Array.isArray(value.events)) return { value, events };
      }
    }
  } catch {
    // Not the shape a message takes: read whole below.
  }
  JSON.parse(body);
  throw new TypeError('Not a Koerier delivery message');
}
