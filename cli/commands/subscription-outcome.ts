/**
 * What `koerier subscriptions create`, `update` and `revalidate` tell about the subscription they
 * leave (issue 30 item 5): its status, the gateway's reason, and — when it is not active — the next
 * step, with a non-zero exit status, so a script or a person never takes `pending` or `rejected`
 * for done.
 */
import type { components } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { printJson, terminalSafe, type Context } from '../output.js';

type SubscriptionView = components['schemas']['Subscription'];

/** Prints the outcome (or the JSON with `--json`); throws a CliError with `inactive` when it is not active. */
export function reportOutcome(context: Context, subscription: SubscriptionView, did: string): void {
  const status = subscription.status ?? 'unknown';
  if (context.json) printJson(subscription);
  else {
    const suspended = subscription.suspendedfor ? ` (${subscription.suspendedfor})` : '';
    const reason = subscription.statusreason ? `: ${terminalSafe(subscription.statusreason)}` : '';
    process.stdout.write(`${did} ${subscription.id}: ${status}${suspended}${reason}.\n`);
    for (const warning of subscription.warnings ?? [])
      process.stdout.write(`warning: ${terminalSafe(warning.message ?? JSON.stringify(warning))}\n`);
  }
  const next = nextStep(subscription);
  if (!next) return;
  // Paused on purpose: not a failure of the command, but worth the reminder.
  if (subscription.suspendedfor === 'paused') {
    if (!context.json) process.stdout.write(`Next: ${next}\n`);
    return;
  }
  throw new CliError(`subscription ${subscription.id} is ${status}. Next: ${next}`, exitCodes.inactive);
}

/** What to do about a subscription that is not active, or nothing when it is. */
export function nextStep(subscription: SubscriptionView): string | undefined {
  const id = subscription.id;
  switch (subscription.status) {
    case 'pending':
      return subscription.validationcallback
        ? `the receiver must consent: answer Koerier's validation request (OPTIONS with WebHook-Request-Origin, answered ` +
            `2xx with WebHook-Allowed-Origin), or approve through the callback it was sent, before ` +
            `${subscription.validationexpiresat ?? 'the window ends'}. Once the receiver is ready: koerier subscriptions revalidate ${id}`
        : `Koerier is still validating the sink; see koerier subscriptions show ${id}, and once the receiver is ready: koerier subscriptions revalidate ${id}`;
    case 'rejected':
      return `the receiver did not consent to deliveries. Make it answer the validation request (OPTIONS with WebHook-Request-Origin, answered 2xx with WebHook-Allowed-Origin; docs/SUBSCRIPTIONS.md), then: koerier subscriptions revalidate ${id}`;
    case 'suspended':
      if (subscription.suspendedfor === 'paused') return `deliveries wait until: koerier subscriptions resume ${id}`;
      if (subscription.suspendedfor === 'credential-required')
        return `give it a sink credential: koerier subscriptions update ${id} --sink-token-url URL --sink-client-id ID (secret in KOERIER_SINK_CLIENT_SECRET)`;
      return `fix the receiver (koerier deliveries ${id} shows what it answered), then: koerier subscriptions resume ${id}`;
    case 'retired':
      return `the receiver answered 410 Gone; give it a new sink (koerier subscriptions update ${id} --sink URL) or delete the subscription`;
    case 'active':
    case undefined:
      return undefined;
  }
}
