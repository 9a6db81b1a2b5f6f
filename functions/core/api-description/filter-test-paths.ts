/**
 * OpenAPI path of the filter trial (issue 32): `POST /subscriptions/filters/test` says which events
 * a list of filters matches, given events or the newest archived events the caller may receive.
 */
import { authProblems, commonProblems, problemResponse, versionHeader } from './components.js';
import { describedSchema } from '../http/json-body.js';
import { FILTER_TEST_BODY, FILTER_TEST_LIMITS } from '../filter-test/filter-test-request.js';

const testedEventSchema = {
  type: 'object',
  required: ['id', 'source', 'type', 'attributes', 'matches', 'filters'],
  properties: {
    id: { type: 'string' },
    source: { type: 'string' },
    type: { type: 'string' },
    acceptedAt: {
      type: 'string',
      format: 'date-time',
      description: 'When Koerier accepted the archived event; absent for a given event.',
    },
    attributes: {
      type: 'object',
      additionalProperties: { type: ['string', 'integer', 'boolean'] },
      description: 'The event’s context attributes, as the filters read them (never `data`).',
    },
    matches: {
      type: 'boolean',
      description: 'Every filter matches: a subscription with these filters receives the event.',
    },
    filters: {
      type: 'array',
      items: { type: 'boolean' },
      description: 'Each filter’s own answer, in the order given.',
    },
    sqlErrors: {
      type: 'array',
      description:
        'The `sql` expressions whose evaluation raised an error (CESQL’s fail-fast rule): such an expression does not match.',
      items: {
        type: 'object',
        required: ['filter', 'error'],
        properties: {
          filter: { type: 'string', description: 'Where it sits, as a 400 names it: `filters[1].any[0].sql`.' },
          error: {
            type: 'string',
            enum: ['parse', 'math', 'cast', 'missingAttribute', 'missingFunction', 'functionEvaluation', 'generic'],
            description: 'The CESQL error kind.',
          },
        },
      },
    },
  },
} as const;

const filterTestResultSchema = {
  type: 'object',
  required: ['tested', 'matched', 'events'],
  properties: {
    tested: { type: 'integer', minimum: 0, description: 'Events tried.' },
    matched: { type: 'integer', minimum: 0, description: 'Of those, the events every filter matches.' },
    events: {
      type: 'array',
      items: { $ref: '#/components/schemas/TestedEvent' },
      description: 'Given events in the order given; archived events newest first.',
    },
    archive: {
      type: 'object',
      required: ['last', 'scanned', 'complete'],
      description: 'For `archived`: how far back the archive was read.',
      properties: {
        last: { type: 'integer', description: 'The `last` asked for.' },
        scanned: {
          type: 'integer',
          minimum: 0,
          description: 'Archived events looked at, including those the caller may not receive (not shown).',
        },
        complete: {
          type: 'boolean',
          description:
            '`false` when the trial stopped at its bound on archive reads before it found `last` events or reached the retention: older events were not looked at.',
        },
      },
    },
  },
} as const;

export const filterTestSchemas = { TestedEvent: testedEventSchema, FilterTestResult: filterTestResultSchema } as const;

export const filterTestPaths = {
  '/subscriptions/filters/test': {
    post: {
      operationId: 'testFilters',
      summary: 'Try filters on events before a subscription uses them',
      description:
        'Says which events a list of filters matches, as a subscription with these `filters` would receive them: every filter must ' +
        'match, a `sql` expression that raises an evaluation error does not (reported in `sqlErrors`; inside a `not`, the `not` then does, as in ' +
        'delivery). The filters are checked as a ' +
        'subscription’s are: an invalid one is the same 400 (`invalid-subscription`, an issue naming the filter, and for `sql` the ' +
        'position and what was expected there). Either on given `events` (at most ' +
        `${FILTER_TEST_LIMITS.maxEvents}; any events, the caller’s entitlement plays no part) or on the newest \`archived.last\` ` +
        `archived events (at most ${FILTER_TEST_LIMITS.maxArchived}) that the caller may receive: its entitlement is applied to each ` +
        'archived event exactly as routing applies it, so no event is shown that the caller could not subscribe to. The archive read is ' +
        `bounded (${FILTER_TEST_LIMITS.maxArchiveRequests} archive requests, ${FILTER_TEST_LIMITS.maxArchiveScanned} events looked ` +
        'at); `archive.complete` says whether it stopped there. A body holds at most ' +
        `${FILTER_TEST_LIMITS.maxBodyBytes} bytes. Changes nothing, so it takes no Idempotency-Key. Scope \`subscriptions:manage\`, ` +
        'as for making a subscription.',
      tags: ['Subscriptions'],
      security: [{ oauth2: ['subscriptions:manage'] }],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: describedSchema(FILTER_TEST_BODY) } },
      },
      responses: {
        '200': {
          description: 'Which events match.',
          headers: versionHeader,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/FilterTestResult' } } },
        },
        '400': problemResponse(
          'An invalid filter, or a body not as described (`invalid-subscription`; `errors` name each problem).',
        ),
        ...authProblems,
        '413': problemResponse(`A body over ${FILTER_TEST_LIMITS.maxBodyBytes} bytes (\`payload-too-large\`).`),
        ...commonProblems,
      },
    },
  },
} as const;
