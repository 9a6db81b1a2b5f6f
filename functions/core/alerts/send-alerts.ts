/**
 * The alerts function's use case (SELF-3): one batch of alert signals from the alerts queue,
 * rate-limited per (contact, subscription, kind) and sent as one message per contact.
 *
 * Nothing is lost on a crash: a signal leaves the queue only when every contact it goes to has
 * been told or was told within the window already. A contact's rate window is claimed for the
 * alert before it is sent (a conditional write, `AlertWindows.claim`) and marked sent after; a
 * retried signal finds its own unsent claim and sends again, and a contact that was told before
 * the crash is not told twice. What can happen is a second message when the function dies between
 * the send and the mark: at least once, as every queue consumer of Koerier.
 *
 * Dead letters are counted per subscription in an hour's window (`AlertWindows.count`), and a
 * dead-lettering alert goes once the count reaches the subscription's threshold.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import type { AlertContacts } from '../subscriptions/alert-contacts.js';
import { alertMessage, type Alert, type AlertMessage } from './alert-digest.js';
import type { AlertSignal } from './alert-signals.js';

export const ALERT_WINDOW_MS = 3600_000;

export interface AlertWindows {
  /**
   * Claims the rate window `key` for `holder` until `until`: true when it was free (never held, or
   * its window ended by `now`) or is already `holder`'s unsent claim; false when another alert holds
   * it or `holder`'s was sent.
   */
  claim(key: string, holder: string, now: number, until: number): Promise<boolean>;
  /** Marks `holder`'s claim of `key` sent. */
  markSent(key: string, holder: string): Promise<void>;
  /** Adds `n` to the counter `key` (which ends at `until`) and returns its new value. */
  count(key: string, n: number, until: number): Promise<number>;
}

export interface AlertMail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

/** E-mail: SES in AWS (functions/aws/ses-alert-mailer.ts), an .eml file per message on the laptop. */
export interface AlertMailer {
  send(mail: AlertMail): Promise<void>;
}

/** A Teams/Slack-style incoming webhook, through the outbound HTTP guard; throws unless it answered 2xx. */
export type AlertWebhookPost = (url: string, message: AlertMessage) => Promise<void>;

export interface AlertSubscriptions {
  get(id: string): Promise<{ readonly id: string; readonly sink: string; readonly alerts?: AlertContacts } | undefined>;
}

export interface AlertSendingDependencies {
  readonly subscriptions: AlertSubscriptions;
  readonly windows: AlertWindows;
  /** Absent where the deployment names no sending identity: e-mail contacts are then skipped, and logged. */
  readonly mailer?: AlertMailer | undefined;
  readonly webhook: AlertWebhookPost;
  readonly clock: Clock;
  readonly log: Log;
  /** The API's public base URL, for the links in the message. */
  readonly apiBaseUrl: string;
  /** Named in each subject: which Koerier speaks. */
  readonly deployment: string;
}

type Contact =
  { readonly kind: 'email'; readonly address: string } | { readonly kind: 'webhook'; readonly url: string };

interface Pending {
  readonly alert: Alert;
  /** The signals it answers for: they fail when it could not be sent. */
  readonly signalIds: readonly string[];
  /** The holder of its rate windows. */
  readonly holder: string;
}

