/**
 * `koerier pull <subscription>`: receive events of a pull subscription and settle them
 * (docs/PULL.md). Without `--exec` the events are printed and acknowledged; with `--exec CMD` each
 * event goes to CMD on stdin and is acknowledged only when CMD exits 0, released otherwise (it comes
 * back, with its delivery count raised, until the subscription's maxdeliverycount makes it a dead
 * letter). `--follow` keeps receiving until Ctrl-C.
 */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import type { components } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { contextOf, printTable, type Context } from '../output.js';
import { integer } from './send.js';

interface PullOptions {
  readonly maxEvents: number;
  readonly wait: number;
  readonly lock: number;
  readonly follow?: boolean;
  readonly exec?: string;
  readonly ack: boolean;
  readonly releaseDelay: number;
}

type Lock = components['schemas']['PullLock'];
type Settled = components['schemas']['SettleAnswer'];
/** The description types a received event as an object of unknown members; the CLI reads its attributes. */
type Received = { events: Record<string, unknown>[]; locks: Lock[] };

export function registerPull(program: Command): void {
  program
    .command('pull')
    .description(
      'receive events of a pull subscription and acknowledge them (with --exec: only when the command succeeds)',
    )
    .argument('<subscription>', 'the pull subscription id')
    .option('-n, --max-events <n>', 'events per receive (1-100)', integer(1, 100), 10)
    .option('--wait <seconds>', 'how long a receive waits for events (0-20)', integer(0, 20), 20)
    .option('--lock <seconds>', 'how long received events stay locked (10-43200)', integer(10, 43_200), 60)
    .option('--follow', 'keep receiving until Ctrl-C')
    .option(
      '--exec <command>',
      'run this shell command per event (event JSON on stdin; KOERIER_EVENT_* in its environment); acknowledge on exit 0, release otherwise',
    )
    .option(
      '--release-delay <seconds>',
      'with --exec: when a failed event may come back (0-43200)',
      integer(0, 43_200),
      0,
    )
    .option('--no-ack', 'without --exec: print only, leave the events locked until their lock runs out')
    .addHelpText(
      'after',
      '\nPrints each event (--json: one JSON line per event with its lock). Exit status 1 when a --exec command failed (without --follow).',
    )
    .action(async (subscription: string, options: PullOptions, command: Command) => {
      const context = await contextOf(command);
      const stop = new AbortController();
      const onSignal = () => stop.abort(new CliError('interrupted', exitCodes.ok));
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      let failures = 0;
      try {
        do {
          const received = await receive(context, subscription, options, stop.signal);
          if (received === undefined) break;
          failures += await handle(context, subscription, received, options);
        } while (options.follow && !stop.signal.aborted);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      if (failures > 0 && !options.follow) process.exitCode = exitCodes.refused;
    });
}

async function receive(
  context: Context,
  subscription: string,
  options: PullOptions,
  signal: AbortSignal,
): Promise<Received | undefined> {
  try {
    return (await context.client.run(`receive from ${subscription}`, (api) =>
      api.POST('/subscriptions/{id}/events/receive', {
        params: { path: { id: subscription } },
        body: { maxevents: options.maxEvents, waitseconds: options.wait, lockseconds: options.lock },
        signal,
      }),
    )) as Received;
  } catch (error) {
    // Ctrl-C during a long poll: the receive is abandoned; anything it locked comes back when the lock runs out.
    if (signal.aborted) return undefined;
    throw error;
  }
}

/** Handles one receive's events in order; answers how many --exec commands failed. */
async function handle(
  context: Context,
  subscription: string,
  received: Received,
  options: PullOptions,
): Promise<number> {
  const { events, locks } = received;
  if (events.length === 0) {
    if (!options.follow && !context.json) process.stdout.write('No events.\n');
    return 0;
  }
  const acknowledge: string[] = [];
  const release: string[] = [];
  if (!options.exec) {
    if (context.json)
      events.forEach((event, i) => process.stdout.write(`${JSON.stringify({ event, lock: locks[i] })}\n`));
    else
      printTable(
        ['id', 'type', 'source', 'subject', 'delivery'],
        events.map((event, i) => [
          event['id'],
          event['type'],
          event['source'],
          event['subject'],
          locks[i]?.deliverycount,
        ]),
      );
    if (options.ack) acknowledge.push(...locks.map((lock) => lock.locktoken));
  } else {
    for (const [i, event] of events.entries()) {
      const lock = locks[i]!;
      const code = await runCommand(options.exec, event, lock, context.json);
      (code === 0 ? acknowledge : release).push(lock.locktoken);
      const line = {
        id: event['id'],
        type: event['type'],
        source: event['source'],
        deliverycount: lock.deliverycount,
        exitCode: code,
        settled: code === 0 ? 'acknowledged' : 'released',
      };
      process.stdout.write(
        context.json
          ? `${JSON.stringify(line)}\n`
          : `${line.id} (${line.type}): command exited ${code}, ${line.settled}\n`,
      );
    }
  }
  const path = { path: { id: subscription } };
  if (acknowledge.length > 0)
    reportFailed(
      await context.client.run(`acknowledge on ${subscription}`, (api) =>
        api.POST('/subscriptions/{id}/events/acknowledge', { params: path, body: { locktokens: acknowledge } }),
      ),
      'acknowledge',
    );
  if (release.length > 0)
    reportFailed(
      await context.client.run(`release on ${subscription}`, (api) =>
        api.POST('/subscriptions/{id}/events/release', {
          params: path,
          body: { locktokens: release, delayseconds: options.releaseDelay },
        }),
      ),
      'release',
    );
  return release.length;
}

function reportFailed(answer: Settled, what: string): void {
  // A lock that ran out (LockLost) means the event comes back: said on stderr, not fatal.
  for (const failure of answer.failed)
    process.stderr.write(`koerier: could not ${what} an event: ${failure.error.code} ${failure.error.message}\n`);
}

/** `sh -c CMD` with the event on stdin; its output goes to the CLI's (to stderr under --json, which keeps stdout JSON). */
function runCommand(commandLine: string, event: Record<string, unknown>, lock: Lock, json: boolean): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(commandLine, {
      shell: true,
      stdio: ['pipe', json ? 2 : 'inherit', 'inherit'],
      env: {
        ...process.env,
        KOERIER_EVENT_ID: String(event['id'] ?? ''),
        KOERIER_EVENT_TYPE: String(event['type'] ?? ''),
        KOERIER_EVENT_SOURCE: String(event['source'] ?? ''),
        KOERIER_DELIVERY_COUNT: String(lock.deliverycount ?? ''),
        KOERIER_DELIVERY_KEY: lock.deliverykey ?? '',
      },
    });
    child.on('error', () => resolve(127));
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
    // A command that does not read its stdin closes it early: that is no failure of the event.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(JSON.stringify(event));
  });
}
