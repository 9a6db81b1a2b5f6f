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
import { EventText } from '../cloudevents/event-text.js';
import { redriveDeliveryId } from '../delivery-message/delivery-rules.js';
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { readJsonBody, requestBody } from '../http/json-body.js';
import { mayReceive, type WithheldReason } from '../routing/may-receive.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { lineageOf, type DeliveryMessage } from '../delivery-message/delivery-message.js';
import type { DeadLetter } from './delivery-records.js';

/** Dead letters one redrive request sends at most; `more: true` says to call again. */
export const MAX_REDRIVE = 500;

export type { WithheldReason } from '../routing/may-receive.js';

export interface Withheld {
  readonly deliveryId: string;
  readonly reason: WithheldReason;
}

/** Why the dead letter may not go to the subscription as it is now (`mayReceive` for each event); undefined when it may. */
export function withheldReason(
  subscription: Subscription,
  deadLetter: Pick<DeadLetter, 'events'>,
  entitlements: Entitlements,
): WithheldReason | undefined {
  for (const json of deadLetter.events) {
    const verdict = mayReceive(subscription, new EventText(json), entitlements);
    if (verdict !== 'receives') return verdict;
  }
  return undefined;
}

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
    deliveryId: redriveDeliveryId(),
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
