/**
 * OpenAPI paths of pull delivery (docs/PULL.md, CARD-7, EDU-17): receive events with a lock, and
 * settle them by lock token. Each takes an optional Idempotency-Key (EDU-IDEM-3; docs/PULL.md says
 * why none is required).
 */
import { describedSchema } from '../http/json-body.js';
import { RECEIVE_BODY, SETTLE_BODIES, type SettleAction } from '../pull/pull-requests.js';
import { authProblems, idempotencyKeyParameter, problemResponse, versionHeader } from './components.js';

const security = [{ oauth2: ['events:consume'] }];
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } } as const;
const owner =
  'Scope `events:consume`, on the client’s own pull subscription only (another client’s, and an unknown one, answer 404).';
const problems = {
  '400': problemResponse(
    'The body breaks a rule (`errors` names each member), or the Idempotency-Key is not a UUIDv4.',
  ),
  ...authProblems,
  '404': problemResponse('No such subscription for this client.'),
  '409': problemResponse(
    'The subscription delivers by push (`not-a-pull-subscription`), or a request with this Idempotency-Key is still in progress (retry after Retry-After).',
    { 'Retry-After': { schema: { type: 'integer' } } },
  ),
  '422': problemResponse(
    'This Idempotency-Key was used before with another request (`idempotency-key-reused`); or, on a receive with a key, the next event alone is larger than the answer a key can store (`receive-too-large-to-replay`).',
  ),
  '500': problemResponse('Unexpected failure; the request may be retried.'),
  '503': problemResponse('A dependency is unavailable; retry later.', {
    'Retry-After': { schema: { type: 'integer' } },
  }),
} as const;

/** Optional here (docs/PULL.md): without it a call is answered as it comes; with it a repeat gets the first answer again. */
const optionalIdempotencyKey = {
  ...idempotencyKeyParameter,
  required: false,
  description:
    'Optional (EDU-IDEM-3). With it, a repeat with the same key and the same body gets the first answer again (`Idempotent-Replayed: true`) and changes nothing ' +
    'a second time; a receive then answers the same events and locks, and holds at most 320 KiB so that its answer can be stored. The same key with another ' +
    'body gets 422. Keys are kept per client for 7 days.',
} as const;

const lockSchema = {
  type: 'object',
  required: ['locktoken', 'lockeduntil', 'deliverycount', 'deliverykey'],
  properties: {
    locktoken: {
      type: 'string',
      description: 'Opaque; settles this event. Sealed and bound to the subscription and this client.',
    },
    lockeduntil: {
      type: 'string',
      format: 'date-time',
      description: 'Koerier accepts the token until then (a margin before the queue’s own deadline).',
    },
    deliverycount: {
      type: 'integer',
      minimum: 1,
      description: 'How many times this event was handed out, this time included.',
    },
    deliverykey: {
      type: 'string',
      format: 'uuid',
      description:
        'The same on every redelivery of the event (EDU-IDEM-2); a redrive from the dead letters gets a new one.',
    },
    replay: {
      type: 'object',
      required: ['id', 'sequence'],
      description:
        'Only on a replayed event (POST /subscriptions/{id}/replays): which replay, and the event’s place in it in acceptance order from 1. The event itself is unchanged.',
      properties: { id: { type: 'string', format: 'uuid' }, sequence: { type: 'integer', minimum: 1 } },
    },
  },
} as const;

const settleAnswer = {
  type: 'object',
  required: ['succeeded', 'failed'],
  properties: {
    succeeded: {
      type: 'array',
      items: {
        type: 'object',
        required: ['locktoken'],
        properties: {
          locktoken: { type: 'string' },
          newlocktoken: { type: 'string', description: 'renew-lock only: use this token from now on.' },
          lockeduntil: { type: 'string', format: 'date-time', description: 'renew-lock only.' },
        },
      },
    },
    failed: {
      type: 'array',
      items: {
        type: 'object',
        required: ['locktoken', 'error'],
        properties: {
          locktoken: { type: 'string' },
          error: {
            type: 'object',
            required: ['code', 'message'],
            properties: {
              code: { type: 'string', enum: ['LockLost', 'InvalidToken', 'NotOwner', 'DuplicateToken', 'Unavailable'] },
              message: { type: 'string' },
            },
          },
        },
      },
    },
  },
} as const;

export const pullSchemas = { PullLock: lockSchema, SettleAnswer: settleAnswer } as const;

function settle(operationId: string, summary: string, description: string, action: SettleAction) {
  return {
    parameters: [idParameter, optionalIdempotencyKey],
    post: {
      operationId,
      summary,
      description: `${description} Each token is answered on its own. ${owner}`,
      tags: ['Pull'],
      security,
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: describedSchema(SETTLE_BODIES[action]) },
        },
      },
      responses: {
        '200': {
          description: 'Per token: succeeded or failed with a code.',
          headers: versionHeader,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/SettleAnswer' } } },
        },
        ...problems,
      },
    },
  };
}

export const pullPaths = {
  '/subscriptions/{id}/events/receive': {
    parameters: [idParameter, optionalIdempotencyKey],
    post: {
      operationId: 'receiveEvents',
      summary: 'Receive events, each locked to this call',
      description:
        'Waits up to `waitseconds` for events and returns as soon as any is there, up to `maxevents`. `events` is a CloudEvents JSON batch ' +
        '(application/cloudevents-batch+json) of the events exactly as accepted (CE-13); `locks[i]` belongs to `events[i]`. An event ' +
        `received more than the subscription’s maxdeliverycount times goes to its dead letters instead. An event whose data is in the claim check ` +
        'comes with `dataref`, `koerierdatadigest` and `koerierdatasize` (the owner may then GET the data URL), or with its data inline again as ' +
        `published when it fits the subscription’s maxinlinebytes and one answer (EDU-1). ${owner}`,
      tags: ['Pull'],
      security,
      requestBody: {
        required: false,
        content: {
          'application/json': { schema: describedSchema(RECEIVE_BODY) },
        },
      },
      responses: {
        '200': {
          description: 'The events (possibly none) and their locks.',
          headers: versionHeader,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['events', 'locks'],
                properties: {
                  events: { type: 'array', items: { type: 'object' }, description: 'A CloudEvents JSON batch.' },
                  locks: { type: 'array', items: { $ref: '#/components/schemas/PullLock' } },
                },
              },
            },
          },
        },
        '429': problemResponse(
          'Too many long polls at once for this subscription or client; retry after Retry-After.',
          {
            'Retry-After': { schema: { type: 'integer' } },
          },
        ),
        ...problems,
      },
    },
  },
  '/subscriptions/{id}/events/acknowledge': settle(
    'acknowledgeEvents',
    'Acknowledge: done, delete',
    'The events are done and deleted.',
    'acknowledge',
  ),
  '/subscriptions/{id}/events/release': settle(
    'releaseEvents',
    'Release: hand back, optionally after a delay',
    'The events become visible again after `delayseconds`.',
    'release',
  ),
  '/subscriptions/{id}/events/renew-lock': settle(
    'renewEventLocks',
    'Renew the locks',
    'The locks last `lockseconds` from now; each answer carries a new token.',
    'renew-lock',
  ),
  '/subscriptions/{id}/events/reject': settle(
    'rejectEvents',
    'Reject: to the dead letters',
    'The events are never handed out again: the next receive moves them to the subscription’s dead letters with the reason (EDU-18), where they can be listed and redriven.',
    'reject',
  ),
} as const;
