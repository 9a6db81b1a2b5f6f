/**
 * OpenAPI schemas of the subscriptions API (EDU-7, EDU-13, EDU-14): the subscription, its filters
 * and sink credential, and a page of them. The member names follow the CloudEvents Subscriptions
 * API; subscriptions-paths.ts refers to them.
 */
import { describedSchema } from '../http/json-body.js';
import { ATTRIBUTE_MATCH_BODY, FILTER } from '../subscriptions/filter-schema.js';
import { SINK_CREDENTIAL } from '../subscriptions/sink-credential-input.js';
import { SUBSCRIPTION_BODY } from '../subscriptions/subscription-body.js';

/** What a client writes, from the schema its body is checked with (issue 29 item 2). */
const subscriptionRequest = describedSchema(SUBSCRIPTION_BODY);
const writableProperties = subscriptionRequest['properties'] as Record<string, unknown>;

export const subscriptionsSchemas = {
  Filter: describedSchema(FILTER),
  AttributeMatch: describedSchema(ATTRIBUTE_MATCH_BODY),
  SinkCredential: describedSchema(SINK_CREDENTIAL),
  SubscriptionRequest: subscriptionRequest,
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
      sinkcredential: {
        type: 'object',
        readOnly: true,
        properties: { credentialtype: { type: 'string', enum: ['ACCESSTOKEN', 'CLIENTCREDENTIALS'] } },
      },
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
        enum: ['credential-required', 'target-failing', 'paused'],
        readOnly: true,
        description:
          'While suspended: credential-required (a PATCH with a sinkcredential reactivates it), target-failing or paused (POST …/resume).',
      },
      allowedrate: {
        type: 'integer',
        readOnly: true,
        description: 'WebHook-Allowed-Rate in requests per minute (WH-6); absent: no limit given.',
      },
      validationexpiresat: {
        type: 'string',
        format: 'date-time',
        readOnly: true,
        description: 'While pending: the target must approve before this.',
      },
      validationcallback: {
        type: 'string',
        format: 'uri-reference',
        readOnly: true,
        description:
          'While pending: where the target approves (GET or POST). The target received it with its secret token in WebHook-Request-Callback; ' +
          'the token is not shown here, so only the target (or its administrator) can approve. POST …/revalidate sends a new one.',
      },
      warnings: {
        type: 'array',
        readOnly: true,
        description:
          'What the subscription will not do as asked, e.g. rule batch-fallback: contentmode batch, but the target has not declared batch support, so events go one by one.',
        items: {
          type: 'object',
          required: ['attribute', 'rule', 'requirement', 'message'],
          properties: {
            attribute: { type: 'string' },
            rule: { type: 'string' },
            requirement: { type: 'string' },
            message: { type: 'string' },
          },
        },
      },
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
