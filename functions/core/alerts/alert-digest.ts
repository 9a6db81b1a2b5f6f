/**
 * What one contact is told (SELF-3): one message for every alert that goes to it in one batch of
 * the alerts queue, so twenty subscriptions failing at once make one digest, not twenty messages.
 * Plain text, for e-mail and for a Teams/Slack-style webhook alike: identifiers, statuses and
 * reasons only, never an event's data.
 */
import type { AlertKind } from './alert-signals.js';

/** One alert that passed its rate window. */
export interface Alert {
  readonly kind: AlertKind;
  readonly subscriptionId: string;
  /** ISO 8601. */
  readonly at: string;
  readonly detail: string;
}

export interface AlertMessage {
  readonly subject: string;
  readonly text: string;
}

const HEADLINES: Record<AlertKind, string> = {
  suspended: 'suspended: its target kept failing',
  'dead-lettering': 'dead-lettering above its threshold',
  'consent-lost': 'retired: the target withdrew its consent (410 Gone)',
  'entitlement-lost': 'not entitled: its owner may no longer receive these events, so they are withheld',
  'credentials-failing': 'its credentials fail',
};

const NEXT_STEPS: Record<AlertKind, string> = {
  suspended: 'Fix the target, then resume the subscription (POST /subscriptions/{id}/resume).',
  'dead-lettering':
    'See the dead letters (GET /subscriptions/{id}/dead-letters) and redrive them once the cause is fixed.',
  'consent-lost': 'Create a new subscription once the target takes events again.',
  'entitlement-lost': "Ask Koerier's operator for the entitlement (EDU-7), or narrow the subscription's types.",
  'credentials-failing':
    'Check the sink credential (its token endpoint, client id and secret) and PATCH the subscription.',
};

/** The message for `alerts`, all for one contact; a digest when there is more than one. */
export function alertMessage(alerts: readonly Alert[], apiBaseUrl: string, deployment: string): AlertMessage {
  const sorted = [...alerts].sort(
    (a, b) => a.at.localeCompare(b.at) || a.subscriptionId.localeCompare(b.subscriptionId),
  );
  const [only] = sorted;
  const subject =
    sorted.length === 1 && only
      ? `[${deployment}] Subscription ${only.subscriptionId} ${HEADLINES[only.kind].split(':')[0]}`
      : `[${deployment}] ${sorted.length} alerts for your subscriptions (${kindsSummary(sorted)})`;
  const blocks = sorted.map((alert, index) => {
    const link = `${apiBaseUrl}/subscriptions/${encodeURIComponent(alert.subscriptionId)}`;
    return [
      `${sorted.length === 1 ? '' : `${index + 1}. `}Subscription ${alert.subscriptionId}: ${HEADLINES[alert.kind]}`,
      `   at ${alert.at}`,
      ...(alert.detail === '' ? [] : [`   ${alert.detail}`]),
      `   ${NEXT_STEPS[alert.kind].replace('{id}', alert.subscriptionId)}`,
      `   ${link}`,
    ].join('\n');
  });
  const intro =
    sorted.length === 1
      ? 'Koerier tells you this because this address is an alert contact of the subscription.'
      : `Koerier tells you these ${sorted.length} alerts in one message because they fired together; this address is an alert contact of each subscription.`;
  const footer =
    'Each kind of alert is sent at most once an hour per subscription and contact. Change the contacts with PATCH /subscriptions/{id} ("alerts").';
  return { subject, text: [intro, '', blocks.join('\n\n'), '', footer, ''].join('\n') };
}

function kindsSummary(alerts: readonly Alert[]): string {
  const counts = new Map<AlertKind, number>();
  for (const alert of alerts) counts.set(alert.kind, (counts.get(alert.kind) ?? 0) + 1);
  return [...counts].map(([kind, count]) => `${count} ${kind}`).join(', ');
}
