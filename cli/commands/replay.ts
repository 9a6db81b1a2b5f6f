/**
 * `koerier replay`: start a replay of archived events to a subscription, follow its progress and
 * cancel it (`POST/GET /subscriptions/{id}/replays[/{rid}]`, `POST …/{rid}/cancel`; docs/REPLAY.md).
 * A gateway without replays, or without cancel, answers the route with 404 or 405; the CLI then says
 * that it is not yet available there, instead of pretending.
 */
import type { Command } from 'commander';
import { problemError, type ApiAnswer, type components } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { contextOf, printJson, printRecord, printTable, type Context } from '../output.js';
import { routeMissing } from './subscriptions.js';

type Replay = components['schemas']['Replay'];

const FINAL_STATES = new Set(['finished', 'completed', 'succeeded', 'cancelled', 'canceled', 'failed']);
const POLL_MS = 1000;

export function registerReplay(program: Command): void {
  const replay = program
    .command('replay')
    .description('replay archived events to a subscription: start, list, show (--follow), cancel');

  replay
    .command('start')
    .description('replay the events accepted in a time window to a subscription')
    .argument('<subscription>')
    .requiredOption('--from <time>', 'start of the window: an ISO 8601 time, or an age such as 1h, 30m, 2d')
    .option('--to <time>', 'end of the window (default: now)')
    .option(
      '-t, --type <type>',
      'only these event types (repeatable)',
      (value: string, previous: string[]) => [...previous, value],
      [],
    )
    .option('--follow', 'show its progress until it ends')
    .action(
      async (
        subscription: string,
        options: { from: string; to?: string; type: string[]; follow?: boolean },
        command: Command,
      ) => {
        const context = await contextOf(command);
        // The gateway needs both ends of the window; "now" is this machine's clock, as an age is.
        const body = {
          from: timeOf(options.from),
          to: timeOf(options.to ?? '0s'),
          ...(options.type.length ? { types: options.type } : {}),
        };
        const answer = await replayRequest(context, subscription, 'POST', '', { body });
        const started = answer.json as Replay;
        const id = started.id ?? answer.headers.get('location')?.split('/').pop();
        if (!options.follow || !id) return show(context, started);
        await follow(context, subscription, id);
      },
    );

  replay
    .command('list')
    .description("a subscription's replays")
    .argument('<subscription>')
    .action(async (subscription: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const answer = (await replayRequest(context, subscription, 'GET', '')).json as { replays?: Replay[] } | Replay[];
      const replays = Array.isArray(answer) ? answer : (answer.replays ?? []);
      if (context.json) return printJson(replays);
      printTable(
        ['id', 'state', 'scanned', 'matched', 'sent', 'failed'],
        replays.map((r) => [r.id, r.state, r.scanned, r.matched, r.sent, r.failed]),
      );
    });

  replay
    .command('show')
    .description('one replay; --follow until it ends')
    .argument('<subscription>')
    .argument('<replay>')
    .option('--follow', 'show its progress until it ends')
    .action(async (subscription: string, id: string, options: { follow?: boolean }, command: Command) => {
      const context = await contextOf(command);
      if (options.follow) return follow(context, subscription, id);
      show(context, (await replayRequest(context, subscription, 'GET', `/${encodeURIComponent(id)}`)).json as Replay);
    });

  replay
    .command('cancel')
    .description('stop a running replay: no chunk after the one being queued goes out; its state becomes cancelled')
    .argument('<subscription>')
    .argument('<replay>')
    .addHelpText(
      'after',
      '\nExit 1 when the replay is no longer running (409 replay-not-running), 4 for an unknown subscription or replay.',
    )
    .action(async (subscription: string, id: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const path = `/subscriptions/${encodeURIComponent(subscription)}/replays/${encodeURIComponent(id)}/cancel`;
      // The client gives the cancel its Idempotency-Key, the same on every retry.
      const answer = await context.client.request('POST', path);
      if (answer.status === 404 || answer.status === 405) await cancelMissing(context, subscription, id);
      if (answer.status >= 300) throw problemError(answer, `cancel replay ${id}`);
      const cancelled = answer.json as Replay;
      if (context.json) return printJson(cancelled);
      process.stdout.write(`Replay ${id} ${progressLine(cancelled)}\n`);
    });
}

/**
 * A 404 or 405 to a cancel: the replay is there but cancel is not (an older gateway), replays are
 * not there at all, or the subscription or replay is unknown (then the cancel's own problem stands).
 */
async function cancelMissing(context: Context, subscription: string, id: string): Promise<void> {
  const replays = `/subscriptions/${encodeURIComponent(subscription)}/replays`;
  const replay = await context.client.request('GET', `${replays}/${encodeURIComponent(id)}`);
  if (replay.status >= 200 && replay.status < 300) {
    throw new CliError(
      `cancelling a replay is not yet available on this gateway (${context.client.gatewayUrl})`,
      exitCodes.notFound,
    );
  }
  const list = await context.client.request('GET', replays);
  if (list.status === 404 || list.status === 405) await routeMissing(context, subscription, 'replay');
}

async function follow(context: Context, subscription: string, id: string): Promise<void> {
  for (;;) {
    const replay = (await replayRequest(context, subscription, 'GET', `/${encodeURIComponent(id)}`)).json as Replay;
    const line = progressLine(replay);
    if (context.json) process.stdout.write(`${JSON.stringify(replay)}\n`);
    else process.stderr.write(`${line}\n`);
    if (replay.state && FINAL_STATES.has(replay.state)) {
      if (!context.json) process.stdout.write(`Replay ${id} ${line}\n`);
      if (replay.state === 'failed') process.exitCode = exitCodes.refused;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function progressLine(replay: Replay): string {
  return `${replay.state ?? '?'}: scanned ${replay.scanned ?? 0}, matched ${replay.matched ?? 0}, sent ${replay.sent ?? 0}, failed ${replay.failed ?? 0}`;
}

function show(context: Context, replay: Replay): void {
  if (context.json) printJson(replay);
  else printRecord(replay);
}

async function replayRequest(
  context: Context,
  subscription: string,
  method: string,
  rest: string,
  options: Parameters<Context['client']['request']>[2] = {},
): Promise<ApiAnswer> {
  const answer = await context.client.request(
    method,
    `/subscriptions/${encodeURIComponent(subscription)}/replays${rest}`,
    options,
  );
  if (answer.status === 405 || (answer.status === 404 && rest === ''))
    await routeMissing(context, subscription, 'replay');
  if (answer.status >= 300) throw problemError(answer, `${method} replays`);
  return answer;
}

/** An ISO 8601 time as it is, or an age (`90s`, `30m`, `1h`, `2d`) as the time that long ago. */
export function timeOf(value: string, now = Date.now()): string {
  const age = /^(\d+)([smhd])$/.exec(value.trim());
  if (age)
    return new Date(
      now - Number(age[1]) * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[age[2] as 's' | 'm' | 'h' | 'd'],
    ).toISOString();
  const time = Date.parse(value);
  if (Number.isNaN(time))
    throw new CliError(`"${value}" is neither an ISO 8601 time nor an age such as 1h`, exitCodes.usage);
  return new Date(time).toISOString();
}
