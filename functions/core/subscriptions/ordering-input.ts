/**
 * The `ordering` member of a subscription (issue 33, ORD-1): its defaults filled in, and what its
 * schema does not say — the attributes that cannot be a key — checked here.
 */
import { Check } from '@sinclair/typebox/value';
import { ORDERING_SCHEMA } from '../ordering/ordering-schema.js';
import { DEFAULT_ORDERING, NOT_A_KEY, type OrderingSettings } from '../ordering/ordering-settings.js';

type AddIssue = (attribute: string, rule: string, message: string, requirement?: string) => void;

/**
 * The settings, undefined when the member is absent (unordered), or when it is refused;
 * `available` false: the deployment does not deliver in order (yet), so asking for it is refused
 * rather than silently ignored.
 */
export function parseOrdering(value: unknown, available: boolean, add: AddIssue): OrderingSettings | undefined {
  if (value === undefined) return undefined;
  // The schema's own issue is reported with the other members' (SUBSCRIPTION_BODY's refusedAs).
  if (!Check(ORDERING_SCHEMA, value)) return undefined;
  const settings: OrderingSettings = { ...DEFAULT_ORDERING, ...value };
  if (NOT_A_KEY.includes(settings.key)) {
    add(
      'ordering',
      'not-a-key',
      `ordering.key cannot be ${settings.key}: a key is partitionkey, subject or an extension attribute`,
      'ORD-1',
    );
    return undefined;
  }
  if (!available) {
    add('ordering', 'ordering-unavailable', 'this deployment does not deliver in order per key', 'ORD-1');
    return undefined;
  }
  return settings;
}
