/**
 * The subscription as clients write it, one schema (issue 29 item 2): what `parseSubscriptionInput`
 * checks a POST body (or a PATCH's merged result) with, and what /openapi.json shows as
 * `SubscriptionRequest`. Member names follow the CloudEvents Subscriptions API (lower case), plus
 * Koerier's own. Each member is refused in the words, rule and requirement it always was
 * (`refusedAs`); what no schema says (push against pull members, the outbound URL policy, the
 * deployment's retry window and signing key, the credential policy, the conditions' size) is
 * checked in code after it (subscription-input.ts).
 */
// The builders one by one, not TypeBox's `Type` object, which bundles all of them (core/http/json-body.ts says why).
import * as Type from '@sinclair/typebox';
import { CONTENT_MODES } from '../cloudevents/index.js';
import { refusedAs, requestBody, stringEnum } from '../http/json-body.js';
import { FILTER_LIMITS } from './filters.js';
import { filtersMember } from './filter-schema.js';
import { PULL_LIMITS } from './subscription.js';
import { ALERTS_MEMBER } from './alert-contacts.js';
import { ORDERING_MESSAGE, ORDERING_SCHEMA } from '../ordering/ordering-schema.js';

const MAX_TYPES = 32;
const MAX_TEXT = 1024;
export const MIN_RETRY_WINDOW_SECONDS = 60;
/** CE-14: an intermediary forwards every event of 64 KiB or less, so no subscription takes less inline. */
export const MIN_INLINE_BYTES = 65_536;
/** What one push delivery may carry inline: Lambda's request limit, the largest event Koerier accepts at all. */
export const MAX_INLINE_BYTES = 6_291_456;

/**
 * The pull members' schemas on their own: pull-subscription-input.ts checks them (in a push
 * subscription they are refused by name, whatever their value).
 */
export const PULL_MEMBER_SCHEMAS = {
  maxdeliverycount: Type.Integer({
    minimum: PULL_LIMITS.maxDeliveryCount.min,
    maximum: PULL_LIMITS.maxDeliveryCount.max,
    default: PULL_LIMITS.maxDeliveryCount.default,
    description: 'Pull only: deliveries of one event before it goes to the dead letters.',
  }),
  retentionseconds: Type.Integer({
    minimum: PULL_LIMITS.retentionSeconds.min,
    maximum: PULL_LIMITS.retentionSeconds.max,
    default: PULL_LIMITS.retentionSeconds.default,
    description: 'Pull only: how long an unsettled event stays in the queue (at most 14 days).',
  }),
} as const;

