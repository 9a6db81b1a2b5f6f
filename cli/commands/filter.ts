/**
 * `koerier filter test` (issue 32 item 7): try a subscription filter on events before it goes
 * live. It runs Koerier's own filter code (functions/core: the dialects, CESQL for `sql`), so it
 * answers as the router will; it needs no gateway and sends nothing. The filter is given as the
 * Subscriptions API writes it (`--filter`, one filter object or a list, all of which must match)
 * or as a CESQL expression (`--sql`); the events as `koerier send` reads them.
 */
import type { Command } from 'commander';
import { attributesOf } from '../../functions/core/cloudevents/stored-event.js';
import { filterMatches, parseFilters, type Filter } from '../../functions/core/subscriptions/filters.js';
import { readEvents } from '../event-input.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { printJson, printTable } from '../output.js';

interface FilterTestOptions {
  readonly filter?: string;
  readonly sql?: string;
}

export function registerFilter(program: Command): void {
  const filter = program
    .command('filter')
    .description('try a subscription filter (exact, prefix, suffix, all, any, not, sql)');
  filter
    .command('test')
    .description('say which of the given events a filter matches, as the router would; sends nothing')
    .argument(
      '[events...]',
      'event files (an event, a batch or JSON Lines) or folders of *.json; - or nothing for stdin',
    )
    .option(
      '--filter <json>',
      'a filter as in a subscription: {"sql": "…"}, {"prefix": {"type": "nl.edu."}}, or a list',
    )
    .option('--sql <expression>', 'a CESQL expression, e.g. "type LIKE \'nl.edu.leerling.%\'"')
    .addHelpText(
      'after',
      `\nExamples:\n  koerier filter test --sql "type LIKE 'nl.edu.leerling.%' AND EXISTS schoolcode" events.json\n` +
        `  koerier filter test --filter '[{"prefix":{"type":"nl.overheid.zaken."}},{"sql":"subject <> ''test''"}]' events/`,
    )
    .action(async (paths: string[], options: FilterTestOptions, command: Command) => {
      const filters = filtersOf(options);
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

/** The filters to test, checked as a subscription's are; a usage error naming the problem otherwise. */
function filtersOf(options: FilterTestOptions): Filter[] {
  if ((options.filter === undefined) === (options.sql === undefined))
    throw new CliError('give either --filter <json> or --sql <expression>', exitCodes.usage);
  let value: unknown;
  if (options.sql !== undefined) value = [{ sql: options.sql }];
  else {
    try {
      value = JSON.parse(options.filter!) as unknown;
    } catch {
      throw new CliError('--filter is not JSON: give a filter object or a list of them', exitCodes.usage);
    }
    if (!Array.isArray(value)) value = [value];
  }
  const parsed = parseFilters(value);
  if (parsed.issues.length > 0)
    throw new CliError(
      parsed.issues.map((issue) => `${issue.attribute ?? 'filters'}: ${issue.message}`).join('\n'),
      exitCodes.usage,
    );
  return parsed.filters;
}
