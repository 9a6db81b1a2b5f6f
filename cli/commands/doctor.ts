/**
 * `koerier doctor` (and `npm run doctor`): after `cdk deploy`, one command that says whether the
 * deployment works, end to end, with no webhook receiver reachable from AWS: it publishes test
 * events and takes them back through a temporary pull subscription (cli/commands/doctor-checks.ts),
 * prints a table of steps with their result and latency (or `--json`), deletes what it made (also
 * after a failure or Ctrl-C) and exits 1 when any step failed.
 *
 * The clients. Publishing needs `events:publish` and a publish grant covering the run's source;
 * subscribing and pulling need `subscriptions:manage`, `events:consume` and an entitlement to the
 * test type; and a pull subscription can only be received from by the client that made it. So
 * either one client does everything (the usual way in AWS: one `koerier-doctor` client), or the
 * publisher is the command's usual client and the consumer a second one (`--consumer-*` or
 * `KOERIER_CONSUMER_*`): on the laptop `dev-publisher` publishes and `dev-subscriber` consumes,
 * because `dev-publisher`'s grant of every source leaves no grant for anyone else.
 */
import Table from 'cli-table3';
import { Option, type Command } from 'commander';
import { KoerierClient } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { printJson, type ProgressChoice } from '../output.js';
import { gatewayUrl, resolveSettings, type GlobalOptions, type Settings } from '../settings.js';
import { cachedTokens } from '../tokens.js';
import {
  DOCTOR_SOURCE,
  DOCTOR_TYPE,
  runDoctor,
  type DoctorClient,
  type DoctorOutcome,
  type StepReport,
} from './doctor-checks.js';
import { typePrefixOf } from './doctor-meanings.js';
import { integer } from './send.js';

interface DoctorOptions {
  readonly consumerProfile?: string;
  readonly consumerClientId?: string;
  readonly consumerClientSecretFile?: string;
  readonly consumerScope?: string;
  readonly source: string;
  readonly type: string;
  readonly timeout: number;
  readonly progress: ProgressChoice;
}

/** The exit status of a run stopped by Ctrl-C (128 + SIGINT), as a shell reports it. */
const INTERRUPTED = 130;

