/**
 * `koerier send`: publish events from files, a folder or stdin, in structured, binary or batch
 * mode. Every request gets its own Idempotency-Key, generated once and sent again unchanged on
 * every retry (5xx, 429, network failures; `Retry-After` honoured), so a retry can never publish
 * an event twice (EDU-IDEM). Ends with a summary: accepted, rejected with each problem's reasons.
 */
import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, Option, type Command } from 'commander';
// Pure CloudEvents HTTP binding helpers of the gateway's core, the same code its deliveries use.
import {
  toBatchMessage,
  toBinaryMessage,
  toStructuredMessage,
} from '../../functions/core/cloudevents/http-binding/to-message.js';
import { describeIssue, describeProblem, problemOf, type ApiAnswer, type ProblemIssue } from '../api-client.js';
import { CliError, exitCodes, type ExitCode } from '../exit-codes.js';
import { readEvents, type InputEvent } from '../event-input.js';
import { contextOf, printJson, progress, type ProgressChoice } from '../output.js';

type Mode = 'structured' | 'binary' | 'batch';

interface SendOptions {
  readonly mode: Mode;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly progress: ProgressChoice;
}

interface RequestResult {
  readonly events: readonly InputEvent[];
  readonly idempotencyKey: string;
  readonly status: number | undefined;
  readonly retries: number;
  readonly replayed: boolean;
  /** The problem's summary for a refused request, or why it could not be sent. */
  readonly problem?: string;
  readonly issues?: readonly ProblemIssue[];
  readonly warnings?: number;
  /** Events the 202 marks `duplicate`: accepted before, so not delivered again (issue 30 item 1). */
  readonly duplicates?: number;
}

export function registerSend(program: Command): void {
  program
    .command('send')
    .description('publish CloudEvents from files, folders (every *.json) or stdin (-)')
    .argument(
      '[paths...]',
      'event files (an object, an array for a batch, or JSON Lines) or folders; none or - reads stdin',
    )
    .addOption(
      new Option('-m, --mode <mode>', 'content mode').choices(['structured', 'binary', 'batch']).default('structured'),
    )
    .option('--batch-size <n>', 'events per request in batch mode (1-1000)', integer(1, 1000), 100)
    .option('--concurrency <n>', 'requests in flight at once (1-64)', integer(1, 64), 8)
    .option('--progress', 'show a progress bar (default: on a terminal, from 20 events)')
    .option('--no-progress', 'never show a progress bar')
    .addHelpText(
      'after',
      '\nExit status 0 when every event was accepted, 1 when some were rejected, 5 when some could not be sent.',
    )
    .action(async (paths: string[], options: SendOptions, command: Command) => {
      const context = await contextOf(command);
      const events = await readEvents(paths);
      if (events.length === 0) throw new CliError('no events to send', exitCodes.usage);
      const units = options.mode === 'batch' ? chunks(events, options.batchSize) : events.map((event) => [event]);
      const bar = progress(events.length, 'Sending', options.progress, context.json);

      const results: RequestResult[] = new Array<RequestResult>(units.length);
      let next = 0;
      let authFailure: CliError | undefined;
      const worker = async () => {
        while (next < units.length && !authFailure) {
          const index = next++;
          const unit = units[index]!;
          results[index] = await sendUnit(unit, options.mode, (key, onRetry) =>
            context.client.request('POST', '/events', {
              raw: message(unit, options.mode),
              idempotencyKey: key,
              onRetry,
            }),
          );
          const status = results[index].status;
          // A client that may not publish gets the same answer for every event: stop at the first.
          if (status === 401 || status === 403)
            authFailure = new CliError(`POST /events: ${results[index].problem ?? status}`, exitCodes.auth);
          bar.increment(unit.length);
        }
      };
      try {
        await Promise.all(Array.from({ length: Math.min(options.concurrency, units.length) }, worker));
      } finally {
        bar.stop();
      }
      if (authFailure) throw authFailure;

      const done = results.filter(Boolean);
      const count = (pick: (result: RequestResult) => boolean) =>
        done.filter(pick).reduce((sum, result) => sum + result.events.length, 0);
      const accepted = count((result) => result.status !== undefined && result.status < 300);
      const rejected = count((result) => result.status !== undefined && result.status >= 300);
      const failed = count((result) => result.status === undefined);
      const retries = done.reduce((sum, result) => sum + result.retries, 0);
      if (context.json) {
        printJson({
          mode: options.mode,
          events: events.length,
          requests: done.length,
          accepted,
          rejected,
          failed,
          retries,
          results: done.map((result) => ({
            events: result.events.map((event) => ({ origin: event.origin, id: event.id, source: event.source })),
            idempotencyKey: result.idempotencyKey,
            status: result.status ?? null,
            retries: result.retries,
            replayed: result.replayed,
            ...(result.problem ? { problem: result.problem } : {}),
            ...(result.issues ? { issues: result.issues } : {}),
            ...(result.warnings ? { warnings: result.warnings } : {}),
            ...(result.duplicates ? { duplicates: result.duplicates } : {}),
          })),
        });
      } else {
        printSummary(options.mode, events.length, done, { accepted, rejected, failed, retries });
      }
      const exitCode: ExitCode = failed > 0 ? exitCodes.unavailable : rejected > 0 ? exitCodes.refused : exitCodes.ok;
      process.exitCode = exitCode;
    });
}

