/**
 * OpenAPI paths of replays (issue 13, item 2; EDU-18; docs/REPLAY.md): start a replay of a time
 * window of the archive to a subscription, read its progress, cancel it.
 */
import {
  authProblems,
  commonProblems,
  idempotencyKeyParameter,
  idempotencyProblems,
  problemResponse,
  readSubscriptionsSecurity,
  versionHeader,
} from './components.js';
import { describedSchema } from '../http/json-body.js';
import { REPLAY_BODY } from '../replay/replay-requests.js';
import { quotaDefaultText } from '../quotas/client-quotas.js';

const security = [{ oauth2: ['subscriptions:manage'] }];
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } } as const;
const replayIdParameter = {
  name: 'replayId',
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
} as const;
const notFound = {
  '404': problemResponse(
    'No such subscription (or replay) for this client (an `admin` client sees every subscription).',
  ),
} as const;
const ownership =
  'Scope `subscriptions:manage`, on the client’s own subscriptions; a client that also holds `admin` may act on any subscription.';

const replaySchema = {
  type: 'object',
  required: [
    'id',
    'subscriptionId',
    'state',
    'from',
    'to',
    'scanned',
    'matched',
    'sent',
    'failed',
    'createdAt',
    'updatedAt',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    subscriptionId: { type: 'string' },
    state: {
      type: 'string',
      enum: ['running', 'finished', 'cancelled', 'failed'],
      description: 'At most one replay per subscription is `running`.',
    },
    from: { type: 'string', format: 'date-time', description: 'Events accepted at or after this…' },
    to: {
      type: 'string',
      format: 'date-time',
      description: '…and before this (never later than the moment the replay was asked for).',
    },
    types: { type: 'array', items: { type: 'string' } },
    filters: { type: 'array', items: { $ref: '#/components/schemas/Filter' } },
    scanned: {
      type: 'integer',
      minimum: 0,
      description: 'Archived events of the window read so far (each event once).',
    },
    matched: {
      type: 'integer',
      minimum: 0,
      description:
        'Of those, the events this subscription receives (its conditions, the owner’s entitlement, the narrowing).',
    },
    sent: {
      type: 'integer',
      minimum: 0,
      description:
        'Matched events queued on the subscription’s delivery path (what became of each delivery: GET …/deliveries).',
    },
    failed: { type: 'integer', minimum: 0, description: 'Matched events the replay could not queue and gave up on.' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: 'string', format: 'date-time' },
    reason: { type: 'string', description: 'Why a replay `failed`.' },
  },
} as const;

export const replaySchemas = { Replay: replaySchema } as const;

const replayAnswer = (status: string, description: string, headers: Record<string, unknown> = {}) => ({
  [status]: {
    description,
    headers: { ...versionHeader, ...headers },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Replay' } } },
  },
});

export const replayPaths = {
  '/subscriptions/{id}/replays': {
    parameters: [idParameter],
    post: {
      operationId: 'startReplay',
      summary: 'Replay a time window of the archive to the subscription',
      description:
        'Every event Koerier accepted and routed is archived (kept `koerier:archiveRetentionDays`, 30 days by default). A replay sends ' +
        'the archived events accepted in [`from`, `to`) that the subscription receives now — its own conditions and its owner’s ' +
        'entitlement, checked per event as routing does (EDU-7) — narrowed further by `types` and `filters` if given, through the ' +
        'subscription’s normal delivery path (push: retries, breaker, dead letters, the allowed rate; pull: its queue), each as a new ' +
        'delivery with a new Idempotency-Key. The event is unchanged; a push delivery carries `Koerier-Replay-Id` and ' +
        '`Koerier-Replay-Sequence` headers, a pull receive the `replay` member of the event’s lock. Sequence numbers follow Koerier’s ' +
        'acceptance order (acceptance time, then source, then id); deliveries may arrive in another order. At most one running replay ' +
        `per subscription. ${ownership}`,
      tags: ['Subscriptions'],
      security,
      parameters: [idempotencyKeyParameter],
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: describedSchema(REPLAY_BODY) },
        },
      },
      responses: {
        ...replayAnswer('202', 'The replay runs in the background; follow Location for its progress.', {
          Location: { description: 'The replay: /subscriptions/{id}/replays/{replayId}.', schema: { type: 'string' } },
        }),
        '400': problemResponse('Invalid body (`invalid-replay-request`) or Idempotency-Key.'),
        ...authProblems,
        '403': problemResponse(
          'The narrowing reaches past the owner’s entitlement (`replay-not-entitled`) or the subscription’s types (`replay-beyond-subscription`).',
        ),
        ...notFound,
        '409': problemResponse(
          'The subscription is not active (`subscription-not-active`), a replay of it is running (`replay-running`, Location names it), or the owner has ' +
            'as many replays running as its quota `maxConcurrentReplays` allows (`quota-exceeded`: `quota`, `limit`, `used`; default ' +
            quotaDefaultText('maxConcurrentReplays') +
            ', an operator sets a ' +
            'partner’s own in PUT /clients/{clientId}).',
        ),
        '422': idempotencyProblems['422'],
        ...commonProblems,
      },
    },
    get: {
      operationId: 'listReplays',
      summary: 'The subscription’s replays, newest first',
      description: `The replays kept (30 days after their last change), at most 100. ${ownership}`,
      tags: ['Subscriptions'],
      security: readSubscriptionsSecurity,
      responses: {
        '200': {
          description: 'The replays.',
          headers: versionHeader,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['replays'],
                properties: { replays: { type: 'array', items: { $ref: '#/components/schemas/Replay' } } },
              },
            },
          },
        },
        ...authProblems,
        ...notFound,
        ...commonProblems,
      },
    },
  },
  '/subscriptions/{id}/replays/{replayId}': {
    parameters: [idParameter, replayIdParameter],
    get: {
      operationId: 'getReplay',
      summary: 'A replay’s progress',
      description: `Kept 30 days after its last change. ${ownership}`,
      tags: ['Subscriptions'],
      security: readSubscriptionsSecurity,
      responses: { ...replayAnswer('200', 'The replay.'), ...authProblems, ...notFound, ...commonProblems },
    },
  },
  '/subscriptions/{id}/replays/{replayId}/cancel': {
    parameters: [idParameter, replayIdParameter],
    post: {
      operationId: 'cancelReplay',
      summary: 'Stop a running replay',
      description:
        'The replay stops before its next chunk; what it already queued is delivered. A POST action rather than DELETE, because the replay ' +
        `and its progress stay readable. ${ownership}`,
      tags: ['Subscriptions'],
      security,
      parameters: [idempotencyKeyParameter],
      responses: {
        ...replayAnswer('200', 'The replay, cancelled.'),
        '400': problemResponse('Invalid Idempotency-Key.'),
        ...authProblems,
        ...notFound,
        '409': problemResponse('The replay is over (`replay-not-running`).'),
        '422': idempotencyProblems['422'],
        ...commonProblems,
      },
    },
  },
} as const;
