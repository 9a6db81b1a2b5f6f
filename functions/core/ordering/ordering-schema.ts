/**
 * The `ordering` member of a subscription (issue 33), as SubscriptionRequest shows it in
 * /openapi.json. The attribute names that cannot be a key (`NOT_A_KEY`) are refused in code
 * (subscriptions/ordering-input.ts), which names the attribute.
 */
import * as Type from '@sinclair/typebox';
import { stringEnum } from '../http/json-body.js';
import { DEFAULT_ORDERING, ORDERING_FAILURE_POLICIES, WITHOUT_KEY_POLICIES } from './ordering-settings.js';

/** A CloudEvents attribute name: lower-case ASCII letters and digits (CE core spec, "Attribute Naming Convention"). */
const ATTRIBUTE_NAME = '^[a-z0-9]{1,20}$';

export const ORDERING_MESSAGE =
  'ordering must be an object with key (a lower-case attribute name), withoutKey (unordered or refuse) and onFailure (block, park or skip), and nothing else';

export const ORDERING_SCHEMA = Type.Object(
  {
    key: Type.Optional(
      Type.String({
        pattern: ATTRIBUTE_NAME,
        default: DEFAULT_ORDERING.key,
        description:
          'The context attribute whose value is the key: `partitionkey` (the CloudEvents partitioning extension, the default), `subject`, or an extension attribute’s name. Not `id`, `source`, `type`, `specversion`, `time`, `datacontenttype`, `dataschema` or `sequence`.',
      }),
    ),
    withoutKey: Type.Optional(
      stringEnum(WITHOUT_KEY_POLICIES, {
        default: DEFAULT_ORDERING.withoutKey,
        description:
          '`unordered`: an event without the key is delivered outside any order, without `sequence`. `refuse`: the ingest refuses an event without the key that this subscription would receive (400 `ordering-key-missing`, naming the attribute and this subscription; a batch is refused whole). The ingest reads which subscriptions refuse at most every 5 seconds, so a change to or from `refuse` takes effect there within 5 seconds.',
      }),
    ),
    onFailure: Type.Optional(
      stringEnum(ORDERING_FAILURE_POLICIES, {
        default: DEFAULT_ORDERING.onFailure,
        description:
          '`block`: the key waits, its event retried, until it is delivered or the subscription is paused. `park`: the event and every later one of the key are parked in order; a redrive of the key delivers them in order, then unparks it. `skip`: the event is dead-lettered, the key goes on, and the gap shows in `sequence`.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Ordered delivery per key (docs/ORDERING.md): the events of one key arrive in the order Koerier accepted them, at most one in flight (push) or locked (pull) per key, each stamped with a per-(subscription, key) `sequence` (the CloudEvents sequence extension, zero-padded to 10 digits so it sorts as text). Other keys are never held up.',
  },
);
