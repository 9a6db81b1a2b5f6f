/**
 * OpenAPI paths of push delivery administration (EDU-18): attempt history, dead letters,
 * redrive, resuming a suspended subscription, and (admin) the dead-letter queue's redrive.
 */
import { MAX_REDRIVE, REDRIVE_BODY } from '../delivery/redrive.js';
import { describedSchema } from '../http/json-body.js';
import {
  authProblems,
  commonProblems,
  idempotencyKeyParameter,
  idempotencyProblems,
  problemResponse,
  readSubscriptionsSecurity,
  versionHeader,
} from './components.js';

import {
  security,
  idParameter,
  pageParameters,
  notFound,
  ownership,
  withheldSchema,
  attemptFilters,
  page,
  pausedProperties,
  postProblems,
} from './delivery-path-parts.js';

export const deliveryPaths = {
  '/subscriptions/{id}/deliveries': {
    parameters: [idParameter],
    get: {
      operationId: 'listDeliveryAttempts',
      summary: 'Recent delivery attempts, newest first',
      description:
        'Every attempt to deliver to the subscription’s webhook: when, the events, the answer, how long it took, what failed. Kept 7 days by ' +
        'default. The filters apply to each page as it is read: a page may hold fewer attempts than `limit`, even none, and still link to ' +
        `the next; follow \`next\` to the end to search the whole history. ${ownership}`,
      tags: ['Subscriptions'],
      security: readSubscriptionsSecurity,
      parameters: [...pageParameters, ...attemptFilters],
      responses: {
        ...page('attempts', 'DeliveryAttempt', 'A page of attempts.'),
        '400': problemResponse(
          'Invalid limit, cursor, outcome or time, or a query parameter this route does not take.',
        ),
        ...authProblems,
        ...notFound,
        ...commonProblems,
      },
    },
  },
  '/subscriptions/{id}/dead-letters': {
    parameters: [idParameter],
    get: {
      operationId: 'listDeadLetters',
      summary: 'Deliveries Koerier stopped trying, oldest first',
      description: `Dead letters keep the events, the reason and the last attempts (kept 30 days by default), until they are redriven (EDU-18). ${ownership}`,
      tags: ['Subscriptions'],
      security: readSubscriptionsSecurity,
      parameters: pageParameters,
      responses: {
        ...page('deadLetters', 'DeadLetter', 'A page of dead letters.'),
        '400': problemResponse('Invalid limit or cursor, or a query parameter this route does not take.'),
        ...authProblems,
        ...notFound,
        ...commonProblems,
      },
    },
  },
  '/subscriptions/{id}/dead-letters/redrive': {
    parameters: [idParameter],
    post: {
      operationId: 'redriveDeadLetters',
      summary: 'Send dead letters again',
      description:
        `All of them (\`{"all": true}\`) or the ones named (\`{"deliveryIds": [...]}\`), at most ${MAX_REDRIVE} per call (\`more: true\` says to call again). ` +
        'Each becomes a new delivery with a new Idempotency-Key (EDU-IDEM-13): the receiver stored its answer to the old key, and would ' +
        'replay it. The subscription must be active. Each event is checked again against the owner’s current entitlement and the ' +
        'subscription’s current filters: a dead letter that fails either stays, listed under `withheld` with the reason. ' +
        ownership,
      tags: ['Subscriptions'],
      security,
      parameters: [idempotencyKeyParameter],
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: describedSchema(REDRIVE_BODY) },
        },
      },
      responses: {
        '202': {
          description: 'The deliveries are queued again.',
          headers: versionHeader,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['redriven', 'more'],
                properties: {
                  redriven: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['deliveryId', 'newDeliveryId'],
                      properties: { deliveryId: { type: 'string' }, newDeliveryId: { type: 'string', format: 'uuid' } },
                    },
                  },
                  withheld: withheldSchema,
                  notFound: {
                    type: 'array',
                    items: { type: 'string' },
                    description: 'Named delivery ids that are not (or no longer) dead letters.',
                  },
                  more: { type: 'boolean' },
                },
              },
            },
          },
        },
        ...postProblems,
        '409': problemResponse(
          'The subscription is not active (resume a suspended one first), or the Idempotency-Key is in use.',
        ),
      },
    },
  },
  '/subscriptions/{id}/pause': {
    parameters: [idParameter],
    post: {
      operationId: 'pauseSubscription',
      summary: 'Pause a push subscription',
      description: `An active push subscription is suspended (\`paused\`) until \`POST …/resume\`; deliveries meanwhile wait as dead letters. ${ownership}`,
      tags: ['Subscriptions'],
      security,
      parameters: [idempotencyKeyParameter],
      responses: {
        '200': {
          description: 'Paused.',
          headers: versionHeader,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['id', 'status', 'suspendedfor'], properties: pausedProperties },
            },
          },
        },
        ...postProblems,
        '409': problemResponse(
          'The subscription is not active, is a pull subscription (which pauses by not receiving), or the Idempotency-Key is in use.',
        ),
      },
    },
  },
  '/subscriptions/{id}/resume': {
    parameters: [idParameter],
    post: {
      operationId: 'resumeSubscription',
      summary: 'Resume a suspended subscription',
      description:
        'A subscription whose target failed without a single success for the suspension period (5 days by default) is suspended; its ' +
        '`statusreason` says why. Resuming makes it active again with a clean failure record, and sends the deliveries parked meanwhile ' +
        '(re-checked against entitlement and filters as a redrive is). A subscription suspended for want of a credential ' +
        '(`suspendedfor: credential-required`) is not resumed: a PATCH with a sinkcredential reactivates it. A paused one (`POST …/pause`) is. ' +
        ownership,
      tags: ['Subscriptions'],
      security,
      parameters: [idempotencyKeyParameter],
      responses: {
        '200': {
          description: 'Active again.',
          headers: versionHeader,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['id', 'status', 'redriven'],
                properties: {
                  id: { type: 'string' },
                  status: { const: 'active' },
                  redriven: { type: 'integer' },
                  withheld: withheldSchema,
                },
              },
            },
          },
        },
        ...postProblems,
        '409': problemResponse(
          'The subscription is not suspended, it needs a credential first (`credential-required`), or the Idempotency-Key is in use.',
        ),
      },
    },
  },
  '/deliveries/dead-letter-queue/redrive': {
    post: {
      operationId: 'redriveDeliveryQueue',
      summary: 'Move the deliveries dead-letter queue back (operators)',
      description:
        'Messages the delivery function crashed on repeatedly land in the dead-letter queue of the deliveries queue. After a fix, this moves ' +
        'up to 1000 of them back, unchanged (same delivery, same Idempotency-Key). Scope `admin`.',
      tags: ['Subscriptions'],
      security: [{ oauth2: ['admin'] }],
      parameters: [idempotencyKeyParameter],
      responses: {
        '202': {
          description: 'Moved back.',
          headers: versionHeader,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['moved', 'more'],
                properties: { moved: { type: 'integer' }, more: { type: 'boolean' } },
              },
            },
          },
        },
        '400': problemResponse('Invalid Idempotency-Key.'),
        ...authProblems,
        '409': idempotencyProblems['409'],
        '422': idempotencyProblems['422'],
        ...commonProblems,
      },
    },
  },
} as const;
