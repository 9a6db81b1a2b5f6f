/**
 * `koerier deliveries <subscription>` (the attempts, newest first) and `koerier dead-letters
 * list|redrive <subscription>` (docs/OPERATIONS.md, "Dead letters and redrive"). A redrive sends
 * the chosen dead letters again in chunks, with a progress bar; each is a new delivery with a new
 * key (EDU-IDEM-13), and what is no longer entitled or no longer matches is withheld by the gateway.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { components } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { contextOf, printJson, printTable, progress, type ProgressChoice } from '../output.js';
import { integer } from './send.js';

type DeadLetter = components['schemas']['DeadLetter'];

interface DeliveriesOptions {
  readonly limit: number;
  readonly outcome?: 'delivered' | 'retrying' | 'dead-lettered' | 'retired';
  readonly event?: string;
  readonly source?: string;
  readonly since?: string;
  readonly until?: string;
}

export function registerDeliveries(program: Command): void {
  program
    .command('deliveries')
    .description("a subscription's delivery attempts, newest first")
    .argument('<subscription>')
    .option('-n, --limit <n>', 'at most this many attempts (1-100)', integer(1, 100), 25)
    .addOption(
      new Option('--outcome <outcome>', 'only attempts with this outcome').choices([
        'delivered',
        'retrying',
        'dead-lettered',
        'retired',
      ]),
    )
    .option(
      '--event <id>',
      "only attempts of deliveries that carried the event with this id (with --source: that source's)",
    )
    .option('--source <source>', 'only attempts of deliveries that carried an event from this source')
    .option(
      '--since <when>',
      'only attempts from then on: a date-time (2026-11-23T09:00:00Z) or an age (30m, 6h, 2d)',
      since,
    )
    .option('--until <when>', 'only attempts before then: a date-time or an age', since)
    .action(async (subscription: string, options: DeliveriesOptions, command: Command) => {
      const context = await contextOf(command);
      const query = {
        limit: options.limit,
        ...(options.outcome ? { outcome: options.outcome } : {}),
        ...(options.event ? { id: options.event } : {}),
        ...(options.source ? { source: options.source } : {}),
        ...(options.since ? { since: options.since } : {}),
        ...(options.until ? { until: options.until } : {}),
      };
      const page = await context.client.run(`GET deliveries of ${subscription}`, (api) =>
        api.GET('/subscriptions/{id}/deliveries', { params: { path: { id: subscription }, query } }),
      );
      const attempts = page.attempts;
      if (context.json) return printJson(attempts);
      if (attempts.length === 0) return void process.stdout.write('No delivery attempts.\n');
      // Seven columns that fit 100: the delivery by the start of its key (`--json` has it whole), and
      // what went wrong, what the receiver said and what happens next together in one column.
      printTable(
        ['at', 'delivery', 'attempt', 'outcome', 'status', 'ms', 'detail'],
        attempts.map((a) => [
          a.at,
          `${a.deliveryId.slice(0, 8)}…`,
          a.attempt,
          a.outcome,
          a.status,
          a.latencyMs,
          [
            a.error ? `${a.error.code}: ${a.error.detail}` : '',
            a.answer?.body ? `answer: ${answerExcerpt(a.answer.body)}` : '',
            a.nextAttemptAt ? `next attempt ${a.nextAttemptAt}` : '',
          ]
            .filter(Boolean)
            .join('\n'),
        ]),
      );
    });

  const deadLetters = program.command('dead-letters').description("a subscription's dead letters: list, redrive");

  deadLetters
    .command('list')
    .description('the dead letters, oldest first')
    .argument('<subscription>')
    .action(async (subscription: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const items = await context.client.listAll<DeadLetter>(
        `/subscriptions/${encodeURIComponent(subscription)}/dead-letters`,
        'deadLetters',
        { limit: 100 },
      );
      if (context.json) return printJson(items);
      if (items.length === 0) return void process.stdout.write('No dead letters.\n');
      printTable(
        ['delivery', 'dead-lettered', 'reason', 'attempts', 'events'],
        items.map((d) => [
          d.deliveryId,
          d.deadLetteredAt,
          d.detail ? `${d.reason}: ${d.detail}` : d.reason,
          d.attempts,
          (d.events ?? []).map((e) => `${e.type} ${e.id}`).join('\n'),
        ]),
      );
    });

  deadLetters
    .command('redrive')
    .description('send dead letters again: every one, or the delivery ids given')
    .argument('<subscription>')
    .argument('[deliveryIds...]', 'only these dead letters (default: all)')
    .option('--chunk <n>', 'dead letters per request (1-500)', integer(1, 500), 50)
    .option('--progress', 'show a progress bar (default: on a terminal, from 20 dead letters)')
    .option('--no-progress', 'never show a progress bar')
    .action(
      async (
        subscription: string,
        ids: string[],
        options: { chunk: number; progress: ProgressChoice },
        command: Command,
      ) => {
        const context = await contextOf(command);
        const path = `/subscriptions/${encodeURIComponent(subscription)}/dead-letters`;
        const chosen =
          ids.length > 0
            ? ids
            : (await context.client.listAll<DeadLetter>(path, 'deadLetters', { limit: 100 })).map((d) => d.deliveryId);
        const bar = progress(chosen.length, 'Redriving', options.progress, context.json);
        let redriven = 0;
        const withheld: { deliveryId?: string; reason?: string }[] = [];
        const notFound: string[] = [];
        try {
          for (let start = 0; start < chosen.length; start += options.chunk) {
            const chunk = chosen.slice(start, start + options.chunk);
            // The client makes one key per call, the same on every retry of it: a retried chunk is not sent twice.
            const answer = await context.client.run(`redrive dead letters of ${subscription}`, (api) =>
              api.POST('/subscriptions/{id}/dead-letters/redrive', {
                params: { path: { id: subscription } },
                body: { deliveryIds: chunk },
              }),
            );
            redriven += answer.redriven?.length ?? 0;
            withheld.push(...(answer.withheld ?? []));
            notFound.push(...(answer.notFound ?? []));
            bar.increment(chunk.length);
          }
        } finally {
          bar.stop();
        }
        if (context.json) printJson({ redriven, withheld, notFound });
        else {
          process.stdout.write(
            `Redrove ${redriven} of ${chosen.length} dead letter${chosen.length === 1 ? '' : 's'}.\n`,
          );
          for (const w of withheld) process.stdout.write(`  withheld ${w.deliveryId}: ${w.reason}\n`);
          for (const id of notFound) process.stdout.write(`  not found ${id}\n`);
        }
        if (ids.length > 0 && notFound.length > 0)
          throw new CliError(`${notFound.length} of the given dead letters were not found`, exitCodes.notFound);
        if (withheld.length > 0) process.exitCode = exitCodes.refused;
      },
    );
}

/** The start of a receiver's answer on one line (issue 30 item 2); `--json` gives the whole excerpt. */
export function answerExcerpt(body: string): string {
  const line = body.replace(/\s+/g, ' ').trim();
  return line.length > ANSWER_COLUMN_CHARACTERS ? `${line.slice(0, ANSWER_COLUMN_CHARACTERS - 1)}…` : line;
}

const ANSWER_COLUMN_CHARACTERS = 60;

const AGE_UNITS_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A time as the API reads it (RFC 3339, UTC): given as one, or as an age before now (`30m`, `6h`, `2d`). */
export function since(value: string, _previous?: string, now: number = Date.now()): string {
  const age = /^(\d+)([smhd])$/.exec(value.trim());
  if (age) return new Date(now - Number(age[1]) * AGE_UNITS_MS[age[2]!]!).toISOString();
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value.trim())) return value.trim();
  throw new InvalidArgumentError('a date-time such as 2026-11-23T09:00:00Z, or an age such as 30m, 6h or 2d');
}
