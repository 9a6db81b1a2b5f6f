/**
 * `koerier filter test` (issue 32): try a subscription filter on events before it goes live. The
 * filter is given as the Subscriptions API writes it (`--filter`, one filter object or a list, all
 * of which must match) or as a CESQL expression (`--sql`).
 *
 * Two modes. Locally (the default) it runs Koerier's own filter code (functions/core: the dialects,
 * CESQL for `sql`) on the events given as `koerier send` reads them, so it answers as the router
 * will; it needs no gateway and sends nothing. With `--server` the gateway judges the given events
 * (`POST /subscriptions/filters/test`), and with `--archived N` the newest N archived events the
 * caller may receive, which only the gateway holds.
 */
import type { Command } from 'commander';
import type { components } from '../api-client.js';
import { attributesOf } from '../../functions/core/cloudevents/stored-event.js';
import { filterMatches, parseFilters, type Filter } from '../../functions/core/subscriptions/filters.js';
import { readEvents } from '../event-input.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { contextOf, printJson, printTable } from '../output.js';

type FilterTestResult = components['schemas']['FilterTestResult'];
type Filters = components['schemas']['Filter'][];
/** A CloudEvent in the JSON event format, as the request body takes it. */
type GivenEvent = { specversion: string; id: string; source: string; type: string } & Record<string, unknown>;

interface FilterTestOptions {
  readonly filter?: string;
  readonly sql?: string;
  readonly server?: boolean;
  readonly archived?: number;
}

/** What `archived.last` may be: the gateway refuses more (its API description says so too). */
const MAX_ARCHIVED = 1000;

export function registerFilter(program: Command): void {
  const filter = program
    .command('filter')
    .description('try a subscription filter (exact, prefix, suffix, all, any, not, sql)');
  filter
    .command('test')
    .description(
      'say which events a filter matches, as the router would: given events here (sends nothing) or on the gateway (--server), or the newest archived events you may receive (--archived N)',
    )
    .argument(
      '[events...]',
      'event files (an event, a batch or JSON Lines) or folders of *.json; - or nothing for stdin',
    )
    .option(
      '--filter <json>',
      'a filter as in a subscription: {"sql": "…"}, {"prefix": {"type": "nl.edu."}}, or a list',
    )
    .option('--sql <expression>', 'a CESQL expression, e.g. "type LIKE \'nl.edu.leerling.%\'"')
    .option('--server', 'let the gateway judge the given events (POST /subscriptions/filters/test)')
    .option(
      '--archived <n>',
      `try the newest n (1-${MAX_ARCHIVED}) archived events you may receive, on the gateway`,
      archivedCount,
    )
    .addHelpText(
      'after',
      `\nExamples:\n  koerier filter test --sql "type LIKE 'nl.edu.leerling.%' AND EXISTS schoolcode" events.json\n` +
        `  koerier filter test --filter '[{"prefix":{"type":"nl.overheid.zaken."}},{"sql":"subject <> ''test''"}]' events/\n` +
        `  koerier filter test --sql "schoolcode IN ('12AB', '34CD')" --archived 100`,
    )
    .action(async (paths: string[], options: FilterTestOptions, command: Command) => {
      if (options.server || options.archived !== undefined) return onServer(paths, options, command);
      const filters = localFilters(options);
      const events = await readEvents(paths);
      const rows = events.map((event) => {
        const attributes = attributesOf(JSON.parse(event.json) as Record<string, unknown>);
        const matches = filters.every((f) => filterMatches(f, attributes));
        return { origin: event.origin, id: event.id, type: attributes['type'], matches };
      });
      if (command.optsWithGlobals<{ json?: boolean }>().json) printJson({ events: rows });
      else {
        printTable(
          ['event', 'id', 'type', 'matches'],
          rows.map((row) => [row.origin, row.id, row.type, row.matches ? 'yes' : 'no']),
        );
        process.stderr.write(`${rows.filter((row) => row.matches).length} of ${rows.length} events match\n`);
      }
    });
}

async function onServer(paths: string[], options: FilterTestOptions, command: Command): Promise<void> {
  if (options.archived !== undefined && paths.length > 0)
    throw new CliError('give either event files or --archived <n>, not both', exitCodes.usage);
  const filters = filtersValue(options) as Filters;
  const source =
    options.archived !== undefined
      ? { archived: { last: options.archived } }
      : { events: (await readEvents(paths)).map((event) => JSON.parse(event.json) as GivenEvent) };
  const context = await contextOf(command);
  // The gateway checks the filters as it checks a subscription's: its 400 names the filter and the position.
  const answer: FilterTestResult = await context.client.run('test filters', (api) =>
    api.POST('/subscriptions/filters/test', { body: { filters, ...source } }),
  );
  if (context.json) return printJson(answer);
  printTable(
    ['id', 'type', ...(options.archived !== undefined ? ['accepted'] : []), 'matches', 'sql errors'],
    answer.events.map((event) => [
      event.id,
      event.type,
      ...(options.archived !== undefined ? [event.acceptedAt ?? ''] : []),
      event.matches ? 'yes' : 'no',
      (event.sqlErrors ?? []).map((error) => `${error.filter}: ${error.error}`).join('; '),
    ]),
  );
  const archive = answer.archive;
  process.stderr.write(
    `${answer.matched} of ${answer.tested} events match` +
      (archive && !archive.complete
        ? ` (the gateway stopped after ${archive.scanned} archived events; older ones were not looked at)`
        : '') +
      '\n',
  );
}

function archivedCount(value: string): number {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > MAX_ARCHIVED)
    throw new CliError(`--archived takes a whole number from 1 to ${MAX_ARCHIVED}`, exitCodes.usage);
  return count;
}

/** The filters as given, unchecked: a list of filter objects. */
function filtersValue(options: FilterTestOptions): unknown[] {
  if ((options.filter === undefined) === (options.sql === undefined))
    throw new CliError('give either --filter <json> or --sql <expression>', exitCodes.usage);
  if (options.sql !== undefined) return [{ sql: options.sql }];
  let value: unknown;
  try {
    value = JSON.parse(options.filter!) as unknown;
  } catch {
    throw new CliError('--filter is not JSON: give a filter object or a list of them', exitCodes.usage);
  }
  return Array.isArray(value) ? (value as unknown[]) : [value];
}

/** The filters to test here, checked as a subscription's are; a usage error naming the problem otherwise. */
function localFilters(options: FilterTestOptions): Filter[] {
  const parsed = parseFilters(filtersValue(options));
  if (parsed.issues.length > 0)
    throw new CliError(
      parsed.issues.map((issue) => `${issue.attribute ?? 'filters'}: ${issue.message}`).join('\n'),
      exitCodes.usage,
    );
  return parsed.filters;
}
