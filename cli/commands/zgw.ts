/**
 * `koerier zgw import --from <Open Notificaties URL> [--dry-run]` (issue 34, "Moving over"): reads
 * the kanalen and abonnementen of an Open Notificaties and creates them on Koerier's ZGW
 * Notificaties API (`/zgw/api/v1`): kanalen first (an abonnement names them), then abonnementen.
 * What Koerier already has (a kanaal of the same `naam`, an abonnement of the same `callbackUrl`) is
 * skipped and said so, so a second run creates nothing.
 *
 * Open Notificaties never answers an abonnement's `auth` (write-only), and Koerier checks every new
 * abonnement with it (the callback must refuse a call without it and take one with it): the
 * operator gives the `auth` per `callbackUrl` in `--auth-file`. An abonnement without one is not
 * created, and counts as a failure of the run.
 */
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { CliError, exitCodes } from '../exit-codes.js';
import { printJson, terminalSafe } from '../output.js';
import { gatewayUrl, resolveSettings, type GlobalOptions } from '../settings.js';
import { describeZgwRefusal, secretFrom, ZgwClient } from './zgw-client.js';

interface ImportOptions {
  readonly from: string;
  readonly fromClientId?: string;
  readonly fromSecretFile?: string;
  readonly zgwClientId?: string;
  readonly zgwSecretFile?: string;
  readonly to?: string;
  readonly authFile?: string;
  readonly dryRun?: boolean;
  readonly only?: 'kanalen' | 'abonnementen';
  readonly callback?: string[];
}

/** Which part of the source to import: `--only`, `--callback` (a move one consumer at a time). */
export interface ImportScope {
  readonly kanalen: boolean;
  readonly abonnementen: boolean;
  /** Only the abonnementen with these callbackUrls; undefined: all. */
  readonly callbacks?: ReadonlySet<string>;
}

/** One line of the plan: what becomes of one kanaal or abonnement of the source. */
export interface ImportStep {
  readonly kind: 'kanaal' | 'abonnement';
  /** The kanaal's `naam`, the abonnement's `callbackUrl`. */
  readonly key: string;
  outcome: 'create' | 'exists' | 'no-auth' | 'created' | 'failed';
  /** What is (or would be) sent; an abonnement's `auth` is never printed. */
  readonly body?: Record<string, unknown>;
  url?: string;
  reason?: string;
}

export function registerZgw(program: Command): void {
  const zgw = program.command('zgw').description('the ZGW Notificaties API: moving over from Open Notificaties');
  zgw
    .command('import')
    .description("create an Open Notificaties' kanalen and abonnementen on Koerier's /zgw/api/v1")
    .requiredOption('--from <url>', 'the Open Notificaties API base URL, e.g. https://notificaties.example/api/v1')
    .option('--from-client-id <id>', 'a ZGW client of Open Notificaties that may read (env KOERIER_ZGW_FROM_CLIENT_ID)')
    .option('--from-secret-file <file>', "that client's secret, - for stdin (env KOERIER_ZGW_FROM_SECRET)")
    .option('--zgw-client-id <id>', "Koerier's ZGW client, with both scopes (env KOERIER_ZGW_CLIENT_ID)")
    .option('--zgw-secret-file <file>', "that client's secret, - for stdin (env KOERIER_ZGW_SECRET)")
    .option('--to <url>', "Koerier's ZGW base URL (default: the gateway URL with /v1 replaced by /zgw/api/v1)")
    .option('--auth-file <file>', 'JSON object: callbackUrl -> the Authorization value of its abonnement')
    .option('--dry-run', 'print what would be created and change nothing')
    .addOption(
      new Option('--only <part>', 'import only the kanalen or only the abonnementen').choices([
        'kanalen',
        'abonnementen',
      ]),
    )
    .option('--callback <url...>', 'import only the abonnementen with these callbackUrls')
    .addHelpText(
      'after',
      '\nOpen Notificaties never shows an abonnement\'s auth: give it per callbackUrl in --auth-file, e.g.\n  {"https://zac.example/api/callbacks": "Token abc..."}\nExit code 1 when any creation failed or an abonnement has no auth (the reasons are printed).',
    )
    .action(async (options: ImportOptions, command: Command) => {
      const settings = await resolveSettings(command.optsWithGlobals<GlobalOptions>());
      const source = new ZgwClient(
        options.from,
        {
          clientId: required(options.fromClientId, 'KOERIER_ZGW_FROM_CLIENT_ID', '--from-client-id'),
          secret: await secretFrom(options.fromSecretFile, 'KOERIER_ZGW_FROM_SECRET', 'Open Notificaties client'),
        },
        'Open Notificaties',
      );
      const target = new ZgwClient(
        options.to ?? gatewayUrl(settings).replace(/\/v\d+$/, '') + '/zgw/api/v1',
        {
          clientId: required(options.zgwClientId, 'KOERIER_ZGW_CLIENT_ID', '--zgw-client-id'),
          secret: await secretFrom(options.zgwSecretFile, 'KOERIER_ZGW_SECRET', 'Koerier ZGW client'),
        },
        'Koerier',
      );
      const auths = options.authFile === undefined ? {} : await authsFrom(options.authFile);
      const steps = await plan(source, target, auths, {
        kanalen: options.only !== 'abonnementen' && options.callback === undefined,
        abonnementen: options.only !== 'kanalen',
        ...(options.callback ? { callbacks: new Set(options.callback) } : {}),
      });
      if (!options.dryRun) await carryOut(target, steps, auths);
      report(steps, options.dryRun === true, settings.json);
      if (steps.some((step) => step.outcome === 'failed' || (!options.dryRun && step.outcome === 'no-auth')))
        process.exitCode = exitCodes.refused;
    });
}

