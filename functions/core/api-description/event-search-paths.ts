/**
 * OpenAPI operation of the archive search (issue 30 item 4): GET /events, the archived events of a
 * type, a source and a time window by their identity. The use case and who sees what:
 * core/trace/event-search.ts. It sits on the path of the ingest (events-paths.ts) as its `get`.
 */
import { authProblems, commonProblems, problemResponse } from './components.js';
import { EVENT_SEARCH_LIMITS } from '../trace/event-search.js';
import { EVENT_READERS } from './event-trace-paths.js';

const foundEventSchema = {
  type: 'object',
  required: ['source', 'id', 'type', 'acceptedAt'],
  properties: {
    source: { type: 'string' },
    id: { type: 'string' },
    type: { type: 'string' },
    acceptedAt: { type: 'string', format: 'date-time', description: 'When the ingest accepted it.' },
  },
} as const;

const time = (name: 'since' | 'until', description: string) =>
  ({ name, in: 'query', required: false, description, schema: { type: 'string', format: 'date-time' } }) as const;

export const searchEventsOperation = {
  operationId: 'searchEvents',
  summary: 'Find archived events by type, source and time',
  description:
    'The newest archived events of a `type`, a `source` and a window, by their identity and acceptance time (never their ' +
    'data), newest first, within the archive’s retention; open one with GET /events/{source}/{id} while it is within the ' +
    'idempotency window. `admin` sees every event; any other client (`events:publish` or `subscriptions:read`, as for the ' +
    'trace) the events whose `source` its publish grants cover now: those it published. The archive is read newest first within a bound of requests: `complete: false` says the reader ' +
    'stopped before `limit` events or the window’s start; narrow the window to read further.',
  tags: ['Events'],
  security: EVENT_READERS,
  parameters: [
    { name: 'type', in: 'query', required: false, description: 'Only this type, exactly.', schema: { type: 'string' } },
    {
      name: 'source',
      in: 'query',
      required: false,
      description: 'Only this source, exactly.',
      schema: { type: 'string' },
    },
    time('since', 'Accepted at or after this time.'),
    time('until', 'Accepted before this time.'),
    {
      name: 'limit',
      in: 'query',
      required: false,
      schema: {
        type: 'integer',
        minimum: 1,
        maximum: EVENT_SEARCH_LIMITS.maxLimit,
        default: EVENT_SEARCH_LIMITS.defaultLimit,
      },
    },
  ],
  responses: {
    '200': {
      description: 'The events found, newest first.',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['events', 'scanned', 'complete'],
            properties: {
              events: { type: 'array', items: foundEventSchema },
              scanned: { type: 'integer', minimum: 0, description: 'Archived events looked at, the caller’s or not.' },
              complete: {
                type: 'boolean',
                description: 'False when the bound on archive requests stopped the reader first.',
              },
            },
          },
        },
      },
    },
    '400': problemResponse(
      'Invalid time or limit, `since` not before `until`, or a query parameter this route does not take.',
    ),
    ...authProblems,
    ...commonProblems,
  },
} as const;
