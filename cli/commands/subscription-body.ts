/**
 * The request body of `koerier subscriptions create` and `update` from their options: the same
 * options make a whole subscription (create) or a JSON merge patch of the members given (update).
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { CliError, exitCodes } from '../exit-codes.js';
import { integer } from './send.js';

export interface SubscriptionOptions {
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

/** The options create and update share; `--pull` only where a subscription is made. */
export function subscriptionOptions(command: Command, { forCreate }: { forCreate: boolean }): Command {
  if (forCreate) command.option('--pull', 'a pull subscription: no sink, active at once (koerier pull receives)');
  return command
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
    .option(
      '--body <file>',
      forCreate
        ? 'the whole request body as JSON; the options above are laid over it'
        : 'a JSON merge patch (RFC 7396: null removes a member); the options above are laid over it',
    );
}

/**
 * The body the options make: for create, a whole subscription (a push one needs a sink); for
 * update, a merge patch of only the members given.
 */
export async function subscriptionBody(
  options: SubscriptionOptions,
  { forCreate }: { forCreate: boolean },
): Promise<Record<string, unknown>> {
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
  if (forCreate && body['delivery'] !== 'pull' && body['sink'] === undefined)
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
