/**
 * OpenAPI paths of the subscriptions API (EDU-7, EDU-13, EDU-14) and the webhook validation
 * callback (WH-4). The member names follow the CloudEvents Subscriptions API.
 */
import { FILTER_DIALECTS } from '../subscriptions/filters.js';
import { PULL_LIMITS } from '../subscriptions/subscription.js';
import { authProblems, commonProblems, idempotencyKeyParameter, idempotencyProblems, problemResponse, versionHeader } from './components.js';

const filterSchema = {
  type: 'object',
  description:
    'A CloudEvents Subscriptions API filter expression: exactly one of the dialects ' +
    `${FILTER_DIALECTS.join(', ')}. exact/prefix/suffix map attribute names to non-empty strings (all must match, case sensitive); ` +
    'all/any hold a non-empty list of filters; not holds one. Any other dialect (e.g. sql) is rejected with 400.',
  minProperties: 1,
  maxProperties: 1,
  properties: {
    exact: { $ref: '#/components/schemas/AttributeMatch' },
    prefix: { $ref: '#/components/schemas/AttributeMatch' },
    suffix: { $ref: '#/components/schemas/AttributeMatch' },
    all: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/Filter' } },
    any: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/Filter' } },
    not: { $ref: '#/components/schemas/Filter' },
  },
  additionalProperties: false,
  example: { all: [{ prefix: { type: 'nl.edu.leerling.' } }, { exact: { subject: 'leerling/42' } }] },
} as const;

const sinkCredentialSchema = {
  description:
    'Required (WH-3: every delivery carries a token). By default only CLIENTCREDENTIALS is accepted (EDU-4); ACCESSTOKEN only where the deployment ' +
    'allows static tokens (KOERIER_SINK_CREDENTIALS=bearer-or-oauth2). Write-only: stored encrypted, never returned (only `credentialtype` is shown), never logged.',
  oneOf: [
    {
      type: 'object',
      title: 'Static bearer token',
      required: ['credentialtype', 'accesstoken'],
      properties: { credentialtype: { const: 'ACCESSTOKEN' }, accesstoken: { type: 'string', writeOnly: true } },
      additionalProperties: false,
    },
    {
      type: 'object',
      title: 'OAuth 2.0 client credentials (Koerier fetches tokens from tokenurl)',
      required: ['credentialtype', 'tokenurl', 'clientid', 'clientsecret'],
      properties: {
        credentialtype: { const: 'CLIENTCREDENTIALS' },
        tokenurl: { type: 'string', format: 'uri', writeOnly: true },
        clientid: { type: 'string', writeOnly: true },
        clientsecret: { type: 'string', writeOnly: true },
        scope: { type: 'string', writeOnly: true },
        audience: { type: 'string', writeOnly: true },
      },
      additionalProperties: false,
    },
  ],
} as const;

const writableProperties = {
  sink: {
    type: 'string',
    format: 'uri',
    description: 'The webhook: an https URL (WH-1) on port 443 unless the deployment allows more (KOERIER_OUTBOUND_PORTS). No credentials in it (WH-3).',
    example: 'https://ontvanger.example/webhooks/koerier',
  },
  source: { type: 'string', description: 'Only events with exactly this source.' },
  types: {
    type: 'array',
    maxItems: 32,
    items: { type: 'string', minLength: 1 },
    description: 'Only events with one of these types (a version is part of the type, EDU-8).',
  },
  filters: { type: 'array', items: { $ref: '#/components/schemas/Filter' }, description: 'All must match.' },
  protocol: { type: 'string', enum: ['HTTP'], default: 'HTTP' },
  delivery: {
    type: 'string',
    enum: ['push', 'pull'],
    default: 'push',
    description:
      '`push`: Koerier delivers to the webhook `sink`. `pull`: the consumer receives from the subscription’s own queue (POST /subscriptions/{id}/events/receive, docs/PULL.md); no sink, credential or handshake, so every push member is refused. Cannot be changed by a PATCH.',
  },
  maxdeliverycount: {
    type: 'integer',
    minimum: PULL_LIMITS.maxDeliveryCount.min,
    maximum: PULL_LIMITS.maxDeliveryCount.max,
    default: PULL_LIMITS.maxDeliveryCount.default,
    description: 'Pull only: deliveries of one event before it goes to the dead letters.',
  },
  retentionseconds: {
    type: 'integer',
    minimum: PULL_LIMITS.retentionSeconds.min,
    maximum: PULL_LIMITS.retentionSeconds.max,
    default: PULL_LIMITS.retentionSeconds.default,
    description: 'Pull only: how long an unsettled event stays in the queue (at most 14 days).',
  },
  contentmode: {
    type: 'string',
    enum: ['structured', 'binary', 'batch'],
    default: 'structured',
    description:
      'HTTP-4. `batch` is used only when the target declares it accepts application/cloudevents-batch+json (JSON-3); otherwise events go one by one, structured.',
  },
  batchsupported: {
    type: 'boolean',
    description:
      'With validation "agreed" only: the out-of-band agreement says the target takes batches. With the handshake, the target declares it (Accept-Post).',
  },
  sinkcredential: { $ref: '#/components/schemas/SinkCredential' },
  validation: {
    type: 'string',
    enum: ['handshake', 'agreed'],
    default: 'handshake',
    description: '`handshake`: Koerier sends the validation request (WH-4). `agreed`: consent agreed out of band (WH-5), for clients the configuration allows.',
  },
  retrywindowseconds: { type: 'integer', minimum: 60, description: 'How long deliveries are retried, at most the idempotency TTL (EDU-IDEM-12).' },
} as const;

