/**
 * GET /events (issue 30 item 4): the archived events of a type, a source and a time window, newest
 * first, by their identity only (source, id, type, acceptance time; never their data), so an
 * operator or a publisher can find an event whose id it no longer has and open its trace
 * (event-trace.ts).
 *
 * Who sees which: `admin` every archived event; any other caller (the trace's scopes) the events
 * whose `source` its publish grants cover: the events it published. Grants of two clients never overlap (core/auth/publish-grants.ts),
 * so the grant names the one client that may have published an event: the archive need not keep
 * the publisher. A client whose grants moved sees what its grants cover now.
 *
 * The archive is read newest first (replay/archive-latest.ts), within the same bounds as a filter
 * trial; the answer says whether the reader reached the window's start (`complete`).
 */
import { hasScope, scopes, type Principal } from '../auth/access-tokens.js';
import { grantCovers, type PublishGrants } from '../auth/publish-grants.js';
import type { HttpRequest } from '../http/messages.js';
import { KoerierError, problems } from '../http/problems.js';
import { refuseUnknownParameters } from '../http/query-parameters.js';
import { FILTER_TEST_LIMITS } from '../filter-test/filter-test-request.js';
import { readLatestArchived } from '../replay/archive-latest.js';
import type { EventArchive } from '../replay/ports.js';

export const EVENT_SEARCH_LIMITS = { defaultLimit: 50, maxLimit: 200 } as const;

export const EVENT_SEARCH_PARAMETERS = ['type', 'source', 'since', 'until', 'limit'] as const;

export interface EventSearchQuery {
  readonly type?: string;
  readonly source?: string;
  /** Epoch ms, inclusive. */
  readonly since?: number;
  /** Epoch ms, exclusive. */
  readonly until?: number;
  readonly limit: number;
}

export interface FoundEvent {
  readonly source: string;
  readonly id: string;
  readonly type: string;
  /** RFC 3339: when the ingest accepted it. */
  readonly acceptedAt: string;
}

export interface EventSearchAnswer {
  /** Newest first. */
  readonly events: readonly FoundEvent[];
  /** Archived events looked at, the caller's or not. */
  readonly scanned: number;
  /** False when a bound stopped the reader before `limit` events or the window's start. */
  readonly complete: boolean;
}

export interface EventSearchDependencies {
  readonly archive: EventArchive;
  /** The partner directory's, as the ingest checks them now. */
  readonly publishGrants: PublishGrants;
  /** Epoch ms. */
  readonly now: number;
  /** How long the archive keeps events: older ones are never shown, whatever S3 still holds. */
  readonly retentionMs: number;
}

/** Throws 400 `invalid-parameter` for an unknown parameter, a time that is not RFC 3339, or a limit out of range. */
export function readEventSearchQuery(request: Pick<HttpRequest, 'query'>): EventSearchQuery {
  refuseUnknownParameters(request, EVENT_SEARCH_PARAMETERS);
  const { type, source, since, until, limit } = request.query;
  const count = limit === undefined ? EVENT_SEARCH_LIMITS.defaultLimit : Number(limit);
  if (!/^\d+$/.test(limit ?? '1') || count < 1 || count > EVENT_SEARCH_LIMITS.maxLimit)
    throw invalid(`limit must be a whole number from 1 to ${EVENT_SEARCH_LIMITS.maxLimit}.`);
  const sinceAt = time('since', since);
  const untilAt = time('until', until);
  if (sinceAt !== undefined && untilAt !== undefined && sinceAt >= untilAt)
    throw invalid('since must be before until.');
  return {
    ...(type ? { type } : {}),
    ...(source ? { source } : {}),
    ...(sinceAt === undefined ? {} : { since: sinceAt }),
    ...(untilAt === undefined ? {} : { until: untilAt }),
    limit: count,
  };
}

export async function searchEvents(
  query: EventSearchQuery,
  caller: Principal,
  deps: EventSearchDependencies,
): Promise<EventSearchAnswer> {
  const operator = hasScope(caller, scopes.admin);
  const grants = deps.publishGrants[caller.clientId] ?? [];
  const visible = (source: string) => operator || grants.some((grant) => grantCovers(grant, source));
  // The reader's `now` is inclusive; the query's `until` is not.
  const newest = Math.min(deps.now, query.until === undefined ? deps.now : query.until - 1);
  const oldest = Math.max(deps.now - deps.retentionMs, query.since ?? Number.NEGATIVE_INFINITY);
  if (newest < oldest || (!operator && grants.length === 0)) return { events: [], scanned: 0, complete: true };
  const read = await readLatestArchived(deps.archive, {
    now: newest,
    oldest,
    limit: query.limit,
    keep: (event) =>
      (query.type === undefined || event.type === query.type) &&
      (query.source === undefined || event.source === query.source) &&
      visible(event.source),
    maxRequests: FILTER_TEST_LIMITS.maxArchiveRequests,
    maxScanned: FILTER_TEST_LIMITS.maxArchiveScanned,
  });
  return {
    events: read.events.map((event) => ({
      source: event.source,
      id: event.id,
      type: event.type,
      acceptedAt: new Date(event.acceptedAt).toISOString(),
    })),
    scanned: read.scanned,
    complete: read.complete,
  };
}

function time(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (Number.isNaN(parsed)) throw invalid(`${name} must be an RFC 3339 date-time, e.g. 2026-11-23T09:00:00Z.`);
  return parsed;
}

function invalid(detail: string): KoerierError {
  return new KoerierError(problems.badRequest('invalid-parameter', detail));
}
