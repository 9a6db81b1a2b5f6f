/**
 * The body of `POST /subscriptions/filters/test` (issue 32): the filters to try, and either the
 * events to try them on or how many of the newest archived events. The filters are checked by the
 * subscriptions API's own rules (`parseFilters`: the dialects, CESQL compiled with the position of
 * a syntax error), so an invalid filter is refused with the same 400 (`invalid-subscription`, one
 * issue per wrong filter naming its place) a subscription with it gets.
 */
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { bodyRefusal, readJsonBody, requestBody } from '../http/json-body.js';
import { KoerierError, problems, type ValidationIssue } from '../http/problems.js';
import { parseFilters, type Filter } from '../subscriptions/filters.js';

/** Bounds of one trial: a person or a CLI asks, the answer is read whole. */
export const FILTER_TEST_LIMITS = {
  /** Bytes of the request body at most (413 beyond). */
  maxBodyBytes: 262_144,
  /** Given events at most. */
  maxEvents: 100,
  /** `archived.last` at most. */
  maxArchived: 1000,
  /**
   * Archive requests (lists and gets) one trial makes at most: enough for the newest 1,000 events
   * from router batches of one event each (light load), with a list per hour of today and per day.
   */
  maxArchiveRequests: 1_200,
  /** Archived events one trial looks at at most, whether the caller may see them or not. */
  maxArchiveScanned: 50_000,
} as const;

const ATTRIBUTE = Type.String({ minLength: 1 });

export const FILTER_TEST_BODY = requestBody({
  schema: Type.Object(
    {
      // Their own rules are the subscriptions API's (parseFilters), checked after the schema.
      filters: Type.Array(Type.Unknown({ $ref: '#/components/schemas/Filter' }), {
        description: 'The filters to try, as a subscription’s `filters`: an event matches when all of them match.',
      }),
      events: Type.Optional(
        Type.Array(
          Type.Object(
            { specversion: ATTRIBUTE, id: ATTRIBUTE, source: ATTRIBUTE, type: ATTRIBUTE },
            {
              additionalProperties: true,
              description: 'A CloudEvent in the JSON event format; the filters read its context attributes only.',
            },
          ),
          {
            minItems: 1,
            maxItems: FILTER_TEST_LIMITS.maxEvents,
            description: 'The events to try the filters on. Give either `events` or `archived`.',
          },
        ),
      ),
      archived: Type.Optional(
        Type.Object(
          {
            last: Type.Integer({
              minimum: 1,
              maximum: FILTER_TEST_LIMITS.maxArchived,
              description: 'How many of the newest archived events the caller may receive.',
            }),
          },
          { additionalProperties: false },
        ),
      ),
    },
    { additionalProperties: false },
  ),
  problemType: 'invalid-subscription',
  requirement: 'EDU-14',
});

export type FilterTestRequest =
  | { readonly filters: readonly Filter[]; readonly events: readonly Record<string, unknown>[] }
  | { readonly filters: readonly Filter[]; readonly archived: number };

/** The trial asked for; throws the 413 for a body over the bound and the 400 naming every problem. */
export function parseFilterTestRequest(body: Buffer): FilterTestRequest {
  if (body.length > FILTER_TEST_LIMITS.maxBodyBytes)
    throw new KoerierError(
      problems.payloadTooLarge(`A filter test body holds at most ${FILTER_TEST_LIMITS.maxBodyBytes} bytes.`),
    );
  const { filters, events, archived } = readJsonBody(body, FILTER_TEST_BODY);
  const parsed = parseFilters(filters);
  const issues: ValidationIssue[] = [...parsed.issues];
  if ((events === undefined) === (archived === undefined))
    issues.push({
      attribute: 'events',
      rule: 'one-of',
      requirement: 'EDU-14',
      message: 'give either "events" (the events to try) or "archived" ({"last": N}), not both',
    });
  if (issues.length > 0) throw bodyRefusal(FILTER_TEST_BODY, issues);
  return events !== undefined
    ? { filters: parsed.filters, events }
    : { filters: parsed.filters, archived: archived!.last };
}
