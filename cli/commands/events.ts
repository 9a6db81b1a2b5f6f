/**
 * `koerier events show <source> <id>` (issue 30 item 1): what became of one event — accepted when
 * and under which Idempotency-Key, later publications dropped as its duplicates, how many
 * subscriptions it was routed to, and per subscription (the caller's own) the delivery state and
 * attempts. GET /events/{source}/{id}; the gateway decides what the caller may see.
 */
import type { Command } from 'commander';
import { contextOf, printJson, printRecord, printTable } from '../output.js';

export function registerEvents(program: Command): void {
  const events = program.command('events').description('follow one event: its trace');

  events
    .command('show')
    .description('what became of one event: acceptance, duplicates, routing, deliveries')
    .argument('<source>', "the event's source")
    .argument('<id>', "the event's id")
    .action(async (source: string, id: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const trace = await context.client.run(`GET the trace of event ${id}`, (api) =>
        api.GET('/events/{source}/{id}', { params: { path: { source, id } } }),
      );
      if (context.json) return printJson(trace);
      const { accepted, duplicates, routed } = trace;
      printRecord({
        source: trace.source,
        id: trace.id,
        state: trace.state,
        accepted: accepted?.at,
        publisher: accepted?.publisher,
        'idempotency key': accepted?.idempotencyKey,
        'correlation id': accepted?.correlationId,
        duplicates: duplicates
          ? `${duplicates.count} later publication${duplicates.count === 1 ? '' : 's'} dropped` +
            (duplicates.latest
              ? `; latest ${duplicates.latest.at} under key ${duplicates.latest.idempotencyKey ?? '?'}`
              : '')
          : undefined,
        routed: routed?.at,
        'routed to': routed?.subscriptionCount === undefined ? undefined : `${routed.subscriptionCount} subscriptions`,
      });
      if (trace.subscriptions.length === 0) return void process.stdout.write('No subscription of yours received it.\n');
      printTable(
        ['subscription', 'delivery', 'state', 'attempts', 'last attempt'],
        trace.subscriptions.map((s) => {
          const last = s.attempts.at(-1);
          return [
            s.id,
            s.delivery,
            s.state,
            s.attemptCount,
            last ? `${last.at} ${last.outcome}${last.status === undefined ? '' : ` ${last.status}`}` : '',
          ];
        }),
      );
    });
}
