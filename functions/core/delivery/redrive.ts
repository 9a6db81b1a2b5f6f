/**
 * Redrive: dead letters sent again (EDU-18), by `POST …/dead-letters/redrive` and by a resume.
 *
 * A redrive is a new delivery operation with a new Idempotency-Key (EDU-IDEM-13), linked to the
 * old one by `redriveOf`. Keeping the old key would look friendlier to deduplication, but a
 * receiver stores the response of every completed operation under its key and replays it
 * (EDU-IDEM-14): a delivery that died on a 4xx would get that same 4xx back for ever. And the
 * automatic retries of the first operation are over, which is exactly when the profile says a
 * new request takes a new key (section 8.3.5). Receivers still recognise the event itself by
 * `source` + `id` (CE-17, EDU-IDEM-15).
 *
 * Nothing is sent again on the strength of an old decision (review item 16): the router checked
 * entitlement and filters when the event was routed, but a grant may have been revoked or the
 * filters changed since. A redrive and a resume re-check every event of a dead letter against the
 * owner's entitlements as configured now and the subscription's filters as they are now; a dead
 * letter with an event that fails either is not sent and stays where it is, untouched, until its
 * retention ends (a grant that comes back makes it redrivable again). The answer lists it under
 * `withheld` with the reason (`not-entitled`, `no-longer-matches`), and the audit log records it.
 */
import { randomUUID } from 'node:crypto';
import { readStoredEvent } from '../cloudevents/index.js';
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { readJsonBody, requestBody } from '../http/json-body.js';
import { subscriptionMatches } from '../routing/route-keys.js';
import { entitledToEvent, type Entitlements } from '../subscriptions/entitlements.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { lineageOf, type DeliveryMessage } from '../delivery-message/delivery-message.js';
import type { DeadLetter } from './delivery-records.js';

/** Dead letters one redrive request sends at most; `more: true` says to call again. */
export const MAX_REDRIVE = 500;

/** Why a dead letter is not sent again. */
export type WithheldReason = 'not-entitled' | 'no-longer-matches';

export interface Withheld {
  readonly deliveryId: string;
  readonly reason: WithheldReason;
}

/** Why the dead letter may not go to the subscription as it is now; undefined when it may. */
export function withheldReason(
  subscription: Subscription,
  deadLetter: Pick<DeadLetter, 'events'>,
  entitlements: Entitlements,
): WithheldReason | undefined {
  for (const json of deadLetter.events) {
    const reason = eventWithheldReason(subscription, json, entitlements);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/**
 * Why one stored event may not go to the subscription as it is now; undefined when it may. The
 * same check holds wherever a queued event is handed out (issue 28, item 9): a push delivery's
 * every attempt (dispatcher.ts) and a pull receive (pull-service.ts) make what fails it a dead
 * letter with this reason, unsent, which a redrive sends once the grant or the filter is back.
 */
export function eventWithheldReason(
  subscription: Subscription,
  json: string,
  entitlements: Entitlements,
): WithheldReason | undefined {
  const event = readStoredEvent(json);
  if (!entitledToEvent(subscription.owner, event, entitlements)) return 'not-entitled';
  if (!subscriptionMatches(subscription, event.attributes)) return 'no-longer-matches';
  return undefined;
}

/** A withheld delivery's dead-letter `detail`. */
export const WITHHELD_DETAIL: Readonly<Record<WithheldReason, string>> = {
  'not-entitled':
    "the subscription's owner is no longer entitled to the event (EDU-7), so it was not sent; a redrive sends it once the grant is back",
  'no-longer-matches':
    "the event no longer matches the subscription's filters, so it was not sent; a redrive sends it once they match it again",
};

/**
 * The new delivery messages for dead letters: each a new operation with a new key, linked by
 * `redriveOf`, carrying the correlation id of the publish request its events came in with.
 */
export function redriveMessages(
  subscriptionId: string,
  deadLetters: readonly DeadLetter[],
  createdAt: number,
): DeliveryMessage[] {
  return deadLetters.map((deadLetter) => ({
    version: 1,
    deliveryId: randomUUID(),
    subscriptionId,
    events: deadLetter.events,
    createdAt,
    // Its correlation id carried on; `redriveOf` is now the dead letter itself.
    ...lineageOf(deadLetter),
    redriveOf: deadLetter.deliveryId,
  }));
}

/** The body of a redrive request: all dead letters, or the ones named. */
export const REDRIVE_BODY = requestBody({
  schema: Type.Union(
    [
      Type.Object({ all: Type.Literal(true) }, { additionalProperties: false }),
      Type.Object(
        { deliveryIds: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_REDRIVE }) },
        { additionalProperties: false },
      ),
    ],
    { description: `{"all": true}, or {"deliveryIds": [...]} with 1 to ${MAX_REDRIVE} delivery ids.` },
  ),
  problemType: 'invalid-redrive-selection',
  requirement: 'EDU-18',
});

/** The selection a redrive request makes; throws the 400 for a body of another shape. */
export function parseRedriveSelection(body: Buffer): { deliveryIds?: ReadonlySet<string> } {
  const selection = readJsonBody(body, REDRIVE_BODY);
  return 'deliveryIds' in selection ? { deliveryIds: new Set(selection.deliveryIds) } : {};
}
