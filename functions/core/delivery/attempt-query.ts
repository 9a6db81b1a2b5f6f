/**
 * "What happened to my event?" (issue 13, item 5): the query of GET /subscriptions/{id}/deliveries
 * — the attempts of one event (`source` + `id`), of one outcome, within a time window — read and
 * checked, and the filter it makes of a page of history.
 *
 * The history is kept newest first per subscription; the filter runs on each page the store hands
 * back, as a DynamoDB filter does: a page may hold fewer items than `limit` (even none) and still
 * have a `next` link. Following `next` to the end searches the whole history (7 days).
 */
import type { HttpRequest } from '../http/messages.js';
import { KoerierError, problems } from '../http/problems.js';
import type { AttemptOutcome, AttemptRecord } from './delivery-records.js';

const OUTCOMES: readonly AttemptOutcome[] = ['delivered', 'retrying', 'dead-lettered', 'retired'];

/** The parameters of the attempt list, the paging ones included. */
export const ATTEMPT_QUERY_PARAMETERS = ['limit', 'cursor', 'source', 'id', 'outcome', 'since', 'until'] as const;

export interface AttemptQuery {
  readonly source?: string;
  readonly id?: string;
  readonly outcome?: AttemptOutcome;
  /** Epoch ms, inclusive. */
  readonly since?: number;
  /** Epoch ms, exclusive. */
  readonly until?: number;
  /** The filters as they go into the `next` link. */
  readonly linkParameters: string;
}

/** Throws 400 `invalid-parameter` for an unknown outcome or a time that is not an RFC 3339 date-time. */
export function readAttemptQuery(request: Pick<HttpRequest, 'query'>): AttemptQuery {
  const { source, id, outcome, since, until } = request.query;
  if (outcome !== undefined && !OUTCOMES.includes(outcome as AttemptOutcome))
    throw invalid(`outcome must be one of ${OUTCOMES.join(', ')}.`);
  const time = (name: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const parsed = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value)
      ? Date.parse(value)
      : Number.NaN;
    if (Number.isNaN(parsed)) throw invalid(`${name} must be an RFC 3339 date-time, e.g. 2026-11-23T09:00:00Z.`);
    return parsed;
  };
  const filters = { source, id, outcome, since, until };
  const linkParameters = Object.entries(filters)
    .flatMap(([name, value]) => (value === undefined ? [] : [`&${name}=${encodeURIComponent(value)}`]))
    .join('');
  return {
    ...(source === undefined ? {} : { source }),
    ...(id === undefined ? {} : { id }),
    ...(outcome === undefined ? {} : { outcome: outcome as AttemptOutcome }),
    ...optional('since', time('since', since)),
    ...optional('until', time('until', until)),
    linkParameters,
  };
}

/** Whether an attempt is one the query asks for. */
export function attemptMatches(record: AttemptRecord, query: AttemptQuery): boolean {
  if (query.outcome !== undefined && record.outcome !== query.outcome) return false;
  const at = Date.parse(record.at);
  if (query.since !== undefined && at < query.since) return false;
  if (query.until !== undefined && at >= query.until) return false;
  if (query.source === undefined && query.id === undefined) return true;
  return (record.events ?? []).some(
    (event) =>
      (query.source === undefined || event.source === query.source) &&
      (query.id === undefined || event.id === query.id),
  );
}

function optional<K extends string>(name: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [name]: value } as Record<K, number>);
}

function invalid(detail: string): KoerierError {
  return new KoerierError(problems.badRequest('invalid-parameter', detail));
}
