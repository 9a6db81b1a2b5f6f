/**
 * Koerier's own operational events (core/operations, docs/OPERATIONS.md "Operational events") as
 * OpenAPI 3.1 `webhooks`: what a subscription to one of the types receives, in structured mode.
 */
import { operationalEventTypes, SUBSCRIBER_ATTRIBUTE } from '../operations/operational-events.js';

const when: Record<string, string> = {
  [operationalEventTypes.subscriptionSuspended]:
    'The delivery function suspended a subscription: its target failed for the whole suspension period, or it lacks an acceptable sink credential.',
  [operationalEventTypes.subscriptionResumed]:
    'A suspended subscription was resumed (POST /subscriptions/{id}/resume).',
  [operationalEventTypes.subscriptionRetired]: 'The target answered 410 Gone: the subscription is retired for good.',
  [operationalEventTypes.deliveryDeadLettered]:
    'A delivery was attempted and given up: it is now a dead letter (GET /subscriptions/{id}/dead-letters).',
  [operationalEventTypes.deadLettersNotEmpty]: 'The subscription had no dead letters and now has one.',
  [operationalEventTypes.replayFinished]: 'A replay of archived events to the subscription ended.',
  [operationalEventTypes.contractDeprecated]:
    'A version of a contract in the register that covers the subscription’s types was deprecated; `data.sunset` says until when it holds.',
};

export const operationalWebhooks = Object.fromEntries(
  Object.values(operationalEventTypes).map((type) => [
    type,
    {
      post: {
        summary: `CloudEvent ${type}`,
        description:
          `${when[type] ?? ''} Sent like any event to subscriptions of this type: to the owner of the subscription it is about, and to operators ` +
          '(partners whose entitlements name "dev.koerier."). No publisher may publish it.',
        tags: ['Subscriptions'],
        requestBody: {
          required: true,
          content: { 'application/cloudevents+json': { schema: { $ref: '#/components/schemas/OperationalEvent' } } },
        },
        responses: { '2XX': { description: 'Received.' } },
      },
    },
  ]),
);

export const operationsSchemas = {
  OperationalEvent: {
    type: 'object',
    description:
      'One of Koerier’s own CloudEvents about a subscription; `data` holds identifiers, statuses and reasons, never event data.',
    required: ['specversion', 'id', 'source', 'type', 'subject', 'time', SUBSCRIBER_ATTRIBUTE, 'data'],
    properties: {
      specversion: { const: '1.0' },
      id: { type: 'string', format: 'uuid', description: 'Derived from the occurrence: one occurrence, one id.' },
      source: {
        type: 'string',
        format: 'uri-reference',
        description: 'koerier:operationsSource, by default the API’s URL.',
      },
      type: { type: 'string', enum: Object.values(operationalEventTypes) },
      subject: { type: 'string', format: 'uuid', description: 'The subscription it is about.' },
      time: { type: 'string', format: 'date-time' },
      datacontenttype: { const: 'application/json' },
      [SUBSCRIBER_ATTRIBUTE]: { type: 'string', description: 'The client that owns the subscription.' },
      data: {
        type: 'object',
        required: ['subscriptionId'],
        properties: {
          subscriptionId: { type: 'string', format: 'uuid' },
          status: { type: 'string', enum: ['active', 'suspended', 'retired'] },
          reason: { type: 'string' },
          suspendedFor: { type: 'string', enum: ['target-failing', 'credential-required'] },
          resumedBy: { type: 'string' },
          redriven: { type: 'integer' },
          deliveryId: { type: 'string', format: 'uuid' },
          detail: { type: 'string' },
          attempts: { type: 'integer' },
          events: {
            type: 'array',
            items: {
              type: 'object',
              properties: { source: { type: 'string' }, id: { type: 'string' }, type: { type: 'string' } },
            },
          },
          redriveOf: { type: 'string', format: 'uuid' },
          firstDeliveryId: { type: 'string', format: 'uuid' },
          deadLetters: { type: 'string', description: 'The path that lists the dead letters.' },
          replayId: { type: 'string' },
          state: { type: 'string' },
        },
      },
    },
  },
} as const;
