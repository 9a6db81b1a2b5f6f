/**
 * OpenAPI schemas of the subscriptions API (EDU-7, EDU-13, EDU-14): the subscription, its filters
 * and sink credential, and a page of them. The member names follow the CloudEvents Subscriptions
 * API; subscriptions-paths.ts refers to them.
 */
import { describedSchema } from '../http/json-body.js';
import { FILTER_DIALECTS } from '../subscriptions/filters.js';
import { SINK_CREDENTIAL } from '../subscriptions/sink-credential-input.js';
import { PULL_LIMITS } from '../subscriptions/subscription.js';

const filterSchema = {
  type: 'object',
  description:
    'A CloudEvents Subscriptions API filter expression: exactly one of the dialects ' +
    `${FILTER_DIALECTS.join(', ')}. exact/prefix/suffix map attribute names to non-empty strings (all must match, case sensitive); ` +
    'all/any hold a non-empty list of filters; not holds one; sql holds a CloudEvents SQL (CESQL v1.0.0) expression over the ' +
    'context attributes (never data), which matches when it evaluates to true without an error. An invalid expression is a 400 ' +
    'naming the position and what was expected there (at most 4096 bytes, 32 levels of nesting; AND, OR and XOR mixed need ' +
    "parentheses). Conditions an expression pins (type = '…', type IN (…), type LIKE 'prefix%', or a conjunction holding one) " +
    'index the subscription as exact and prefix filters do; an expression that pins nothing is evaluated for every event the ' +
    'subscriber is entitled to. Any other dialect is rejected with 400.',
  minProperties: 1,
  maxProperties: 1,
  properties: {
    exact: { $ref: '#/components/schemas/AttributeMatch' },
    prefix: { $ref: '#/components/schemas/AttributeMatch' },
    suffix: { $ref: '#/components/schemas/AttributeMatch' },
    all: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/Filter' } },
    any: { type: 'array', minItems: 1, items: { $ref: '#/components/schemas/Filter' } },
    not: { $ref: '#/components/schemas/Filter' },
    sql: {
      type: 'string',
      minLength: 1,
      description: "A CESQL v1.0.0 expression (issue 32), e.g. type LIKE 'nl.edu.leerling.%' AND EXISTS schoolcode.",
      example: "type LIKE 'nl.edu.leerling.%' AND schoolcode IN ('12AB', '34CD')",
    },
  },
  additionalProperties: false,
  example: { all: [{ prefix: { type: 'nl.edu.leerling.' } }, { exact: { subject: 'leerling/42' } }] },
} as const;

const writableProperties = {
  sink: {
    type: 'string',
    format: 'uri',
    description:
      'The webhook: an https URL (WH-1) on port 443 unless the deployment allows more (KOERIER_OUTBOUND_PORTS). No credentials in it (WH-3).',
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
    description:
      '`handshake`: Koerier sends the validation request (WH-4). `agreed`: consent agreed out of band (WH-5), for clients the configuration allows. ' +
      'Left out: `handshake`, or `agreed` for a partner of the directory where the deployment follows the Edukoppeling profile, which drops the handshake (EDU-3, `koerier:validationHandshake`).',
  },
  retrywindowseconds: {
    type: 'integer',
    minimum: 60,
    description: 'How long deliveries are retried, at most the idempotency TTL (EDU-IDEM-12).',
  },
  signdeliveries: {
    type: 'boolean',
    default: false,
    description:
      'Every delivery carries an HTTP Message Signature (RFC 9421: `Signature-Input`, `Signature`) over @method, @target-uri, Idempotency-Key, ' +
      'Content-Digest (RFC 9530, sha-256), Content-Type and every ce- header (binary mode), with created, keyid and alg. The keys are at GET /.well-known/http-message-signatures-directory. ' +
      'Refused (400 signing-unavailable) where the deployment has no signing key.',
  },
  maxinlinebytes: {
    type: 'integer',
    minimum: 65536,
    maximum: 6291456,
    description:
      "Push and pull: the largest event delivered (or received) with its data inline (default: the deployment's inline threshold, 64 KiB). A larger event carries `dataref` to GET /payloads/{id}, with `koerierdatadigest` and `koerierdatasize`, and the subscription's owner may fetch it (EDU-1, CE-14). A pull receive also sends by reference an event that would not fit one answer (6 MB) inline.",
  },
} as const;

export const subscriptionsSchemas = {
  Filter: filterSchema,
  AttributeMatch: {
    type: 'object',
    minProperties: 1,
    propertyNames: { pattern: '^[a-z0-9]{1,64}$' },
    additionalProperties: { type: 'string', minLength: 1, maxLength: 1024 },
  },
  SinkCredential: describedSchema(SINK_CREDENTIAL),
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
