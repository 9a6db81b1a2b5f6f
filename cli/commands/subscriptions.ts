/**
 * `koerier subscriptions …`: list, create (push or pull, with filters), show, pause and resume,
 * delete — the subscriptions API (docs/SUBSCRIPTIONS.md) and its resume (docs/OPERATIONS.md).
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { KoerierProblem, problemError, type components } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { contextOf, printJson, printRecord, printTable, type Context } from '../output.js';
import { integer } from './send.js';

/** A subscription as the API answers it (the generated type of the API description). */
export type SubscriptionView = components['schemas']['Subscription'];
type SubscriptionRequest = components['schemas']['SubscriptionRequest'];

interface CreateOptions {
  readonly pull?: boolean;
  readonly sink?: string;
  readonly source?: string;
  readonly type: string[];
  readonly filter: unknown[];
  readonly contentMode?: string;
  readonly credentialFile?: string;
  readonly sinkTokenUrl?: string;
  readonly sinkClientId?: string;
  readonly sinkClientSecretFile?: string;
  readonly validation?: string;
  readonly sign?: boolean;
  readonly maxDeliveryCount?: number;
  readonly retentionSeconds?: number;
  readonly body?: string;
}

export function registerSubscriptions(program: Command): void {
  const subscriptions = program
    .command('subscriptions')
    .alias('subs')
    .description('list, create, show, pause, resume and delete subscriptions');

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

  subscriptions
    .command('create')
    .description('create a push subscription (--sink) or a pull subscription (--pull)')
    .option('--pull', 'a pull subscription: no sink, active at once (koerier pull receives)')
    .option('--sink <url>', 'push: the webhook URL (https; http only to loopback on a laptop)')
    .option('--source <source>', 'only events from this source')
    .option('-t, --type <type>', 'an event type (repeat for several)', collect, [])
    .option(
      '-f, --filter <filter>',
      'a filter, JSON ({"prefix":{"subject":"leerling/"}}) or dialect:attribute=value (prefix:subject=leerling/); repeatable',
      collectFilter,
      [],
    )
    .addOption(
      new Option('--content-mode <mode>', 'push: how events are delivered').choices(['structured', 'binary', 'batch']),
    )
    .option('--credential-file <file>', 'push: the sinkcredential as JSON (CLIENTCREDENTIALS or ACCESSTOKEN)')
    .option('--sink-token-url <url>', "push: the subscriber's OAuth2 token URL Koerier gets delivery tokens from")
    .option('--sink-client-id <id>', 'push: the client id Koerier uses there')
    .option('--sink-client-secret-file <file>', 'push: file with that client secret (else KOERIER_SINK_CLIENT_SECRET)')
    .addOption(
      new Option('--validation <how>', 'push: the consent handshake, or agreed out of band').choices([
        'handshake',
        'agreed',
      ]),
    )
    .option('--sign', 'push: sign every delivery (HTTP Message Signatures)')
    .option('--max-delivery-count <n>', 'pull: deliveries before an event becomes a dead letter', integer(1, 1000))
    .option('--retention-seconds <n>', 'pull: how long an unsettled event is kept', integer(60, 1_209_600))
    .option('--body <file>', 'the whole request body as JSON; the options above are laid over it')
    .action(async (options: CreateOptions, command: Command) => {
      const context = await contextOf(command);
      const body = await createBody(options);
      const created = await context.client.run('POST /subscriptions', (api) =>
        api.POST('/subscriptions', { body: body as SubscriptionRequest }),
      );
      if (context.json) return printJson(created);
      process.stdout.write(
        `Created ${created.delivery ?? 'push'} subscription ${created.id}: ${statusText(created)}.\n`,
      );
      for (const warning of created.warnings ?? [])
        process.stdout.write(`warning: ${warning.message ?? JSON.stringify(warning)}\n`);
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

async function createBody(options: CreateOptions): Promise<Record<string, unknown>> {
  let body: Record<string, unknown> = {};
  if (options.body) {
    try {
      body = JSON.parse(await readFile(options.body, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new CliError(`cannot read ${options.body}: ${(error as Error).message}`, exitCodes.usage);
    }
  }
  const set = (name: string, value: unknown) => {
    if (value !== undefined) body[name] = value;
  };
  if (options.pull) set('delivery', 'pull');
  set('sink', options.sink);
  set('source', options.source);
  if (options.type.length > 0) set('types', options.type);
  if (options.filter.length > 0) set('filters', options.filter);
  set('contentmode', options.contentMode);
  set('validation', options.validation);
  if (options.sign) set('signdeliveries', true);
  set('maxdeliverycount', options.maxDeliveryCount);
  set('retentionseconds', options.retentionSeconds);
  if (options.credentialFile) {
    try {
      set('sinkcredential', JSON.parse(await readFile(options.credentialFile, 'utf8')));
    } catch (error) {
      throw new CliError(`cannot read ${options.credentialFile}: ${(error as Error).message}`, exitCodes.usage);
    }
  } else if (options.sinkTokenUrl || options.sinkClientId) {
    const secret = options.sinkClientSecretFile
      ? (await readFile(options.sinkClientSecretFile, 'utf8')).trim()
      : process.env['KOERIER_SINK_CLIENT_SECRET'];
    if (!options.sinkTokenUrl || !options.sinkClientId || !secret) {
      throw new CliError(
        'a sink credential needs --sink-token-url, --sink-client-id and a secret (--sink-client-secret-file or KOERIER_SINK_CLIENT_SECRET)',
        exitCodes.usage,
      );
    }
    set('sinkcredential', {
      credentialtype: 'CLIENTCREDENTIALS',
      tokenurl: options.sinkTokenUrl,
      clientid: options.sinkClientId,
      clientsecret: secret,
    });
  }
  if (body['delivery'] !== 'pull' && body['sink'] === undefined)
    throw new CliError('give --sink URL for a push subscription, or --pull', exitCodes.usage);
  return body;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `{"prefix":{"subject":"a/"}}`, or the shorthand `prefix:subject=a/` for exact, prefix and suffix. */
export function collectFilter(value: string, previous: unknown[]): unknown[] {
  const trimmed = value.trim();
  if (trimmed.startsWith('{')) {
    try {
      return [...previous, JSON.parse(trimmed) as unknown];
    } catch {
      throw new InvalidArgumentError('not JSON');
    }
  }
  const match = /^(exact|prefix|suffix):([a-z0-9]+)=(.*)$/s.exec(trimmed);
  if (!match) throw new InvalidArgumentError('JSON, or exact|prefix|suffix:attribute=value');
  return [...previous, { [match[1]!]: { [match[2]!]: match[3]! } }];
}
