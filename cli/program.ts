/**
 * The `koerier` program (cli/main.ts runs it): `koerier`, the command line for partners and operators: log in, publish, manage subscriptions,
 * pull, listen for deliveries, look at deliveries and dead letters. Argument parsing, help and
 * usage errors are commander's; every command is a thin layer over cli/api-client.ts, the CLI's view of the one generated API client (client/).
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { registerCompletion } from './commands/completion.js';
import { registerContracts } from './commands/contracts.js';
import { registerDeliveries } from './commands/deliveries.js';
import { registerDoctor } from './commands/doctor.js';
import { registerEvents } from './commands/events.js';
import { registerFilter } from './commands/filter.js';
import { registerListen } from './commands/listen.js';
import { registerLoad } from './commands/load.js';
import { registerLogin } from './commands/login.js';
import { registerPayload } from './commands/payload.js';
import { registerPull } from './commands/pull.js';
import { registerReplay } from './commands/replay.js';
import { registerSend } from './commands/send.js';
import { registerSubscriptions } from './commands/subscriptions.js';
import { registerZgw } from './commands/zgw.js';
import { CliError, EXIT_CODES_HELP, exitCodes } from './exit-codes.js';
import { integer } from './commands/send.js';

export function buildProgram(): Command {
  const program = new Command('koerier')
    .description('The Koerier CloudEvents gateway from the command line.')
    .version(
      (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version,
    )
    .option('--url <url>', 'the gateway URL (env KOERIER_URL)')
    .option('--token-url <url>', 'the OAuth2 token URL (env KOERIER_TOKEN_URL; found from the gateway when not given)')
    .option('--client-id <id>', 'the OAuth2 client (env KOERIER_CLIENT_ID)')
    .option('--client-secret-file <file>', 'file holding the client secret, - for stdin (env KOERIER_CLIENT_SECRET)')
    .option(
      '--scope <scopes>',
      'ask the token endpoint for these scopes only, space-separated (env KOERIER_SCOPE; default: all the client has)',
    )
    .option('--profile <name>', 'a named profile from koerier login (env KOERIER_PROFILE; default "default")')
    .option('--json', 'JSON on stdout instead of tables, for scripts')
    .addOption(
      new Option('--retries <n>', 'retries of a request on 5xx, 429 or a network failure')
        .argParser(integer(0, 20))
        .default(5),
    )
    .addHelpText(
      'after',
      `\nSettings: a flag wins over the environment, which wins over the profile.\n${EXIT_CODES_HELP}`,
    )
    .showHelpAfterError('(koerier --help lists the commands; koerier <command> --help its options)')
    .exitOverride();
  registerLogin(program);
  registerSend(program);
  registerSubscriptions(program);
  registerPull(program);
  registerListen(program);
  registerDeliveries(program);
  registerPayload(program);
  registerEvents(program);
  registerReplay(program);
  registerFilter(program);
  registerContracts(program);
  registerDoctor(program);
  registerLoad(program);
  registerZgw(program);
  registerCompletion(program);
  // Every subcommand reports usage errors through the same override, so they exit 2.
  const override = (command: Command) => {
    command.exitOverride();
    command.commands.forEach(override);
  };
  override(program);
  return program;
}

export async function run(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : exitCodes.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version are exits too, with code 0; anything else commander refused is a usage error.
      return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
    }
    if (error instanceof CliError) {
      process.stderr.write(`koerier: ${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof Error && error.name === 'ExitPromptError') return 130;
    process.stderr.write(`koerier: unexpected failure: ${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.refused;
  }
}
