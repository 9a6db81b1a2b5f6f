/**
 * `POST /subscriptions/filters/test` (issue 32): says which events a list of filters matches, so a
 * subscriber can try a filter before it goes live. It decides as delivery does, with the same
 * code: an event matches when every filter matches (`mayReceive`, whose conditions are
 * `subscriptionMatches`), and a `sql` filter whose evaluation raises an error does not match
 * (CESQL's fail-fast rule), which the answer reports per expression.
 *
 * On given events the caller's entitlement plays no part: the caller already holds them. On the
 * newest archived events it does: only those the caller may receive are tried, by the rule routing
 * applies to every event (`mayReceive` for a subscription of the caller without conditions), so a
 * trial never shows an event its caller could not subscribe to.
 */
import type { Principal } from '../auth/access-tokens.js';
import type { CesqlErrorKind } from '../cesql/index.js';
import { EventText } from '../cloudevents/event-text.js';
import { attributesOf } from '../cloudevents/stored-event.js';
import { mayReceive, type ReceivableEvent } from '../routing/may-receive.js';
import { subscriptionMatches } from '../routing/route-keys.js';
import { readLatestArchived } from '../replay/archive-latest.js';
import type { EventArchive } from '../replay/ports.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { EventAttributes, Filter } from '../subscriptions/filters.js';
import { compiledSqlFilter } from '../subscriptions/sql-filter.js';
import { FILTER_TEST_LIMITS, type FilterTestRequest } from './filter-test-request.js';

export interface FilterTestDependencies {
  readonly archive: EventArchive;
  /** The partner directory's, as routing reads them now. */
  readonly entitlements: Entitlements;
  /** Epoch ms. */
  readonly now: number;
  /** How long the archive keeps events: older ones are never shown, whatever S3 still holds. */
  readonly retentionMs: number;
}

/** A `sql` expression whose evaluation raised an error, so it did not match. */
export interface SqlEvaluationError {
  /** Where the expression sits in the filters, as the 400 names it: `filters[1].any[0].sql`. */
  readonly filter: string;
  readonly error: CesqlErrorKind;
}

export interface TestedEvent {
  readonly id: string;
  readonly source: string;
  readonly type: string;
  /** The archived event's acceptance time (RFC 3339); absent for a given event. */
  readonly acceptedAt?: string;
  /** Its context attributes, as the filters read them. */
  readonly attributes: EventAttributes;
  /** All filters match: a subscription with these filters would receive it. */
  readonly matches: boolean;
  /** Each filter's own answer, in the order given. */
  readonly filters: readonly boolean[];
  readonly sqlErrors?: readonly SqlEvaluationError[];
}

export interface FilterTestAnswer {
  readonly tested: number;
  readonly matched: number;
  readonly events: readonly TestedEvent[];
  /** For `archived`: how far back the archive was read. */
  readonly archive?: { readonly last: number; readonly scanned: number; readonly complete: boolean };
}

export async function testFilters(
  request: FilterTestRequest,
  principal: Principal,
  deps: FilterTestDependencies,
): Promise<FilterTestAnswer> {
  const { filters } = request;
  if ('events' in request) {
    const events = request.events.map((event) => tested(filters, givenEvent(event)));
    return summary(events);
  }
  const caller = { owner: principal.clientId };
  const read = await readLatestArchived(deps.archive, {
    now: deps.now,
    oldest: deps.now - deps.retentionMs,
    limit: request.archived,
    keep: (archived) => mayReceive(caller, new EventText(archived.json), deps.entitlements) === 'receives',
    maxRequests: FILTER_TEST_LIMITS.maxArchiveRequests,
    maxScanned: FILTER_TEST_LIMITS.maxArchiveScanned,
  });
  const events = read.events.map((archived) => ({
    ...tested(filters, new EventText(archived.json)),
    acceptedAt: new Date(archived.acceptedAt).toISOString(),
  }));
  return { ...summary(events), archive: { last: request.archived, scanned: read.scanned, complete: read.complete } };
}

function givenEvent(event: Record<string, unknown>): ReceivableEvent & { id: string } {
  const attributes = attributesOf(event) as EventAttributes;
  const [id, source, type] = [event['id'], event['source'], event['type']].map(String) as [string, string, string];
  return { attributes, id, source, type, json: JSON.stringify(event) };
}

function tested(
  filters: readonly Filter[],
  event: ReceivableEvent & { readonly id: string },
): Omit<TestedEvent, 'acceptedAt'> {
  const { attributes } = event;
  const sqlErrors = filters.flatMap((filter, index) => sqlErrorsOf(filter, `filters[${index}]`, attributes));
  return {
    id: event.id,
    source: event.source,
    type: event.type,
    attributes,
    // The delivery's own rule, not a second one: the conditions of a subscription with these filters.
    matches: subscriptionMatches({ filters }, attributes),
    filters: filters.map((filter) => subscriptionMatches({ filters: [filter] }, attributes)),
    ...(sqlErrors.length > 0 ? { sqlErrors } : {}),
  };
}

/**
 * Every `sql` expression in the filter whose evaluation on these attributes raises an error. Each
 * is evaluated, also where `any` would have stopped at an earlier branch: the trial says what each
 * expression does.
 */
function sqlErrorsOf(filter: Filter, at: string, attributes: EventAttributes): SqlEvaluationError[] {
  if ('sql' in filter) {
    const error = compiledSqlFilter(filter.sql)?.evaluate(attributes).error;
    return error === undefined ? [] : [{ filter: `${at}.sql`, error }];
  }
  if ('all' in filter) return filter.all.flatMap((child, i) => sqlErrorsOf(child, `${at}.all[${i}]`, attributes));
  if ('any' in filter) return filter.any.flatMap((child, i) => sqlErrorsOf(child, `${at}.any[${i}]`, attributes));
  if ('not' in filter) return sqlErrorsOf(filter.not, `${at}.not`, attributes);
  return [];
}

function summary(events: readonly TestedEvent[]): FilterTestAnswer {
  return { tested: events.length, matched: events.filter((event) => event.matches).length, events };
}