export const subscriptionsSchemas = {
  Filter: filterSchema,
  AttributeMatch: {
    type: 'object',
    minProperties: 1,
    propertyNames: { pattern: '^[a-z0-9]{1,64}$' },
    additionalProperties: { type: 'string', minLength: 1, maxLength: 1024 },
  },
  SinkCredential: sinkCredentialSchema,
  SubscriptionRequest: {
    type: 'object',
    // Push needs a sink and a credential; pull has neither.
    if: { required: ['delivery'], properties: { delivery: { const: 'pull' } } },
    else: { required: ['sink', 'sinkcredential'] },
    properties: writableProperties,
    additionalProperties: false,
  },
  Subscription: {
    type: 'object',
    required: ['id', 'owner', 'delivery', 'status', 'createdat', 'updatedat'],
    if: { properties: { delivery: { const: 'pull' } } },
    then: { required: ['maxdeliverycount', 'retentionseconds'] },
    else: { required: ['sink', 'protocol', 'contentmode', 'batchsupported', 'validation'] },
    properties: {
      id: { type: 'string', format: 'uuid', readOnly: true },
      owner: { type: 'string', readOnly: true, description: 'The client that created it.' },
      ...writableProperties,
      sinkcredential: { type: 'object', readOnly: true, properties: { credentialtype: { type: 'string', enum: ['ACCESSTOKEN', 'CLIENTCREDENTIALS'] } } },
      status: {
        type: 'string',
        enum: ['pending', 'active', 'rejected', 'retired', 'suspended'],
        readOnly: true,
        description:
          'pending: waiting for consent; active: receiving; rejected: no consent; retired: the target answered 410; suspended: paused by the dispatcher.',
      },
      statusreason: { type: 'string', readOnly: true },
      suspendedfor: {
        type: 'string',
        enum: ['credential-required', 'target-failing'],
        readOnly: true,
        description: 'While suspended: credential-required (a PATCH with a sinkcredential reactivates it) or target-failing (POST …/resume).',
      },
      allowedrate: { type: 'integer', readOnly: true, description: 'WebHook-Allowed-Rate in requests per minute (WH-6); absent: no limit given.' },
      validationexpiresat: { type: 'string', format: 'date-time', readOnly: true, description: 'While pending: the target must approve before this.' },
      createdat: { type: 'string', format: 'date-time', readOnly: true },
      updatedat: { type: 'string', format: 'date-time', readOnly: true },
    },
  },
  SubscriptionList: {
    type: 'object',
    required: ['subscriptions'],
    properties: {
      subscriptions: { type: 'array', items: { $ref: '#/components/schemas/Subscription' } },
      next: { type: 'string', format: 'uri-reference', description: 'The next page; absent on the last.' },
    },
  },
} as const;

const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } } as const;
const etagHeader = {
  ETag: { description: 'The subscription version; send it as If-Match to change only what you read.', schema: { type: 'string' } },
} as const;
const subscriptionBody = (status: string, description: string, headers: Record<string, unknown> = {}) => ({
  [status]: {
    description,
    headers: { ...versionHeader, ...etagHeader, ...headers },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Subscription' } } },
  },
});
const security = [{ oauth2: ['subscriptions:manage'] }];
const notFound = { '404': problemResponse('No such subscription for this client (another client’s subscription looks the same).') };

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
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/SubscriptionRequest' } } } },
      responses: {
        ...subscriptionBody('201', 'Created.', { Location: { schema: { type: 'string' } } }),
        '400': problemResponse('Invalid subscription or Idempotency-Key; `errors` names every violation.'),
        ...authProblems,
        '403': problemResponse('Missing scope, not entitled to these events (EDU-7), or not allowed to skip the handshake (WH-5).'),
        '404': problemResponse('The subscription was deleted while its validation request was out.'),
        ...idempotencyProblems,
        '415': problemResponse('The body is not application/json.'),
        ...commonProblems,
      },
    },
    get: {
      operationId: 'listSubscriptions',
      summary: 'The client’s own subscriptions, oldest first',
      tags: ['Subscriptions'],
      security,
      parameters: [
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 } },
        { name: 'cursor', in: 'query', schema: { type: 'string' }, description: 'From `next` of the previous page.' },
      ],
      responses: {
        '200': {
          description: 'One page.',
          headers: { ...versionHeader, Link: { description: 'rel="next" when there is a next page.', schema: { type: 'string' } } },
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
      security,
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
      parameters: [idempotencyKeyParameter, { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'The ETag read.' }],
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
        '409': problemResponse('The subscription changed meanwhile, or the Idempotency-Key is in use.'),
        '412': problemResponse('If-Match does not name the current version.'),
        '415': problemResponse('Not a JSON (merge patch) body.'),
        '422': idempotencyProblems['422'],
        ...commonProblems,
      },
    },
    delete: {
      operationId: 'deleteSubscription',
      summary: 'Unsubscribe',
      description: 'Answers with the subscription as it was (CloudEvents Subscriptions API). Uses the Idempotency-Key (EDU-IDEM-5).',
      tags: ['Subscriptions'],
      security,
      parameters: [idempotencyKeyParameter],
      responses: {
        ...subscriptionBody('200', 'Deleted; the subscription as it was.'),
        ...authProblems,
        ...notFound,
        ...idempotencyProblems,
        ...commonProblems,
      },
    },
  },
  '/subscriptions/{id}/validation': {
    parameters: [
      idParameter,
      { name: 'token', in: 'query', required: true, schema: { type: 'string' }, description: 'The secret from the WebHook-Request-Callback URL.' },
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
          content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' }, status: { const: 'active' } } } } },
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
