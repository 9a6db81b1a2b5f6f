/**
 * What the routed-event ledger's items hold for the event trace (issue 30 item 1), as
 * `dynamodb-routed-event-ledger.ts` writes it and `dynamodb-routed-event-records.ts` reads it:
 *
 *   marker  `routed#<source>#<id>`  + acceptedAt, publisher, idemKey, correlationId (with the claim's PutItem)
 *                                   + routes (JSON, only where a claim is completed on its own)
 *                                   + duplicateCount, latestDuplicate (JSON; only when a duplicate is dropped)
 *   commit  `routed-commit#…`       + routes: a map claim id → JSON, with the write that lists the claims
 *
 * None of it is a request of its own on the routing path: the marker's PutItem stays within its
 * first kilobyte for events of ordinary size, and the commit grows by about 40 bytes per
 * subscription an event went to.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { EventAcceptance, RoutedTo } from '../core/routing/routed-events.js';
import type { RecordedRouting } from '../core/trace/routed-event-records.js';
import { tables } from '../config/resources.js';

export type Item = Record<string, AttributeValue>;

/** The marker's key and expiry attributes: markers live in the idempotency table. */
export const MARKER_KEY = tables.idempotency.partitionKey.name;
export const MARKER_TTL = tables.idempotency.ttlAttribute;

/**
 * The most one event's routes take in a commit item; past it only their count is kept. A commit
 * lists at most 100 claims, so its routes stay below 200 KB of DynamoDB's 400 KB item. About 50
 * subscription ids (UUIDs) fit.
 */
export const ROUTES_KEPT_BYTES = 2048;

export function acceptanceAttributes(acceptance: EventAcceptance | undefined): Item {
  if (acceptance === undefined) return {};
  const { acceptedAt, publisher, idempotencyKey, correlationId } = acceptance;
  return {
    acceptedAt: { N: String(acceptedAt) },
    ...(publisher === undefined ? {} : { publisher: { S: publisher } }),
    ...(idempotencyKey === undefined ? {} : { idemKey: { S: idempotencyKey } }),
    ...(correlationId === undefined ? {} : { correlationId: { S: correlationId } }),
  };
}

export function acceptanceOf(item: Item): EventAcceptance | undefined {
  const at = item['acceptedAt']?.N;
  if (at === undefined) return undefined;
  return {
    acceptedAt: Number(at),
    ...(item['publisher']?.S === undefined ? {} : { publisher: item['publisher'].S }),
    ...(item['idemKey']?.S === undefined ? {} : { idempotencyKey: item['idemKey'].S }),
    ...(item['correlationId']?.S === undefined ? {} : { correlationId: item['correlationId'].S }),
  };
}

/** One event's routes as kept: the subscription ids only while they fit ROUTES_KEPT_BYTES. */
export function routesValue(routes: RoutedTo): AttributeValue {
  const full = JSON.stringify({ at: routes.routedAt, n: routes.subscriptionIds.length, to: routes.subscriptionIds });
  if (Buffer.byteLength(full) <= ROUTES_KEPT_BYTES) return { S: full };
  return { S: JSON.stringify({ at: routes.routedAt, n: routes.subscriptionIds.length }) };
}

export function routingOf(value: AttributeValue | undefined): RecordedRouting | undefined {
  if (value?.S === undefined) return undefined;
  const { at, n, to } = JSON.parse(value.S) as { at: number; n: number; to?: string[] };
  return { routedAt: at, count: n, ...(to === undefined ? {} : { subscriptionIds: to }) };
}

/** A dropped duplicate's acceptance, as `latestDuplicate` holds it. */
export function acceptanceJson(acceptance: EventAcceptance): AttributeValue {
  return { S: JSON.stringify(acceptance) };
}

export function acceptanceFromJson(value: AttributeValue | undefined): EventAcceptance | undefined {
  return value?.S === undefined ? undefined : (JSON.parse(value.S) as EventAcceptance);
}
