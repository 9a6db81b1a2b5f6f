/**
 * GET /subscriptions/{id}/health (issue 13, item 5), described beside the deliveries (delivery-paths.ts).
 */
import {
  authProblems,
  commonProblems,
  problemResponse,
  readSubscriptionsSecurity,
  versionHeader,
} from './components.js';

const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } } as const;
const instant = (description: string) => ({ type: 'string', format: 'date-time', description }) as const;

export const healthSchemas = {
  SubscriptionHealth: {
    type: 'object',
    required: ['id', 'state', 'breaker', 'failurestreak'],
    properties: {
      id: { type: 'string' },
      state: {
        type: 'string',
        enum: ['healthy', 'failing', 'breaker-open', 'probing', 'throttled'],
        description:
          'What delivery to the target looks like now. `failing`: failures below the breaker’s threshold; `breaker-open`: nothing is sent until ' +
          '`nextattemptat`; `probing`: the cool-down is over and one trial delivery may go; `throttled`: the target answered 429 and is sent to more slowly.',
      },
      breaker: { type: 'string', enum: ['closed', 'open', 'half-open'] },
      failurestreak: {
        type: 'integer',
        minimum: 0,
        description: 'Consecutive failed attempts since the last success.',
      },
      failingsince: instant('The first failure since the last success.'),
      lastfailure: instant('The latest failure.'),
      lastsuccess: instant(
        'The latest delivered attempt in the recent history (absent when none is in its newest page).',
      ),
      nextattemptat: instant('When the next attempt may go, when that is later than now (never a time in the past).'),
      throttledto: { type: 'integer', description: 'The reduced rate, requests per minute, a 429 set.' },
    },
  },
} as const;

export const healthPaths = {
  '/subscriptions/{id}/health': {
    parameters: [idParameter],
    get: {
      operationId: 'getSubscriptionHealth',
      summary: 'How delivery to the subscription’s target is going now',
      description:
        'The circuit breaker as the delivery function judges it at this moment, the failure streak and since when, the last success, and ' +
        'when the next attempt may go. The subscription’s `status` says whether the target consented and whether Koerier still tries; this ' +
        'says how it is going. Scope `subscriptions:read` (or `subscriptions:manage`), on the client’s own subscriptions; `admin` for any.',
      tags: ['Subscriptions'],
      security: readSubscriptionsSecurity,
      responses: {
        '200': {
          description: 'The health of the target.',
          headers: versionHeader,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/SubscriptionHealth' } } },
        },
        ...authProblems,
        '404': problemResponse('No such subscription for this client (an `admin` client sees every subscription).'),
        ...commonProblems,
      },
    },
  },
} as const;