export const SUBSCRIPTION_BODY = requestBody({
  schema: Type.Object(
    {
      sink: Type.Optional(
        // The outbound URL policy (https, ports, no user info, public addresses) is checked in code.
        refusedAs(
          'in-code',
          Type.String({
            format: 'uri',
            description:
              'The webhook: an https URL (WH-1) on port 443 unless the deployment allows more (KOERIER_OUTBOUND_PORTS). No credentials in it (WH-3).',
            example: 'https://ontvanger.example/webhooks/koerier',
          }),
        ),
      ),
      source: Type.Optional(
        refusedAs(
          {
            rule: 'non-empty-string',
            requirement: 'EDU-14',
            message: `source must be a non-empty string of at most ${MAX_TEXT} characters`,
          },
          Type.String({ minLength: 1, maxLength: MAX_TEXT, description: 'Only events with exactly this source.' }),
        ),
      ),
      types: Type.Optional(
        refusedAs(
          {
            rule: 'array-of-strings',
            requirement: 'EDU-14',
            message: `types must be an array of at most ${MAX_TYPES} non-empty strings`,
          },
          Type.Array(Type.String({ minLength: 1, maxLength: MAX_TEXT }), {
            maxItems: MAX_TYPES,
            description: 'Only events with one of these types (a version is part of the type, EDU-8).',
          }),
        ),
      ),
      // Checked by parseFilters, which names each place and the dialects' own rules.
      filters: Type.Optional(
        refusedAs('in-code', filtersMember({ maxItems: FILTER_LIMITS.maxNodes, description: 'All must match.' })),
      ),
      protocol: Type.Optional(
        refusedAs(
          {
            rule: 'enum',
            requirement: 'EDU-14',
            message: 'protocol must be "HTTP", the only one Koerier delivers with',
          },
          stringEnum(['HTTP'], { default: 'HTTP' }),
        ),
      ),
      delivery: Type.Optional(
        refusedAs(
          { rule: 'enum', requirement: 'EDU-17', message: 'delivery must be "push" or "pull"' },
          stringEnum(['push', 'pull'], {
            default: 'push',
            description:
              '`push`: Koerier delivers to the webhook `sink`. `pull`: the consumer receives from the subscription’s own queue (POST /subscriptions/{id}/events/receive, docs/PULL.md); no sink, credential or handshake, so every push member is refused. Cannot be changed by a PATCH.',
          }),
        ),
      ),
      // Checked by pull-subscription-input.ts with these schemas: in a push subscription they are refused by name.
      maxdeliverycount: Type.Optional(refusedAs('in-code', PULL_MEMBER_SCHEMAS.maxdeliverycount)),
      retentionseconds: Type.Optional(refusedAs('in-code', PULL_MEMBER_SCHEMAS.retentionseconds)),
      contentmode: Type.Optional(
        refusedAs(
          { rule: 'enum', requirement: 'HTTP-4', message: `contentmode must be one of ${CONTENT_MODES.join(', ')}` },
          stringEnum(CONTENT_MODES, {
            default: 'structured',
            description:
              'HTTP-4. `batch` is used only when the target declares it accepts application/cloudevents-batch+json (JSON-3); otherwise events go one by one, structured.',
          }),
        ),
      ),
      batchsupported: Type.Optional(
        refusedAs(
          { rule: 'boolean', requirement: 'JSON-3', message: 'batchsupported must be true or false' },
          Type.Boolean({
            description:
              'With validation "agreed" only: the out-of-band agreement says the target takes batches. With the handshake, the target declares it (Accept-Post).',
          }),
        ),
      ),
      // Checked against its own schema, the SinkCredential component (sink-credential-input.ts); null: none.
      sinkcredential: Type.Optional(
        refusedAs('in-code', Type.Unknown({ $ref: '#/components/schemas/SinkCredential' })),
      ),
      validation: Type.Optional(
        refusedAs(
          { rule: 'enum', requirement: 'WH-5', message: 'validation must be one of handshake, agreed' },
          stringEnum(['handshake', 'agreed'], {
            description:
              '`handshake`: Koerier sends the validation request (WH-4). `agreed`: consent agreed out of band (WH-5), for clients the configuration allows. ' +
              'Left out: `handshake`, or `agreed` for a partner of the directory where the deployment follows the Edukoppeling profile, which drops the handshake (EDU-3, `koerier:validationHandshake`).',
          }),
        ),
      ),
      retrywindowseconds: Type.Optional(
        refusedAs(
          {
            rule: 'range',
            requirement: 'EDU-IDEM-12',
            message: `retrywindowseconds must be an integer from ${MIN_RETRY_WINDOW_SECONDS} to the deployment's idempotency TTL`,
          },
          Type.Integer({
            minimum: MIN_RETRY_WINDOW_SECONDS,
            description:
              "How long deliveries are retried, at most the idempotency TTL (EDU-IDEM-12): the deployment's, so a longer window is refused in code.",
          }),
        ),
      ),
      signdeliveries: Type.Optional(
        refusedAs(
          { rule: 'boolean', requirement: 'EDU-14', message: 'signdeliveries must be true or false' },
          Type.Boolean({
            default: false,
            description:
              'Every delivery carries an HTTP Message Signature (RFC 9421: `Signature-Input`, `Signature`) over @method, @target-uri, Idempotency-Key, ' +
              'Content-Digest (RFC 9530, sha-256), Content-Type and every ce- header (binary mode), with created, keyid and alg. The keys are at GET /.well-known/http-message-signatures-directory. ' +
              'Refused (400 signing-unavailable) where the deployment has no signing key.',
          }),
        ),
      ),
      // Push and pull alike (EDU-1): a pull subscription's receive answer re-inlines up to it too.
      maxinlinebytes: Type.Optional(
        refusedAs(
          {
            rule: 'range',
            requirement: 'EDU-1',
            message: `maxinlinebytes must be an integer from ${MIN_INLINE_BYTES} (CE-14) to ${MAX_INLINE_BYTES}`,
          },
          Type.Integer({
            minimum: MIN_INLINE_BYTES,
            maximum: MAX_INLINE_BYTES,
            description:
              "Push and pull: the largest event delivered (or received) with its data inline (default: the deployment's inline threshold, 64 KiB). A larger event carries `dataref` to GET /payloads/{id}, with `koerierdatadigest` and `koerierdatasize`, and the subscription's owner may fetch it (EDU-1, CE-14). A pull receive also sends by reference an event that would not fit one answer (6 MB) inline.",
          }),
        ),
      ),
      // Push and pull alike (issue 30 item 3): the webhook's URL policy and host are checked in code (alert-contacts.ts).
      alerts: Type.Optional(ALERTS_MEMBER),
      // Push and pull alike (issue 33); the attributes that cannot be a key are refused in code (ordering-input.ts).
      ordering: Type.Optional(
        refusedAs({ rule: 'ordering', requirement: 'ORD-1', message: ORDERING_MESSAGE }, ORDERING_SCHEMA),
      ),
    },
    {
      additionalProperties: false,
      // Push needs a sink and a credential; pull has neither. Stated for the clients; checked in code,
      // which names the member (`sink`, `sinkcredential`: required) and keeps a PATCH's stored credential.
      if: { required: ['delivery'], properties: { delivery: { const: 'pull' } } },
      else: { required: ['sink', 'sinkcredential'] },
    },
  ),
  problemType: 'invalid-subscription',
  requirement: 'EDU-14',
});

/** A PATCH body (EDU-14): a JSON merge patch (RFC 7396) of the subscription; the merged result is checked by SUBSCRIPTION_BODY. */
export const MERGE_PATCH_BODY = requestBody({
  schema: Type.Object({}, { description: 'a JSON merge patch object (RFC 7396)' }),
  problemType: 'invalid-subscription',
  requirement: 'EDU-14',
});