function required(value: string | undefined, envName: string, flag: string): string {
  const given = value ?? (process.env[envName] || undefined);
  if (given === undefined) throw new CliError(`no client id: give ${flag} or set ${envName}`, exitCodes.usage);
  return given;
}

async function authsFrom(file: string): Promise<Record<string, string>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new CliError(`cannot read the auth file ${file}: ${(error as Error).message}`, exitCodes.usage);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new CliError(`the auth file ${file} must be a JSON object of callbackUrl -> auth`, exitCodes.usage);
  return Object.fromEntries(Object.entries(parsed).filter(([, value]) => typeof value === 'string'));
}

/** Reads both sides (nothing is changed) and decides per kanaal and abonnement. */
export async function plan(
  source: ZgwClient,
  target: ZgwClient,
  auths: Readonly<Record<string, string>>,
  scope: ImportScope,
): Promise<ImportStep[]> {
  const kanalen = scope.kanalen ? await source.list('/kanaal') : [];
  const abonnementen = (scope.abonnementen ? await source.list('/abonnement') : []).filter(
    (abonnement) => scope.callbacks === undefined || scope.callbacks.has(String(abonnement['callbackUrl'])),
  );
  const haveKanalen = new Set((await target.list('/kanaal')).map((kanaal) => String(kanaal['naam'])));
  const haveCallbacks = new Set((await target.list('/abonnement')).map((abo) => String(abo['callbackUrl'])));
  const steps: ImportStep[] = [];
  for (const kanaal of kanalen) {
    const naam = String(kanaal['naam']);
    const link = kanaal['documentatieLink'];
    const body = {
      naam,
      // Open Notificaties answers a kanaal without one as "": not a URI Koerier would take.
      ...(typeof link === 'string' && link !== '' ? { documentatieLink: link } : {}),
      filters: Array.isArray(kanaal['filters']) ? kanaal['filters'] : [],
    };
    steps.push({ kind: 'kanaal', key: naam, outcome: haveKanalen.has(naam) ? 'exists' : 'create', body });
  }
  for (const abonnement of abonnementen) {
    const callbackUrl = String(abonnement['callbackUrl']);
    const auth = auths[callbackUrl];
    const body: Record<string, unknown> = {
      callbackUrl,
      kanalen: Array.isArray(abonnement['kanalen']) ? abonnement['kanalen'] : [],
      ...(abonnement['sendCloudevents'] === true ? { sendCloudevents: true } : {}),
      ...(Array.isArray(abonnement['cloudeventFilters']) && abonnement['cloudeventFilters'].length > 0
        ? { cloudeventFilters: abonnement['cloudeventFilters'] }
        : {}),
    };
    const outcome = haveCallbacks.has(callbackUrl) ? 'exists' : auth === undefined ? 'no-auth' : 'create';
    steps.push({ kind: 'abonnement', key: callbackUrl, outcome, body });
  }
  return steps;
}

/** Creates what the plan says, kanalen before abonnementen (the plan's order); `auth` only now joins the body. */
async function carryOut(target: ZgwClient, steps: ImportStep[], auths: Readonly<Record<string, string>>) {
  for (const step of steps) {
    if (step.outcome !== 'create') continue;
    const body = step.kind === 'abonnement' ? { ...step.body, auth: auths[step.key] ?? '' } : step.body;
    const answer = await target.create(step.kind === 'kanaal' ? '/kanaal' : '/abonnement', body);
    if (answer.status === 201) {
      step.outcome = 'created';
      step.url = String((answer.body as { url?: unknown } | undefined)?.url ?? '');
    } else {
      step.outcome = 'failed';
      step.reason = describeZgwRefusal(answer);
    }
  }
}

function report(steps: readonly ImportStep[], dryRun: boolean, json: boolean): void {
  if (json) return printJson({ dryRun, steps });
  const lines = steps.map((step) => `${step.kind} ${terminalSafe(step.key)}: ${terminalSafe(describeStep(step))}`);
  const count = (outcome: ImportStep['outcome']) => steps.filter((step) => step.outcome === outcome).length;
  const summary = dryRun
    ? `Dry run, nothing changed: would create ${count('create')}, ${count('exists')} already on Koerier, ${count('no-auth')} without auth.`
    : `Created ${count('created')}, ${count('exists')} already on Koerier, ${count('failed')} failed, ${count('no-auth')} without auth.`;
  process.stdout.write(`${[...lines, summary].join('\n')}\n`);
}

function describeStep(step: ImportStep): string {
  const what =
    step.kind === 'kanaal'
      ? `filters ${JSON.stringify(step.body?.['filters'] ?? [])}`
      : `kanalen ${JSON.stringify(step.body?.['kanalen'] ?? [])}`;
  switch (step.outcome) {
    case 'create':
      return `would create (${what})`;
    case 'exists':
      return step.kind === 'kanaal'
        ? 'skipped: Koerier has a kanaal of this naam'
        : 'skipped: Koerier has an abonnement with this callbackUrl';
    case 'no-auth':
      return 'not created: no auth for this callbackUrl in --auth-file (Open Notificaties never shows it)';
    case 'created':
      return `created ${step.url ?? ''} (${what})`;
    case 'failed':
      return `FAILED: ${step.reason ?? ''}`;
  }
}