/** Sends what the signals call for; returns the ids of the signals to receive again. */
export async function sendAlerts(
  signals: readonly AlertSignal[],
  deps: AlertSendingDependencies,
): Promise<{ readonly failedSignalIds: readonly string[] }> {
  const now = deps.clock();
  const failed = new Set<string>();
  const perContact = new Map<string, { contact: Contact; pending: Pending[] }>();
  const bySubscription = new Map<string, AlertSignal[]>();
  for (const signal of signals)
    bySubscription.set(signal.subscriptionId, [...(bySubscription.get(signal.subscriptionId) ?? []), signal]);
  for (const [subscriptionId, own] of bySubscription) {
    try {
      const subscription = await deps.subscriptions.get(subscriptionId);
      const contacts = subscription?.alerts;
      if (!contacts) continue;
      for (const pending of await alertsOf(own, contacts, deps.windows, now)) {
        for (const contact of contactsOf(contacts)) {
          const key = windowKey(contact, subscriptionId, pending.alert.kind);
          if (!(await deps.windows.claim(key, pending.holder, now, now + ALERT_WINDOW_MS))) continue;
          const id = contactId(contact);
          const entry = perContact.get(id) ?? { contact, pending: [] };
          entry.pending.push(pending);
          perContact.set(id, entry);
        }
      }
    } catch (error) {
      deps.log.warn('alerts not prepared', { subscriptionId, error: describe(error) });
      for (const signal of own) failed.add(signal.id);
    }
  }
  for (const { contact, pending } of perContact.values()) {
    const message = alertMessage(
      pending.map((p) => p.alert),
      deps.apiBaseUrl,
      deps.deployment,
    );
    try {
      if (contact.kind === 'email') {
        if (!deps.mailer) {
          deps.log.warn('alert e-mail not sent: the deployment names no sending identity', { alerts: pending.length });
          continue;
        }
        await deps.mailer.send({ to: contact.address, ...message });
      } else await deps.webhook(contact.url, message);
      for (const { alert, holder } of pending)
        await deps.windows.markSent(windowKey(contact, alert.subscriptionId, alert.kind), holder);
      deps.log.info('alert sent', { contact: contact.kind, alerts: pending.length });
    } catch (error) {
      deps.log.warn('alert not sent; its signals come back', { contact: contact.kind, error: describe(error) });
      for (const p of pending) for (const id of p.signalIds) failed.add(id);
    }
  }
  return { failedSignalIds: [...failed] };
}

/** The alerts one subscription's signals call for: each signal its own, dead letters only above the threshold. */
async function alertsOf(
  signals: readonly AlertSignal[],
  contacts: AlertContacts,
  windows: AlertWindows,
  now: number,
): Promise<Pending[]> {
  const [deadLetters, others] = partition(signals, (signal) => signal.kind === 'dead-lettering');
  const alerts: Pending[] = others.map((signal) => ({
    alert: { kind: signal.kind, subscriptionId: signal.subscriptionId, at: signal.at, detail: signal.detail },
    signalIds: [signal.id],
    holder: signal.id,
  }));
  const latest = deadLetters.at(-1);
  if (latest) {
    const windowStart = Math.floor(now / ALERT_WINDOW_MS) * ALERT_WINDOW_MS;
    const counted = await windows.count(
      `alertcount#${latest.subscriptionId}#${windowStart}`,
      deadLetters.length,
      windowStart + ALERT_WINDOW_MS,
    );
    if (counted >= contacts.deadLetterThreshold)
      alerts.push({
        alert: {
          kind: 'dead-lettering',
          subscriptionId: latest.subscriptionId,
          at: latest.at,
          detail: `${counted} dead letters since ${new Date(windowStart).toISOString()} (threshold ${contacts.deadLetterThreshold}); the latest: ${latest.detail}`,
        },
        signalIds: deadLetters.map((signal) => signal.id),
        holder: `dead-lettering#${windowStart}`,
      });
  }
  return alerts;
}

function contactsOf(contacts: AlertContacts): Contact[] {
  return [
    ...contacts.emails.map((address) => ({ kind: 'email', address }) as const),
    ...(contacts.webhookUrl === undefined ? [] : [{ kind: 'webhook', url: contacts.webhookUrl } as const]),
  ];
}

function contactId(contact: Contact): string {
  return contact.kind === 'email' ? `email:${contact.address.toLowerCase()}` : `webhook:${contact.url}`;
}

/** The rate window of one (contact, subscription, kind); the contact hashed, so no address is a key. */
export function windowKey(contact: Contact, subscriptionId: string, kind: string): string {
  const hashed = createHash('sha256').update(contactId(contact)).digest('base64url').slice(0, 22);
  return `alertwindow#${hashed}#${subscriptionId}#${kind}`;
}

function partition<T>(items: readonly T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
