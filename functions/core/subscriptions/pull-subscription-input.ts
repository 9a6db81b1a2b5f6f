/**
 * The members of a pull subscription (`"delivery": "pull"`, docs/PULL.md): its queue settings,
 * and no push member — a pull subscription has no sink, credential or handshake, so one given
 * anyway is a mistake the client should hear about rather than a setting silently ignored.
 */
import { Check } from '@sinclair/typebox/value';
import { PULL_MEMBER_SCHEMAS } from './subscription-body.js';
import type { PullSettings } from './subscription.js';

/** Members only a push subscription has; in a pull subscription they are refused. */
export const PUSH_ONLY_MEMBERS = [
  'sink',
  'sinkcredential',
  'contentmode',
  'batchsupported',
  'validation',
  'retrywindowseconds',
  'protocol',
  // A pull consumer fetches over Koerier's own authenticated API: nothing to sign towards it.
  'signdeliveries',
] as const;
/** Members only a pull subscription has. */
export const PULL_ONLY_MEMBERS = ['maxdeliverycount', 'retentionseconds'] as const;

type AddIssue = (attribute: string, rule: string, message: string, requirement?: string) => void;

export function parsePullMembers(
  fields: Readonly<Record<string, unknown>>,
  pushOnly: readonly string[],
  add: AddIssue,
): PullSettings | undefined {
  for (const name of pushOnly) {
    if (fields[name] !== undefined)
      add(name, 'push-only', `${name} is a member of push subscriptions; a pull subscription has none`, 'EDU-17');
  }
  const maxDeliveryCount = integerIn(fields['maxdeliverycount'], PULL_MEMBER_SCHEMAS.maxdeliverycount);
  if (maxDeliveryCount === undefined) {
    const { minimum, maximum } = PULL_MEMBER_SCHEMAS.maxdeliverycount;
    add('maxdeliverycount', 'range', `maxdeliverycount must be an integer from ${minimum} to ${maximum}`, 'EDU-17');
  }
  const retentionSeconds = integerIn(fields['retentionseconds'], PULL_MEMBER_SCHEMAS.retentionseconds);
  if (retentionSeconds === undefined) {
    const { minimum, maximum } = PULL_MEMBER_SCHEMAS.retentionseconds;
    add(
      'retentionseconds',
      'range',
      `retentionseconds must be an integer from ${minimum} to ${maximum} (14 days)`,
      'EDU-17',
    );
  }
  if (maxDeliveryCount === undefined || retentionSeconds === undefined) return undefined;
  return { maxDeliveryCount, retentionSeconds };
}

/** The value, its default when absent, or undefined when its schema (SubscriptionRequest's) refuses it. */
function integerIn(
  value: unknown,
  schema: (typeof PULL_MEMBER_SCHEMAS)[keyof typeof PULL_MEMBER_SCHEMAS],
): number | undefined {
  if (value === undefined) return schema.default as number;
  return Check(schema, value) ? (value as number) : undefined;
}