const HELP = `
What it does, in order: reads the API description, GET /health (the laptop host serves it; a stack
in AWS has none, so the step is skipped there), gets a token per client, checks that calls without
a token get 401, creates a temporary pull subscription to the test type from this run's own source,
publishes one event (structured), a batch of ten, one in binary mode and one of 1 MiB (claim check),
repeats one publication with the same Idempotency-Key (the stored answer), sends a broken event
(the 400 problem), receives everything through the pull API and compares it with what was sent,
fetches the 1 MiB event's data by its dataref (bytes, digest, size), acknowledges, and deletes the
subscription (with its queues) — also when a step failed, and on Ctrl-C.

The clients it runs as (docs/DEPLOYING.md, "After every deploy: koerier doctor"):
  publisher  the usual client (--client-id, KOERIER_CLIENT_ID, the profile): scope events:publish,
             and a publish grant covering --source (default ${DOCTOR_SOURCE}; each run
             publishes under <source>:<run>)
  consumer   the same client, or a second one given with --consumer-profile, --consumer-client-id
             (KOERIER_CONSUMER_PROFILE, KOERIER_CONSUMER_CLIENT_ID, KOERIER_CONSUMER_CLIENT_SECRET,
             KOERIER_CONSUMER_SCOPE): scopes subscriptions:manage and events:consume, and an
             entitlement {"typePrefix": "${typePrefixOf(DOCTOR_TYPE)}"}
  In AWS: one client koerier-doctor with all three scopes at the identity provider, and as a
  partner (PUT /clients/koerier-doctor, scope admin):
    {"publishGrants": ["${DOCTOR_SOURCE}"], "entitlements": [{"typePrefix": "${typePrefixOf(DOCTOR_TYPE)}"}]}
  On the laptop (npm start): dev-publisher publishes, dev-subscriber consumes:
    KOERIER_CLIENT_ID=dev-publisher KOERIER_CONSUMER_CLIENT_ID=dev-subscriber koerier doctor
    (with KOERIER_CLIENT_SECRET and KOERIER_CONSUMER_CLIENT_SECRET from koerier.local.json)

Every failed row says what it got and what that usually means (identity provider settings, scopes,
publish grants, entitlements, KMS, quotas). Exit status 0 when every step passed (or was skipped
as not applicable), 1 when any failed, 2 for bad arguments or missing settings, 130 on Ctrl-C.`;

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'check a deployed gateway end to end (token, publish, pull, claim check, idempotency, refusals) and clean up after',
    )
    .option(
      '--consumer-profile <name>',
      'the consuming client is this login profile (env KOERIER_CONSUMER_PROFILE; default: the publisher consumes too)',
    )
    .option('--consumer-client-id <id>', 'the consuming client (env KOERIER_CONSUMER_CLIENT_ID)')
    .option(
      '--consumer-client-secret-file <file>',
      "file holding the consumer's secret, - for stdin (env KOERIER_CONSUMER_CLIENT_SECRET)",
    )
    .option('--consumer-scope <scopes>', 'ask for these scopes only for the consumer (env KOERIER_CONSUMER_SCOPE)')
    .option(
      '--source <prefix>',
      'the publish grant the test events go under; each run adds its own segment',
      DOCTOR_SOURCE,
    )
    .option('--type <type>', 'the test event type', DOCTOR_TYPE)
    .addOption(
      new Option('--timeout <seconds>', 'how long to wait for the events to come back (5-600)')
        .argParser(integer(5, 600))
        .default(60),
    )
    .option('--progress', 'a line on stderr as each step ends (default: on a terminal, without --json)')
    .option('--no-progress', 'no progress lines')
    .addHelpText('after', HELP)
    .action(async (options: DoctorOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const settings = await resolveSettings(globals);
      const url = gatewayUrl(settings);
      if (!settings.clientId)
        throw new CliError('no client: give --client-id, set KOERIER_CLIENT_ID, or run koerier login', exitCodes.usage);
      const consumerSettings = await consumerSettingsOf(options, globals, settings, url);
      const publisher = doctorClient(settings, url);
      const consumer = consumerSettings ? doctorClient(consumerSettings, url) : publisher;

      const stop = new AbortController();
      let interrupts = 0;
      const onSignal = () => {
        interrupts++;
        if (interrupts === 1) {
          process.stderr.write('koerier doctor: interrupted; deleting what this run made (Ctrl-C again to leave it)\n');
          stop.abort(new CliError('interrupted', exitCodes.ok));
        } else {
          process.stderr.write(
            'koerier doctor: left without cleaning up; koerier subscriptions list shows what is left\n',
          );
          process.exit(INTERRUPTED);
        }
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const showProgress = options.progress ?? (!settings.json && process.stderr.isTTY === true);
      const started = performance.now();
      let outcome: DoctorOutcome;
      try {
        outcome = await runDoctor({
          gatewayUrl: url,
          publisher,
          consumer,
          anonymous: new KoerierClient(url, undefined, settings.retries),
          type: options.type,
          sourceBase: options.source,
          receiveTimeoutMs: options.timeout * 1000,
          signal: stop.signal,
          ...(showProgress ? { onStep: progressLine } : {}),
        });
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      const durationMs = Math.round(performance.now() - started);
      const failed = outcome.steps.filter((step) => step.result === 'failed');
      const ok = failed.length === 0 && !outcome.interrupted;
      if (settings.json) {
        printJson({
          ok,
          gateway: url,
          run: outcome.run,
          source: outcome.source,
          type: options.type,
          publisher: publisher.clientId,
          consumer: consumer.clientId,
          durationMs,
          interrupted: outcome.interrupted,
          steps: outcome.steps,
        });
      } else {
        printReport(outcome, { url, publisher: publisher.clientId, consumer: consumer.clientId, durationMs });
      }
      process.exitCode = outcome.interrupted ? INTERRUPTED : ok ? exitCodes.ok : exitCodes.refused;
    });
}

function doctorClient(settings: Settings, url: string): DoctorClient {
  const tokens = cachedTokens(settings);
  return { clientId: settings.clientId!, tokens, api: new KoerierClient(url, tokens, settings.retries) };
}

/**
 * The consumer's settings when a second client consumes, from the --consumer-* flags and the
 * KOERIER_CONSUMER_* variables as the usual settings come from theirs (a flag wins over the
 * environment, which wins over the profile); undefined when none is given: the publisher consumes.
 */
async function consumerSettingsOf(
  options: DoctorOptions,
  globals: GlobalOptions,
  settings: Settings,
  url: string,
): Promise<Settings | undefined> {
  const env = process.env;
  const fromEnv = {
    KOERIER_PROFILE: env['KOERIER_CONSUMER_PROFILE'],
    KOERIER_CLIENT_ID: env['KOERIER_CONSUMER_CLIENT_ID'],
    KOERIER_CLIENT_SECRET: env['KOERIER_CONSUMER_CLIENT_SECRET'],
    KOERIER_SCOPE: env['KOERIER_CONSUMER_SCOPE'],
  };
  const flags = [
    options.consumerProfile,
    options.consumerClientId,
    options.consumerClientSecretFile,
    options.consumerScope,
  ];
  if (![...flags, ...Object.values(fromEnv)].some(Boolean)) return undefined;
  if (options.consumerClientSecretFile === '-' && globals.clientSecretFile === '-') {
    throw new CliError(
      'only one of --client-secret-file and --consumer-client-secret-file can read stdin',
      exitCodes.usage,
    );
  }
  const consumerEnv: NodeJS.ProcessEnv = {
    ...definedOnly(fromEnv),
    ...definedOnly({ XDG_CONFIG_HOME: env['XDG_CONFIG_HOME'] }),
  };
  const consumer = await resolveSettings(
    definedOnly({
      url,
      tokenUrl: settings.tokenUrl,
      clientId: options.consumerClientId,
      clientSecretFile: options.consumerClientSecretFile,
      profile: options.consumerProfile,
      scope: options.consumerScope,
      json: settings.json,
      retries: settings.retries,
    }),
    consumerEnv,
  );
  if (!consumer.clientId) {
    throw new CliError(
      'no consuming client: give --consumer-client-id, set KOERIER_CONSUMER_CLIENT_ID, or name a --consumer-profile that has one',
      exitCodes.usage,
    );
  }
  return consumer;
}

function definedOnly<T extends Record<string, unknown>>(record: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined && value !== '')) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

