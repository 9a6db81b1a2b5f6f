/**
 * The pieces the delivery administration paths (./delivery-paths.ts) share: security, path and page
 * parameters, the attempt filters, the withheld list and the problems of a POST.
 */
import { authProblems, commonProblems, idempotencyProblems, problemResponse, versionHeader } from './components.js';

export const security = [{ oauth2: ['subscriptions:manage'] }];
export const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } } as const;
export const pageParameters = [
  { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
  {
    name: 'cursor',
    in: 'query',
    required: false,
    description: 'From the `next` link of the previous page.',
    schema: { type: 'string' },
  },
] as const;
export const notFound = {
  '404': problemResponse('No such subscription for this client (an `admin` client sees every subscription).'),
} as const;
export const ownership =
  'Scope `subscriptions:manage`, on the client’s own subscriptions; a client that also holds `admin` may act on any subscription.';

export const withheldSchema = {
  type: 'array',
  description:
    'Dead letters not sent: an event is no longer entitled (`not-entitled`) or no longer matches the subscription (`no-longer-matches`). They stay dead letters.',
  items: {
    type: 'object',
    required: ['deliveryId', 'reason'],
    properties: {
      deliveryId: { type: 'string' },
      reason: { type: 'string', enum: ['not-entitled', 'no-longer-matches'] },
    },
  },
} as const;

export const attemptFilters = [
  {
    name: 'source',
    in: 'query',
    required: false,
    description: 'Only attempts of deliveries carrying an event with this `source` (with `id`: one event).',
    schema: { type: 'string' },
  },
  {
    name: 'id',
    in: 'query',
    required: false,
    description: 'Only attempts of deliveries carrying an event with this `id`.',
    schema: { type: 'string' },
  },
  {
    name: 'outcome',
    in: 'query',
    required: false,
    schema: { type: 'string', enum: ['delivered', 'retrying', 'dead-lettered', 'retired'] },
  },
  {
    name: 'since',
    in: 'query',
    required: false,
    description: 'Attempts at or after this time.',
    schema: { type: 'string', format: 'date-time' },
  },
  {
    name: 'until',
    in: 'query',
    required: false,
    description: 'Attempts before this time.',
    schema: { type: 'string', format: 'date-time' },
  },
] as const;

export const page = (member: string, item: string, description: string) => ({
  '200': {
    description,
    headers: {
      ...versionHeader,
      Link: { description: '`<next>; rel="next"` when there is a next page.', schema: { type: 'string' } },
    },
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: [member],
          properties: {
            [member]: { type: 'array', items: { $ref: `#/components/schemas/${item}` } },
            next: { type: 'string' },
          },
        },
      },
    },
  },
});

export const pausedProperties = {
  id: { type: 'string' },
  status: { const: 'suspended' },
  suspendedfor: { const: 'paused' },
} as const;
export const postProblems = {
  '400': problemResponse('Invalid body or Idempotency-Key.'),
  ...authProblems,
  ...notFound,
  '422': idempotencyProblems['422'],
  ...commonProblems,
} as const;
