/**
 * The alerts function (issue 30 item 3): SQS event source on the alerts queue, with partial batch
 * responses. A batch is gathered over the queue's batching window, so alerts that fire together go
 * as one message per contact (core/alerts/send-alerts.ts). A signal that cannot be read is
 * dropped with a log line: it would never be readable, and retrying it would only hold its batch.
 */
import { ALERT_KINDS, type AlertSignal } from '../core/alerts/alert-signals.js';
import { sendAlerts } from '../core/alerts/send-alerts.js';
import type { KoerierDependencies } from './dependencies.js';
import type { QueueApp } from './queue-app.js';

/** What the app reads: its handler (functions/handlers/alerts.ts) must compose a builder for each. */
export type AlertsAppDependencies = Pick<
  KoerierDependencies,
  'config' | 'log' | 'clock' | 'subscriptions' | 'alertWindows' | 'alertMailer' | 'alertWebhook' | 'metrics'
>;

export function alertsApp(deps: AlertsAppDependencies): QueueApp {
  return async (batch) => {
    const signals: (AlertSignal & { messageId: string })[] = [];
    for (const record of batch.records) {
      const signal = signalOf(record.body);
      if (signal) signals.push({ ...signal, messageId: record.messageId });
      else deps.log.error('alert signal not readable; dropped', { messageId: record.messageId });
    }
    const { failedSignalIds } = await sendAlerts(signals, {
      subscriptions: deps.subscriptions,
      windows: deps.alertWindows,
      mailer: deps.alertMailer,
      webhook: deps.alertWebhook,
      clock: deps.clock,
      log: deps.log,
      apiBaseUrl: deps.config.publicBaseUrl,
      deployment: deps.config.stackName,
    });
    const failed = new Set(failedSignalIds);
    return { failedMessageIds: signals.filter((signal) => failed.has(signal.id)).map((signal) => signal.messageId) };
  };
}

function signalOf(body: string): AlertSignal | undefined {
  try {
    const value = JSON.parse(body) as Partial<AlertSignal>;
    const texts = [value.id, value.subscriptionId, value.owner, value.at, value.detail];
    if (texts.some((text) => typeof text !== 'string')) return undefined;
    if (!(ALERT_KINDS as readonly unknown[]).includes(value.kind)) return undefined;
    return value as AlertSignal;
  } catch {
    return undefined;
  }
}
