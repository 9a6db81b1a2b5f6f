/**
 * OpenAPI path of the event trace (issue 30 item 1): GET /events/{source}/{id}, what became of one
 * event. The use case and who sees what: core/trace/event-trace.ts.
 */
import { authProblems, commonProblems, problemResponse } from './components.js';
import { MAX_TRACED_ATTEMPTS } from '../trace/event-deliveries.js';

const acceptanceSchema = {
  type: 'object',
  required: ['at'],
  properties: {
    at: { type: 'string', format: 'date-time', description: 'When the ingest accepted it (its 202).' },
    publisher: { type: 'string', description: 'The client that published it. To the publisher and `admin` only.' },
    idempotencyKey: {
      type: 'string',
      format: 'uuid',
      description: 'The Idempotency-Key of the publish request. To the publisher and `admin` only.',
    },
    correlationId: { type: 'string', description: 'The publish request’s `Koerier-Correlation-Id`.' },
  },
} as const;

const tracedSubscriptionSchema = {
  type: 'object',
  required: ['id', 'delivery', 'state', 'attemptCount', 'attempts'],
  properties: {
    id: { type: 'string' },
    delivery: { type: 'string', enum: ['push', 'pull'] },
    state: {
      type: 'string',
      enum: ['pending', 'queued', 'retrying', 'delivered', 'dead-lettered', 'retired'],
      description:
        'From the newest attempt or dead letter. `pending`: push, queued and not attempted yet. `queued`: pull, in the ' +
        'subscription’s queue or already received and acknowledged — Koerier keeps no record of an acknowledgement.',
    },
    attemptCount: { type: 'integer', minimum: 0, description: 'Attempts found that carried the event.' },
    attempts: {
      type: 'array',
      description: `Oldest first, the newest ${MAX_TRACED_ATTEMPTS}; redrives and splits of the delivery included.`,
      items: { $ref: '#/components/schemas/DeliveryAttempt' },
    },
    deadLetters: {
      type: 'array',
      items: {
        type: 'object',
        required: ['deliveryId', 'deadLetteredAt', 'reason'],
        properties: {
          deliveryId: { type: 'string' },
          deadLetteredAt: { type: 'string', format: 'date-time' },
          reason: { type: 'string' },
          detail: { type: 'string' },
        },
      },
    },
    historyTruncated: {
      type: 'boolean',
      enum: [true],
      description: 'The subscription’s attempt history since the routing was longer than a trace reads.',
    },
  },
} as const;

const eventTraceSchema = {
  type: 'object',
  required: ['source', 'id', 'state', 'subscriptions'],
  properties: {
    source: { type: 'string' },
    id: { type: 'string' },
    state: {
      type: 'string',
      enum: ['routing', 'routed'],
      description:
        '`routing`: accepted and not routed yet (or routed again after a failure); `routed`: its deliveries are queued.',
    },
    accepted: {
      ...acceptanceSchema,
      description: 'The acceptance that was routed: the first within the idempotency window.',
    },
    duplicates: {
      type: 'object',
      required: ['count'],
      description:
        'Later publications of the same `source` + `id` within the window, dropped as duplicates of `accepted` and never delivered ' +
        '(EDU-IDEM-15, CE-17). To the publisher and `admin` only.',
      properties: { count: { type: 'integer', minimum: 1 }, latest: acceptanceSchema },
    },
    routed: {
      type: 'object',
      required: ['at'],
      properties: {
        at: { type: 'string', format: 'date-time' },
        subscriptionCount: {
          type: 'integer',
          minimum: 0,
          description: 'How many subscriptions it was routed to. To the publisher and `admin` only.',
        },
      },
    },
    subscriptions: {
      type: 'array',
      description:
        'The routed subscriptions the caller owns (`admin`: all), each with its delivery state and attempts. Which subscriptions ' +
        'an event went to is kept for up to about 50; an event routed wider keeps only its count.',
      items: tracedSubscriptionSchema,
    },
  },
} as const;

const pathParameter = (name: 'source' | 'id', description: string) =>
  ({ name, in: 'path', required: true, description, schema: { type: 'string', minLength: 1 } }) as const;

/** Who may read events: their publishers, the owners of subscriptions they reached, and operators (the trace and the search). */
export const EVENT_READERS = [
  { oauth2: ['events:publish'] },
  { oauth2: ['subscriptions:read'] },
  { oauth2: ['subscriptions:manage'] },
  { oauth2: ['admin'] },
];

export const eventTracePaths = {
  '/events/{source}/{id}': {
    parameters: [
      pathParameter('source', 'The event’s `source`, percent-encoded (a `/` as `%2F`).'),
      pathParameter('id', 'The event’s `id`, percent-encoded.'),
    ],
    get: {
      operationId: 'traceEvent',
      summary: 'What became of one event',
      description:
        'When the event was accepted and under which Idempotency-Key, later publications dropped as its duplicates, how many ' +
        'subscriptions it was routed to, and per subscription the delivery state and attempts; within the idempotency window. ' +
        'The event’s publisher (`events:publish`) sees the whole acceptance and the routed count but only subscriptions it owns; ' +
        'the owner of a subscription it reached (`subscriptions:read`) sees its own; `admin` sees everything. For anyone else the ' +
        'answer is the 404 of an unknown event.',
      tags: ['Events'],
      security: EVENT_READERS,
      responses: {
        '200': {
          description: 'The trace.',
          content: { 'application/json': { schema: eventTraceSchema } },
        },
        ...authProblems,
        '404': problemResponse(
          'No such event within the idempotency window, or none this client published or receives (the two are not told apart).',
        ),
        ...commonProblems,
      },
    },
  },
} as const;
