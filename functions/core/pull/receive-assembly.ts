/**
 * The pure half of a receive (docs/PULL.md): which received messages go to the consumer and which
 * to the dead letters, and the answer's body — the events as they go out (exactly as accepted,
 * CE-13, unless the claim check changed them: receive-claim-check.ts), spliced in as their own JSON
 * text, with their locks beside them, cut before Lambda's 6 MB response.
 */
import { decodeDelivery, type DeliveryMessage } from '../delivery-message/delivery-message.js';
import { KoerierError, problem } from '../http/problems.js';
import type { PulledMessage } from './pull-queues.js';
import { jsonEscapedBytes, type EventText } from '../cloudevents/event-text.js';
import type { WithheldReason } from '../routing/may-receive.js';

/** What a receive does with one message. */
export type Disposition =
  | {
      readonly kind: 'deliver';
      readonly message: PulledMessage;
      readonly delivery: DeliveryMessage;
      /** Its events, attributes read once (issue 29, item 4): what the hand-out check reads. */
      readonly events: readonly EventText[];
    }
  | {
      readonly kind: 'dead-letter';
      readonly message: PulledMessage;
      readonly delivery: DeliveryMessage;
      readonly reason: 'rejected' | 'max-deliveries';
      readonly detail: string;
    }
  /** Routed while the subscription might receive it, but it may not now (`mayReceive`): settled unsent, never handed out. */
  | {
      readonly kind: 'withheld';
      readonly message: PulledMessage;
      readonly delivery: DeliveryMessage;
      readonly reason: WithheldReason;
    }
  /** Not a delivery message Koerier wrote: left alone, so the queue's redrive policy takes it. */
  | { readonly kind: 'unreadable'; readonly message: PulledMessage };

/**
 * A message received more than `maxDeliveryCount` times, or marked by a reject, goes to the dead
 * letters and is never handed out again; anything else is delivered.
 */
export function dispositionOf(
  message: PulledMessage,
  maxDeliveryCount: number,
  rejections: ReadonlyMap<string, string>,
): Disposition {
  let delivery: DeliveryMessage;
  let events: readonly EventText[];
  try {
    ({ message: delivery, events } = decodeDelivery(message.body));
  } catch {
    return { kind: 'unreadable', message };
  }
  const rejected = rejections.get(message.messageId);
  if (rejected !== undefined) return { kind: 'dead-letter', message, delivery, reason: 'rejected', detail: rejected };
  if (message.receiveCount > maxDeliveryCount) {
    return {
      kind: 'dead-letter',
      message,
      delivery,
      reason: 'max-deliveries',
      detail: `received ${maxDeliveryCount} times without being acknowledged (maxdeliverycount)`,
    };
  }
  return { kind: 'deliver', message, delivery, events };
}

export interface LockView {
  readonly locktoken: string;
  readonly lockeduntil: string;
  readonly deliverycount: number;
  readonly deliverykey: string;
  /** A replayed event (docs/REPLAY.md): the replay and the event's place in it; absent on a first delivery. */
  readonly replay?: { readonly id: string; readonly sequence: number };
}

/**
 * Lambda's response limit is 6 MB, counted on the JSON the function returns, where the body is a
 * string: every `"` and `\` of it is escaped, so its events count twice at worst. The answer stays
 * below this with room for the status and headers.
 */
export const MAX_ANSWER_BYTES = 6 * 1024 * 1024 - 64 * 1024;

/**
 * The most a receive with an Idempotency-Key answers (EDU-IDEM-3, docs/PULL.md): its answer is
 * stored whole so that a repeat gets the same events and locks again, and the idempotency item
 * must stay within DynamoDB's 400 KB with its key, fingerprint and headers. Counted as Lambda
 * counts (escaped), so the stored text is never larger.
 */
export const KEYED_RECEIVE_MAX_BYTES = 320 * 1024;

/** A receive with an Idempotency-Key met an event that cannot fit the answer it can store; it went back to the queue. */
export function tooLargeToReplay(maxBytes: number): KoerierError {
  return new KoerierError(
    problem(
      422,
      'receive-too-large-to-replay',
      `The next event does not fit the ${Math.floor(maxBytes / 1024)} KiB a receive with an Idempotency-Key can store for its repeats; it is back in the queue. Receive it without an Idempotency-Key.`,
    ),
  );
}

/** How many of `entries`, from the first, fit an answer of `maxBytes`. */
function fittingEntries(
  entries: readonly { readonly event: string; readonly lock: LockView }[],
  maxBytes: number,
): number {
  // Escaping at most sextuples a byte (a control character becomes \u00XX): when even that stays
  // within the limit, every entry fits, and no event needs escaping just to be counted.
  const worstCase = entries.reduce(
    (sum, { event }) => sum + 6 * Buffer.byteLength(event) + LOCK_ALLOWANCE + 2,
    ENVELOPE_BYTES,
  );
  if (worstCase <= maxBytes) return entries.length;
  let bytes = ENVELOPE_BYTES;
  let included = 0;
  for (const { event, lock } of entries) {
    // Each piece as it will look inside the escaped body, plus its comma.
    const size = escapedBytes(event) + escapedBytes(JSON.stringify(lock)) + 2;
    if (bytes + size > maxBytes) break;
    bytes += size;
    included++;
  }
  return included;
}

/** What one event takes in an answer at most besides its own escaped text: its lock (a few hundred bytes; this allows for more) and commas. */
const LOCK_ALLOWANCE = 4096;
const ENVELOPE_BYTES = Buffer.byteLength(JSON.stringify(JSON.stringify({ events: [], locks: [] })));

/**
 * `{"events":[…],"locks":[…]}`: the events as their stored text, byte for byte. Adds entries in
 * order until the next would take the answer past `maxBytes` (counted as Lambda counts it);
 * `included` says how many made it, the rest go back to the queue.
 */
export function assembleAnswer(
  entries: readonly { readonly event: string; readonly lock: LockView }[],
  maxBytes = MAX_ANSWER_BYTES,
): { body: string; included: number } {
  const included = fittingEntries(entries, maxBytes);
  const kept = entries.slice(0, included);
  return {
    body: `{"events":[${kept.map((entry) => entry.event).join(',')}],"locks":${JSON.stringify(kept.map((entry) => entry.lock))}}`,
    included,
  };
}

/** The bytes `event` and its lock take in an answer at most, counted as Lambda counts them. */
export function answerBytesOf(event: string): number {
  return escapedBytes(event) + LOCK_ALLOWANCE;
}

/** Whether `event` fits an answer on its own. An event that never could would only go back to the queue again. */
export function fitsOneAnswer(event: string, maxBytes = MAX_ANSWER_BYTES): boolean {
  return ENVELOPE_BYTES + answerBytesOf(event) <= maxBytes;
}

/** An event's text as Lambda counts it, measured without building the escaped copy (issue 29, item 4); a lock is small and built anyway. */
function escapedBytes(text: string): number {
  return jsonEscapedBytes(text);
}
