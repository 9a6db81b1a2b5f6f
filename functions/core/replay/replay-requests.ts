/**
 * The replay API's request body, its answer, and its refusals (docs/REPLAY.md), one function per
 * refusal as core/subscriptions/http-mapping.ts keeps them.
 */
import { API_BASE_PATH } from '../http/api-version.js';
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { bodyRefusal, readJsonBody, requestBody } from '../http/json-body.js';
import { KoerierError, problem, problems, type ValidationIssue } from '../http/problems.js';
import { parseFilters, type Filter } from '../subscriptions/filters.js';
import type { ReplayRecord } from './ports.js';

export interface ReplayRequest {
  readonly from: number;
  readonly to: number;
  readonly types?: readonly string[];
  readonly filters?: readonly Filter[];
}

const MAX_TYPES = 100;
const dateTime = (description: string) => Type.String({ format: 'date-time', description });

export const REPLAY_BODY = requestBody({
  schema: Type.Object(
    {
      from: dateTime('The start of the window (included), RFC 3339.'),
      to: dateTime('The end of the window (not included), RFC 3339; later than `from`.'),
      types: Type.Optional(
        Type.Array(Type.String({ minLength: 1 }), {
          minItems: 1,
          maxItems: MAX_TYPES,
          description: 'Only these types; each within the subscription and the owner’s entitlement.',
        }),
      ),
      // The filters' own rules are the subscriptions API's (parseFilters), checked after the schema.
      filters: Type.Optional(
        Type.Array(Type.Unknown({ $ref: '#/components/schemas/Filter' }), {
          description: 'Only events matching these too (CloudEvents Subscriptions API dialects).',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  problemType: 'invalid-replay-request',
  requirement: 'EDU-18',
});

/** `{"from", "to", "types"?, "filters"?}`; throws the 400 naming every problem. */
export function parseReplayRequest(body: Buffer): ReplayRequest {
  const { from, to, types, filters } = readJsonBody(body, REPLAY_BODY);
  const issues: ValidationIssue[] = [];
  const fromAt = Date.parse(from);
  const toAt = Date.parse(to);
  if (fromAt >= toAt) {
    issues.push({ attribute: 'to', rule: 'window', requirement: 'EDU-18', message: '"to" must be later than "from".' });
  }
  const narrowedTypes = types === undefined ? undefined : [...new Set(types)];
  let narrowedFilters: Filter[] | undefined;
  if (filters !== undefined) {
    const parsed = parseFilters(filters);
    issues.push(...parsed.issues);
    narrowedFilters = parsed.filters;
  }
  if (issues.length > 0) throw invalid(issues);
  return {
    from: fromAt,
    to: toAt,
    ...(narrowedTypes ? { types: narrowedTypes } : {}),
    ...(narrowedFilters && narrowedFilters.length > 0 ? { filters: narrowedFilters } : {}),
  };
}

/** The progress a subscriber reads (`GET …/replays/{rid}`), times as RFC 3339. */
export function replayView(record: ReplayRecord): Record<string, unknown> {
  return {
    id: record.replayId,
    subscriptionId: record.subscriptionId,
    state: record.state,
    from: new Date(record.from).toISOString(),
    to: new Date(record.to).toISOString(),
    ...(record.types ? { types: record.types } : {}),
    ...(record.filters ? { filters: record.filters } : {}),
    scanned: record.scanned,
    matched: record.matched,
    sent: record.sent,
    failed: record.failed,
    createdAt: new Date(record.createdAt).toISOString(),
    updatedAt: new Date(record.updatedAt).toISOString(),
    ...(record.finishedAt === undefined ? {} : { finishedAt: new Date(record.finishedAt).toISOString() }),
    ...(record.reason === undefined ? {} : { reason: record.reason }),
  };
}

export function replayLocation(subscriptionId: string, replayId: string): string {
  return `${API_BASE_PATH}/subscriptions/${subscriptionId}/replays/${replayId}`;
}

function invalid(errors: readonly ValidationIssue[]): KoerierError {
  return bodyRefusal(REPLAY_BODY, errors);
}

export function subscriptionNotFound(id: string): KoerierError {
  return new KoerierError(problems.notFound(`No subscription ${id} of yours.`));
}

export function replayNotFound(id: string, replayId: string): KoerierError {
  return new KoerierError(problems.notFound(`No replay ${replayId} of subscription ${id}.`));
}

/** Throws the 409 for a subscription that cannot receive: nothing would be delivered. */
export function notActive(id: string, status: string): KoerierError {
  return new KoerierError(
    problem(
      409,
      'subscription-not-active',
      `The subscription ${id} is ${status}; a replay needs an active subscription.`,
    ),
  );
}

/** A second replay while one runs (at most one per subscription). */
export function replayRunning(id: string, runningReplayId: string | undefined): KoerierError {
  return new KoerierError(
    problem(409, 'replay-running', `Subscription ${id} has a running replay; cancel it or wait until it finishes.`),
    runningReplayId === undefined ? {} : { headers: { location: replayLocation(id, runningReplayId) } },
  );
}

/** A narrowing that reaches past what the owner may receive (EDU-7) or what the subscription takes. */
export function beyondEntitlement(type: string, why: 'not-entitled' | 'not-subscribed'): KoerierError {
  const detail =
    why === 'not-entitled'
      ? `The subscription's owner is not entitled to events of type "${type}" (EDU-7); a replay delivers nothing the subscription could not have received.`
      : `The subscription does not take events of type "${type}"; a replay only narrows the subscription's own conditions.`;
  return new KoerierError(
    problem(403, why === 'not-entitled' ? 'replay-not-entitled' : 'replay-beyond-subscription', detail),
  );
}

/** A cancel of a replay that is over. */
export function notRunning(replayId: string, state: string): KoerierError {
  return new KoerierError(
    problem(409, 'replay-not-running', `Replay ${replayId} is ${state}; only a running replay can be cancelled.`),
  );
}
