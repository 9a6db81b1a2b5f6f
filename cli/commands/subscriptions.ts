/**
 * `koerier subscriptions …`: list, create (push or pull, with filters), show, pause and resume,
 * delete — the subscriptions API (docs/SUBSCRIPTIONS.md) and its resume (docs/OPERATIONS.md).
 */
import type { Command } from 'commander';
import { KoerierProblem, problemError, type components } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { contextOf, printJson, printRecord, printTable, type Context } from '../output.js';
import { subscriptionBody, subscriptionOptions, type SubscriptionOptions } from './subscription-body.js';
import { reportOutcome } from './subscription-outcome.js';

/** A subscription as the API answers it (the generated type of the API description). */
export type SubscriptionView = components['schemas']['Subscription'];
type SubscriptionRequest = components['schemas']['SubscriptionRequest'];

export function registerSubscriptions(program: Command): void {
  const subscriptions = program
    .command('subscriptions')
    .alias('subs')
    .description('list, create, update, revalidate, show, pause, resume and delete subscriptions');

  subscriptions
    .command('list')
    .description('your subscriptions (an admin: --owner CLIENT or --owner "*")')
    .option('--owner <client>', 'admin only: another client, or * for every client')
    .action(async (options: { owner?: string }, command: Command) => {
      const context = await contextOf(command);
      const items = await listAll(context, options.owner);
      if (context.json) return printJson(items);
      if (items.length === 0) return void process.stdout.write('No subscriptions.\n');
      printTable(
        ['id', 'delivery', 'status', 'types', 'source', 'sink', ...(options.owner ? ['owner'] : [])],
        items.map((s) => [
          s.id,
          s.delivery ?? 'push',
          statusText(s),
          (s.types ?? []).join(', '),
          s.source,
          s.sink,
          ...(options.owner ? [s.owner] : []),
        ]),
      );
    });

  subscriptionOptions(
    subscriptions.command('create').description('create a push subscription (--sink) or a pull subscription (--pull)'),
    { forCreate: true },
  ).action(async (options: SubscriptionOptions, command: Command) => {
    const context = await contextOf(command);
    const body = await subscriptionBody(options, { forCreate: true });
    const created = await context.client.run('POST /subscriptions', (api) =>
      api.POST('/subscriptions', { body: body as SubscriptionRequest }),
    );
    reportOutcome(context, created, `Created ${created.delivery ?? 'push'} subscription`);
  });

  subscriptionOptions(
    subscriptions
      .command('update')
      .description('change a subscription: only the members given (a JSON merge patch); a new sink is validated again')
      .argument('<id>'),
    { forCreate: false },
  ).action(async (id: string, options: SubscriptionOptions, command: Command) => {
    const context = await contextOf(command);
    const patch = await subscriptionBody(options, { forCreate: false });
    if (Object.keys(patch).length === 0)
      throw new CliError('nothing to change: give an option such as --sink, --type or --body', exitCodes.usage);
    const updated = await context.client.run(`update ${id}`, (api) =>
      api.PATCH('/subscriptions/{id}', {
        params: { path: { id } },
        body: patch as SubscriptionRequest,
        headers: { 'content-type': 'application/merge-patch+json' },
      }),
    );
    reportOutcome(context, updated, 'Updated subscription');
  });

  subscriptions
    .command('revalidate')
    .description('send the validation request to the sink again (a pending or rejected push subscription)')
    .argument('<id>')
    .action(async (id: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const validated = await context.client.run(`revalidate ${id}`, (api) =>
        api.POST('/subscriptions/{id}/revalidate', { params: { path: { id } } }),
      );
      reportOutcome(context, validated, 'Validated subscription');
    });

  subscriptions
    .command('show')
    .description('one subscription')
    .argument('<id>')
    .action(async (id: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const subscription = await context.client.run(`GET /subscriptions/${id}`, (api) =>
        api.GET('/subscriptions/{id}', { params: { path: { id } } }),
      );
      if (context.json) printJson(subscription);
      else printRecord(subscription);
    });

  subscriptions
    .command('pause')
    .description('stop deliveries for a while; events are kept as dead letters and sent again on resume')
    .argument('<id>')
    .action(async (id: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const answer = await context.client.request('POST', `/subscriptions/${encodeURIComponent(id)}/pause`, {
        body: {},
      });
      if (answer.status === 404 || answer.status === 405) await routeMissing(context, id, 'pausing a subscription');
      if (answer.status >= 300) throw problemError(answer, `pause ${id}`);
      if (context.json) printJson(answer.json);
      else process.stdout.write(`Paused ${id}.\n`);
    });

  subscriptions
    .command('resume')
    .description('make a suspended (or paused) subscription active; what was held goes out again')
    .argument('<id>')
    .action(async (id: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const result = await context.client.run(`resume ${id}`, (api) =>
        api.POST('/subscriptions/{id}/resume', { params: { path: { id } } }),
      );
      if (context.json) return printJson(result);
      process.stdout.write(
        `Resumed ${id}: ${result.status ?? 'active'}; ${result.redriven ?? 0} held deliveries sent again${result.withheld?.length ? `, ${result.withheld.length} withheld` : ''}.\n`,
      );
    });

  subscriptions
    .command('delete')
    .description('delete a subscription')
    .argument('<id>')
    .action(async (id: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const answer = await context.client.run(`delete ${id}`, (api) =>
        api.DELETE('/subscriptions/{id}', { params: { path: { id } } }),
      );
      if (context.json) printJson(answer);
      else process.stdout.write(`Deleted ${id}.\n`);
    });
}

async function listAll(context: Context, owner: string | undefined): Promise<SubscriptionView[]> {
  return context.client.listAll<SubscriptionView>('/subscriptions', 'subscriptions', { owner, limit: 100 });
}

export function statusText(subscription: SubscriptionView): string {
  const status = subscription.status ?? '?';
  return subscription.suspendedfor ? `${status} (${subscription.suspendedfor})` : status;
}

/**
 * A 404 on a route the CLI knows: either the subscription is unknown (the gateway says so for
 * `GET /subscriptions/{id}` too), or this gateway does not have the route yet.
 */
export async function routeMissing(context: Context, id: string, what: string): Promise<never> {
  const subscription = await context.client.api
    .GET('/subscriptions/{id}', { params: { path: { id } } })
    .catch((error: unknown) => (error instanceof KoerierProblem ? error : undefined));
  if (subscription instanceof KoerierProblem && subscription.status === 404)
    throw new CliError(`no subscription ${id}`, exitCodes.notFound);
  throw new CliError(`${what} is not yet available on this gateway (${context.client.gatewayUrl})`, exitCodes.notFound);
}
