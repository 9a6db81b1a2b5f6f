/**
 * The OpenAPI schemas of push delivery administration (delivery-paths.ts): a delivery attempt and
 * a dead letter, as `GET /subscriptions/{id}/deliveries` and `…/dead-letters` show them.
 */
import { DEAD_LETTER_REASONS } from '../delivery/delivery-records.js';
import { ANSWER_EXCERPT_BYTES, ANSWER_HEADER_CHARACTERS } from '../delivery/receiver-answer.js';

const failureCodeSchema = {
  type: 'string',
  description:
    'server-error, request-timeout, key-in-progress (409: the target is still handling an earlier attempt with this Idempotency-Key, EDU-IDEM-18; retried), throttled, gone, unsupported-media-type, rejected (other 4xx), redirect (never followed), credential ' +
    '(the sink credential or its token endpoint failed), target-unreachable (no answer: refused, DNS, TLS, timeout, reset or a refused ' +
    'address all read the same, so nothing about the network is revealed), response-too-large, invalid-url, or not-sendable (Koerier could ' +
    'not build the request, e.g. a datacontenttype that cannot be a header; not the target’s fault).',
} as const;

const attemptSchema = {
  type: 'object',
  required: ['deliveryId', 'attempt', 'at', 'outcome'],
  properties: {
    deliveryId: {
      type: 'string',
      format: 'uuid',
      description: 'The Idempotency-Key the attempt was sent with (the same on every attempt of a delivery).',
    },
    attempt: { type: 'integer', minimum: 1 },
    at: { type: 'string', format: 'date-time' },
    outcome: { type: 'string', enum: ['delivered', 'retrying', 'dead-lettered', 'retired'] },
    status: { type: 'integer', description: 'The target’s status code, when it answered.' },
    latencyMs: {
      type: 'integer',
      description: 'Only when the target answered: how long a failure took would tell closed ports from filtered ones.',
    },
    answer: {
      type: 'object',
      description:
        'What the target answered, when it answered: the first ' +
        `${ANSWER_EXCERPT_BYTES} bytes of its body and the headers that explain an outcome. Kept as long as the attempt ` +
        'record; in a dead letter’s `lastAttempts` only on the newest attempt.',
      required: ['body'],
      properties: {
        body: { type: 'string', description: 'The body’s first bytes as UTF-8 text; empty when it sent none.' },
        truncated: { type: 'boolean', enum: [true], description: 'The body was longer, or too large to read.' },
        contentType: { type: 'string', maxLength: ANSWER_HEADER_CHARACTERS },
        headers: {
          type: 'object',
          description: '`retry-after` and `webhook-*` only (lower-case names); no other header is kept.',
          additionalProperties: { type: 'string', maxLength: ANSWER_HEADER_CHARACTERS },
        },
      },
    },
    error: {
      type: 'object',
      required: ['code', 'detail'],
      properties: { code: failureCodeSchema, detail: { type: 'string' } },
    },
    nextAttemptAt: {
      type: 'string',
      format: 'date-time',
      description: 'When the next attempt is due (outcome `retrying`).',
    },
    events: {
      type: 'array',
      description: 'The events the delivery carried, by `source`, `id` and `type` (never their data).',
      items: {
        type: 'object',
        required: ['source', 'id', 'type'],
        properties: { source: { type: 'string' }, id: { type: 'string' }, type: { type: 'string' } },
      },
    },
    redriveOf: {
      type: 'string',
      format: 'uuid',
      description: 'The dead letter (its delivery id) this delivery sent again.',
    },
  },
} as const;

const deadLetterSchema = {
  type: 'object',
  required: ['deliveryId', 'createdAt', 'deadLetteredAt', 'reason', 'detail', 'attempts', 'lastAttempts', 'events'],
  properties: {
    deliveryId: { type: 'string', format: 'uuid' },
    createdAt: {
      type: 'string',
      format: 'date-time',
      description: 'When the delivery was created (the event was routed).',
    },
    deadLetteredAt: { type: 'string', format: 'date-time' },
    reason: {
      type: 'string',
      enum: DEAD_LETTER_REASONS,
      description:
        'exhausted: the retry window (or the Idempotency-Key’s lifetime) passed; subscription-suspended: parked while the subscription was ' +
        'suspended, sent again on resume; otherwise the failure code of the last attempt, or why the subscription could not receive.',
    },
    correlationId: {
      type: 'string',
      description:
        'The X-Correlation-ID of the publish request its events came in with (a replay: the replay id); a redrive sends it again.',
    },
    detail: { type: 'string' },
    attempts: { type: 'integer', minimum: 0 },
    lastAttempts: {
      type: 'array',
      items: { $ref: '#/components/schemas/DeliveryAttempt' },
      description: 'Oldest first, at most 10.',
    },
    events: {
      type: 'array',
      description: 'The events of the delivery by their context attributes (never their data).',
      items: {
        type: 'object',
        required: ['id', 'source', 'type'],
        properties: {
          id: { type: 'string' },
          source: { type: 'string' },
          type: { type: 'string' },
          subject: { type: 'string' },
        },
      },
    },
    redriveOf: { type: 'string', format: 'uuid', description: 'The delivery this one sent again.' },
  },
} as const;

export const deliverySchemas = { DeliveryAttempt: attemptSchema, DeadLetter: deadLetterSchema } as const;
