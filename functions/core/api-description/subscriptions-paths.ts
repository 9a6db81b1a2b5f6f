/**
 * OpenAPI paths of the subscriptions API (EDU-7, EDU-13, EDU-14) and the webhook validation
 * callback (WH-4). The member names follow the CloudEvents Subscriptions API; the schemas are in
 * subscriptions-schemas.ts.
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
import { quotaDefaultText } from '../quotas/client-quotas.js';

const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } } as const;
const etagHeader = {
  ETag: {
    description: 'The subscription version; send it as If-Match to change only what you read.',
    schema: { type: 'string' },
  },
} as const;
const subscriptionBody = (status: string, description: string, headers: Record<string, unknown> = {}) => ({
  [status]: {
    description,
    headers: { ...versionHeader, ...etagHeader, ...headers },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Subscription' } } },
  },
});
const security = [{ oauth2: ['subscriptions:manage'] }];
const notFound = {
  '404': problemResponse('No such subscription for this client (another client’s subscription looks the same).'),
};

export const subscriptionsPaths = {
  '/subscriptions': {
    post: {
      operationId: 'createSubscription',
      summary: 'Subscribe (EDU-13, EDU-14)',
      description:
        'Creates a subscription within the client’s entitlement (EDU-7). Unless validation is agreed out of band, Koerier first sends the ' +
        'webhook validation request to the sink (WH-4) and answers with the outcome: `active` (consented), `pending` (waiting for approval ' +
        'through the callback) or `rejected` (with the reason).',
      tags: ['Subscriptions'],
      security,
      parameters: [idempotencyKeyParameter],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/SubscriptionRequest' } } },
      },
      responses: {
        ...subscriptionBody('201', 'Created.', { Location: { schema: { type: 'string' } } }),
        '400': problemResponse('Invalid subscription or Idempotency-Key; `errors` names every violation.'),
        ...authProblems,
        '403': problemResponse(
          'Missing scope, not entitled to these events (EDU-7), or not allowed to skip the handshake (WH-5).',
        ),
        '404': problemResponse('The subscription was deleted while its validation request was out.'),
        ...idempotencyProblems,
        '409': problemResponse(
          `A pull subscription past the client’s quota \`maxPullSubscriptions\` (\`quota-exceeded\`: \`quota\`, \`limit\` and \`used\` in the problem; default ${quotaDefaultText('maxPullSubscriptions')}, ` +
            'an operator sets a partner’s own in PUT /clients/{clientId}), or a request with this Idempotency-Key is still in progress (retry after Retry-After).',
        ),
        '415': problemResponse('The body is not application/json.'),
        ...commonProblems,
      },
    },
    get: {
      operationId: 'listSubscriptions',
      summary: 'The client’s own subscriptions, oldest first',
      tags: ['Subscriptions'],
      security: readSubscriptionsSecurity,
      parameters: [
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 } },
        { name: 'cursor', in: 'query', schema: { type: 'string' }, description: 'From `next` of the previous page.' },
        {
          name: 'owner',
          in: 'query',
          schema: { type: 'string' },
          description:
            'Scope `admin` only: the client whose subscriptions to list, or `*` for every client’s (in no particular order).',
        },
      ],
      responses: {
        '200': {
          description: 'One page.',
          headers: {
            ...versionHeader,
            Link: { description: 'rel="next" when there is a next page.', schema: { type: 'string' } },
          },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/SubscriptionList' } } },
        },
        '400': problemResponse('Invalid limit or cursor.'),
        ...authProblems,
        ...commonProblems,
      },
    },
  },
  '/subscriptions/{id}': {
    parameters: [idParameter],
    get: {
      operationId: 'getSubscription',
      summary: 'One of the client’s subscriptions',
      tags: ['Subscriptions'],
      security: readSubscriptionsSecurity,
      responses: { ...subscriptionBody('200', 'The subscription.'), ...authProblems, ...notFound, ...commonProblems },
    },
    patch: {
      operationId: 'updateSubscription',
      summary: 'Change a subscription (JSON merge patch, RFC 7396)',
      description:
        'Members set to null are removed (`sinkcredential: null` is refused: WH-3); `sinkcredential` absent keeps the stored one. A new sink — or a subscription that is rejected or retired — ' +
        'gets the validation handshake again. The result must still be within the entitlement (EDU-7).',
      tags: ['Subscriptions'],
      security,
      parameters: [
        idempotencyKeyParameter,
        { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'The ETag read.' },
      ],
      requestBody: {
        required: true,
        content: {
          'application/merge-patch+json': { schema: { $ref: '#/components/schemas/SubscriptionRequest' } },
          'application/json': { schema: { $ref: '#/components/schemas/SubscriptionRequest' } },
        },
      },
      responses: {
        ...subscriptionBody('200', 'The changed subscription.'),
        '400': problemResponse('Invalid result or Idempotency-Key.'),
        ...authProblems,
        '403': problemResponse('Missing scope or outside the entitlement.'),
        ...notFound,
        '409': problemResponse(
          'The subscription changed meanwhile, the Idempotency-Key is in use, or it delivers a ZGW abonnement (`subscription-of-abonnement`: change the abonnement).',
        ),
        '412': problemResponse('If-Match does not name the current version.'),
        '415': problemResponse('Not a JSON (merge patch) body.'),
        '422': idempotencyProblems['422'],
        ...commonProblems,
      },
    },
    delete: {
      operationId: 'deleteSubscription',
      summary: 'Unsubscribe',
      description:
        'Answers with the subscription as it was (CloudEvents Subscriptions API). Uses the Idempotency-Key (EDU-IDEM-5).',
      tags: ['Subscriptions'],
      security,
      parameters: [idempotencyKeyParameter],
      responses: {
        ...subscriptionBody('200', 'Deleted; the subscription as it was.'),
        ...authProblems,
        ...notFound,
        ...idempotencyProblems,
        '409': problemResponse(
          'The Idempotency-Key is in use (retry after Retry-After), or the subscription delivers a ZGW abonnement (`subscription-of-abonnement`: delete the abonnement).',
          idempotencyProblems['409'].headers,
        ),
        ...commonProblems,
      },
    },
  },
  '/subscriptions/{id}/revalidate': {
    parameters: [idParameter],
    post: {
      operationId: 'revalidateSubscription',
      summary: 'Validate again (WH-4)',
      description:
        'Sends the webhook validation request to the sink again, with a new callback URL and approval window: for a `pending` subscription ' +
        'whose target missed the request, or a `rejected` one whose target now consents. Answers with the outcome, as a create does. ' +
        'Uses the Idempotency-Key (EDU-IDEM-5).',
      tags: ['Subscriptions'],
      security,
      parameters: [idempotencyKeyParameter],
      responses: {
        ...subscriptionBody('200', 'Validated again: `active`, `pending` or `rejected`, with the reason.'),
        ...authProblems,
        ...notFound,
        '409': problemResponse(
          'Not pending or rejected, consent agreed out of band, changed meanwhile, or the Idempotency-Key is in use.',
        ),
        '422': idempotencyProblems['422'],
        ...commonProblems,
      },
    },
  },
  '/subscriptions/{id}/validation': {
    parameters: [
      idParameter,
      {
        name: 'token',
        in: 'query',
        required: true,
        schema: { type: 'string' },
        description: 'The secret from the WebHook-Request-Callback URL.',
      },
    ],
    get: {
      operationId: 'approveSubscriptionByGet',
      summary: 'Webhook validation callback (WH-4)',
      description:
        'The URL Koerier sent as WebHook-Request-Callback. A target (or its administrator, in a browser) approves the subscription by calling it; ' +
        'an optional WebHook-Allowed-Rate header sets the rate. No access token: the secret in the URL is the authentication.',
      tags: ['Subscriptions'],
      security: [],
      parameters: [{ name: 'WebHook-Allowed-Rate', in: 'header', required: false, schema: { type: 'string' } }],
      responses: {
        '200': {
          description: 'Approved (repeating is harmless).',
          headers: versionHeader,
          content: {
            'application/json': {
              schema: { type: 'object', properties: { id: { type: 'string' }, status: { const: 'active' } } },
            },
          },
        },
        '404': problemResponse('Unknown subscription or wrong token.'),
        '409': problemResponse('The subscription cannot be approved in its current status.'),
        '410': problemResponse('The approval window has closed.'),
      },
    },
    post: {
      operationId: 'approveSubscriptionByPost',
      summary: 'Webhook validation callback (WH-4)',
      description: 'As GET.',
      tags: ['Subscriptions'],
      security: [],
      responses: {
        '200': { description: 'Approved (repeating is harmless).', headers: versionHeader },
        '404': problemResponse('Unknown subscription or wrong token.'),
        '409': problemResponse('The subscription cannot be approved in its current status.'),
        '410': problemResponse('The approval window has closed.'),
      },
    },
  },
} as const;
