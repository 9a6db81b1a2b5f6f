/**
 * Who is told out of band when a subscription needs its owner (issue 30 item 3, SELF-3): up to
 * five e-mail addresses and one Teams/Slack-style incoming webhook, kept with the subscription.
 * The webhook is called by Koerier on the subscriber's behalf, so it passes the sink's outbound URL
 * policy; and it must be on another host than the sink, or the news that the sink fails would go
 * to the very host that fails.
 */
import * as Type from '@sinclair/typebox';
import { refusedAs } from '../http/json-body.js';
import type { ValidationIssue } from '../http/problems.js';
import { outboundUrlProblem, type OutboundUrlRules } from './outbound-url.js';

export const ALERT_LIMITS = {
  emails: 5,
  emailLength: 254,
  deadLetterThreshold: { min: 1, max: 10_000, default: 10 },
} as const;

/** As the store keeps them. */
export interface AlertContacts {
  readonly emails: readonly string[];
  readonly webhookUrl?: string;
  /** Dead letters of the subscription within the counting window (an hour) before an alert goes. */
  readonly deadLetterThreshold: number;
}

/** The member of SubscriptionRequest (subscription-body.ts); the webhook's URL policy is checked in code. */
export const ALERTS_MEMBER = refusedAs(
  {
    rule: 'alert-contacts',
    requirement: 'SELF-3',
    message: `alerts must be an object with emails (at most ${ALERT_LIMITS.emails} e-mail addresses), webhookurl (an https URL) and deadletterthreshold (${ALERT_LIMITS.deadLetterThreshold.min} to ${ALERT_LIMITS.deadLetterThreshold.max}), all optional`,
  },
  Type.Object(
    {
      emails: Type.Optional(
        Type.Array(Type.String({ format: 'email', maxLength: ALERT_LIMITS.emailLength }), {
          maxItems: ALERT_LIMITS.emails,
          uniqueItems: true,
          description: 'Told by e-mail.',
          example: ['beheer@ontvanger.example'],
        }),
      ),
      webhookurl: Type.Optional(
        Type.String({
          format: 'uri',
          maxLength: 2048,
          description:
            'A Teams/Slack-style incoming webhook, told with a JSON `{"text": …}` POST: https, on another host than the sink, under the sink\'s outbound URL policy.',
        }),
      ),
      deadletterthreshold: Type.Optional(
        Type.Integer({
          minimum: ALERT_LIMITS.deadLetterThreshold.min,
          maximum: ALERT_LIMITS.deadLetterThreshold.max,
          default: ALERT_LIMITS.deadLetterThreshold.default,
          description: 'Dead letters within an hour before a dead-lettering alert goes.',
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'SELF-3: who is told out of band when the subscription is suspended, dead-letters above the threshold, loses consent or its credential fails. Each kind of alert goes at most once an hour per contact and subscription; alerts that fire together go as one digest per contact. `null` in a PATCH removes them.',
    },
  ),
);

/** The member checked beyond its schema: the webhook's URL policy and its host. Undefined contacts when absent or empty. */
export function parseAlertContacts(
  value: unknown,
  sink: string,
  rules: OutboundUrlRules,
): { contacts?: AlertContacts; issues: ValidationIssue[] } {
  if (value === undefined || value === null || typeof value !== 'object') return { issues: [] };
  const member = value as { emails?: string[]; webhookurl?: string; deadletterthreshold?: number };
  const issues: ValidationIssue[] = [];
  const webhookUrl = member.webhookurl;
  if (webhookUrl !== undefined) {
    const problem = outboundUrlProblem(webhookUrl, 'alerts.webhookurl', rules);
    if (problem) issues.push({ attribute: 'alerts.webhookurl', ...problem });
    else if (sink !== '' && sameHost(webhookUrl, sink))
      issues.push({
        attribute: 'alerts.webhookurl',
        rule: 'other-host',
        requirement: 'SELF-3',
        message:
          'alerts.webhookurl must be on another host than the sink: an alert that the sink fails must not go to it',
      });
  }
  const emails = member.emails ?? [];
  if (emails.length === 0 && webhookUrl === undefined) return { issues };
  return {
    contacts: {
      emails: emails.map((email) => email.trim()),
      ...(webhookUrl === undefined ? {} : { webhookUrl }),
      deadLetterThreshold: member.deadletterthreshold ?? ALERT_LIMITS.deadLetterThreshold.default,
    },
    issues,
  };
}

function sameHost(a: string, b: string): boolean {
  try {
    return new URL(a).hostname.toLowerCase() === new URL(b).hostname.toLowerCase();
  } catch {
    return false;
  }
}

/** The member as GET shows it (and a PATCH merges into). */
export function alertContactsView(contacts: AlertContacts): Record<string, unknown> {
  return {
    emails: [...contacts.emails],
    ...(contacts.webhookUrl === undefined ? {} : { webhookurl: contacts.webhookUrl }),
    deadletterthreshold: contacts.deadLetterThreshold,
  };
}