function resultText(report: StepReport): string {
  return report.result === 'failed' ? 'FAILED' : report.result;
}

function latencyText(report: StepReport): string {
  return report.latencyMs === null ? '' : `${report.latencyMs.toLocaleString('en-US')} ms`;
}

function progressLine(report: StepReport): void {
  process.stderr.write(
    `doctor: ${resultText(report).padEnd(7)} ${report.step}${report.latencyMs === null ? '' : ` (${latencyText(report)})`}\n`,
  );
}

function printReport(
  outcome: DoctorOutcome,
  run: { url: string; publisher: string; consumer: string; durationMs: number },
): void {
  const width = Math.max(100, process.stdout.columns || Number(process.env['COLUMNS']) || 140);
  const fixed = [30, 9, 10];
  const detailWidth = width - fixed.reduce((sum, column) => sum + column, 0) - 5;
  const table = new Table({
    head: ['step', 'result', 'latency', 'detail'],
    colWidths: [...fixed, detailWidth],
    colAligns: ['left', 'left', 'right', 'left'],
    wordWrap: true,
    style: { head: [], border: [] },
  });
  for (const report of outcome.steps) {
    const detail =
      report.result === 'failed' ? `got: ${report.got ?? ''}\nusually: ${report.meaning ?? ''}` : report.detail;
    table.push([report.step, resultText(report), latencyText(report), detail]);
  }
  const failed = outcome.steps.filter((step) => step.result === 'failed').length;
  const passed = outcome.steps.filter((step) => step.result === 'ok').length;
  const skipped = outcome.steps.length - failed - passed;
  const who = run.publisher === run.consumer ? run.publisher : `${run.publisher} publishing, ${run.consumer} consuming`;
  const seconds = (run.durationMs / 1000).toFixed(1);
  const summary = outcome.interrupted
    ? `Interrupted after ${seconds} s; ${failed ? `${failed} step${failed === 1 ? '' : 's'} failed before that; ` : ''}see the clean-up row.`
    : failed
      ? `${failed} of ${outcome.steps.length} steps FAILED against ${run.url} (${who}, run ${outcome.run}, ${seconds} s).`
      : `Koerier at ${run.url} works: ${passed} steps passed${skipped ? `, ${skipped} skipped` : ''} in ${seconds} s (${who}, run ${outcome.run}).`;
  process.stdout.write(`${table.toString()}\n${summary}\n`);
}