function message(unit: readonly InputEvent[], mode: Mode): { body: Buffer; headers: Record<string, string> } {
  switch (mode) {
    case 'batch':
      return toBatchMessage(unit.map((event) => event.json));
    case 'binary':
      return toBinaryMessage(unit[0]!.json);
    case 'structured':
      return toStructuredMessage(unit[0]!.json);
  }
}

async function sendUnit(
  unit: readonly InputEvent[],
  mode: Mode,
  post: (key: string, onRetry: () => void) => Promise<ApiAnswer>,
): Promise<RequestResult> {
  // One key per request, made before the first try and kept for every retry of it.
  const idempotencyKey = randomUUID();
  let retries = 0;
  try {
    message(unit, mode);
  } catch (error) {
    return {
      events: unit,
      idempotencyKey,
      status: 400,
      retries,
      replayed: false,
      problem: `cannot be written in ${mode} mode: ${(error as Error).message}`,
    };
  }
  try {
    const answer = await post(idempotencyKey, () => retries++);
    const replayed = answer.headers.get('idempotent-replayed') === 'true';
    if (answer.status < 300) {
      const body = answer.json as { warnings?: unknown[]; duplicateCount?: number } | undefined;
      const warnings = body?.warnings?.length ?? 0;
      const duplicates = body?.duplicateCount ?? 0;
      return {
        events: unit,
        idempotencyKey,
        status: answer.status,
        retries,
        replayed,
        ...(warnings ? { warnings } : {}),
        ...(duplicates ? { duplicates } : {}),
      };
    }
    const issues = problemOf(answer)?.errors;
    return {
      events: unit,
      idempotencyKey,
      status: answer.status,
      retries,
      replayed,
      problem: describeProblem(answer).split('\n')[0]!,
      ...(issues ? { issues } : {}),
    };
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    return { events: unit, idempotencyKey, status: undefined, retries, replayed: false, problem: error.message };
  }
}

function printSummary(
  mode: Mode,
  total: number,
  results: readonly RequestResult[],
  counts: { accepted: number; rejected: number; failed: number; retries: number },
): void {
  const lines = [
    `Sent ${total} event${total === 1 ? '' : 's'} in ${results.length} request${results.length === 1 ? '' : 's'} (${mode}): ` +
      `${counts.accepted} accepted, ${counts.rejected} rejected${counts.failed ? `, ${counts.failed} not sent` : ''}` +
      `${counts.retries ? `; ${counts.retries} retr${counts.retries === 1 ? 'y' : 'ies'} with the same Idempotency-Key` : ''}.`,
  ];
  const duplicates = results.reduce((sum, result) => sum + (result.duplicates ?? 0), 0);
  if (duplicates)
    lines.push(
      `${duplicates} duplicate${duplicates === 1 ? '' : 's'}: its source and id were accepted before, so it is not delivered again ` +
        '(CE-17); koerier events show <source> <id> names the first acceptance.',
    );
  const warned = results.reduce((sum, result) => sum + (result.warnings ?? 0), 0);
  if (warned)
    lines.push(`${warned} warning${warned === 1 ? '' : 's'} (SHOULD-level findings; --json lists them per request).`);
  const refused = results.filter((result) => result.status === undefined || result.status >= 300);
  if (refused.length > 0) lines.push(counts.failed ? 'Rejected or not sent:' : 'Rejected:');
  for (const result of refused) {
    const names =
      result.events.length === 1
        ? result.events[0]!.origin
        : `${result.events[0]!.origin} … ${result.events.at(-1)!.origin}`;
    lines.push(`  ${names}: ${result.problem ?? result.status}`);
    for (const issue of result.issues ?? []) {
      const event = issue.index === undefined ? undefined : result.events[issue.index];
      lines.push(
        `    - ${event && result.events.length > 1 ? `${event.origin}: ` : ''}${describeIssue(event || result.events.length === 1 ? withoutIndex(issue) : issue)}`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

function withoutIndex({ index: _index, ...issue }: ProblemIssue): ProblemIssue {
  return issue;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

export function integer(min: number, max: number): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max)
      throw new InvalidArgumentError(`a whole number from ${min} to ${max}`);
    return parsed;
  };
}
