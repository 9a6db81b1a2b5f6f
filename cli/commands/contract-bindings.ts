/**
 * `koerier contracts bind|unbind|bindings`: contracts at work at the ingest (docs/CONTRACTS.md,
 * "Contracts at work"; issue 14 item 3, EDU-21): an event type bound to a message of an AsyncAPI
 * version has its `data` checked on every publish — `enforce` refuses what breaks the schema (400,
 * each violation a JSON Pointer), `warn` accepts it with the findings, `off` reads nothing.
 */
import { Option, type Command } from 'commander';
import { validationModes } from '../../functions/core/contracts/contract.js';
import type { components } from '../api-client.js';
import { contextOf, printJson, printTable } from '../output.js';
import { bindingRequest } from './register-requests.js';

type Binding = components['schemas']['ContractBinding'];

export function registerContractBindings(contracts: Command): void {
  contracts
    .command('bind')
    .description("check an event type's data against a message of an AsyncAPI contract version at the ingest")
    .argument('<type>', 'the CloudEvents type')
    .argument('<name>', 'the contract')
    .argument('<version>', 'its version')
    .option(
      '--message <id>',
      'the message whose payload the data follows (default: the one named after the type, or the only one)',
    )
    .addOption(
      new Option('--mode <mode>', 'enforce: refuse (400); warn: accept with the findings; off: no check')
        .choices(validationModes)
        .default('enforce'),
    )
    .addHelpText(
      'after',
      '\nThe ingest reads the bindings again every KOERIER_PARTNERS_REFRESH_SECONDS (30 s by default).',
    )
    .action(
      async (
        type: string,
        name: string,
        version: string,
        options: { message?: string; mode: string },
        command: Command,
      ) => {
        const context = await contextOf(command);
        const body = {
          contract: name,
          version,
          mode: options.mode,
          ...(options.message === undefined ? {} : { message: options.message }),
        };
        const bound = (await bindingRequest(context, 'PUT', `/${encodeURIComponent(type)}`, { body })).json as Binding;
        if (context.json) return printJson(bound);
        process.stdout.write(
          `Bound ${bound.type ?? type} to ${bound.contract ?? name} ${bound.version ?? version}#${bound.message ?? '?'} (${bound.mode ?? options.mode}).\n`,
        );
        if (bound.scope === 'publisher')
          process.stdout.write(
            `It checks the events you publish; other publishers' events of the type are not checked by it.\n`,
          );
      },
    );

  contracts
    .command('unbind')
    .description('stop checking an event type against a contract')
    .argument('<type>')
    .action(async (type: string, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      await bindingRequest(context, 'DELETE', `/${encodeURIComponent(type)}`, {});
      if (context.json) return printJson({ type, unbound: true });
      process.stdout.write(`Unbound ${type}.\n`);
    });

  contracts
    .command('bindings')
    .description('the event types whose data the ingest checks, with their contract and mode')
    .action(async (_options: unknown, command: Command) => {
      const context = await contextOf(command);
      const bindings = ((await bindingRequest(context, 'GET', '')).json as { bindings?: Binding[] }).bindings ?? [];
      if (context.json) return printJson(bindings);
      if (bindings.length === 0) return void process.stdout.write('No event type is bound to a contract.\n');
      printTable(
        ['type', 'contract', 'version', 'message', 'mode', 'events of', 'updated'],
        bindings.map((b) => [b.type, b.contract, b.version, b.message, b.mode, eventsOf(b), b.updatedAt]),
      );
    });
}

/** Whose events a binding checks (issue 28: a publisher binds for its own). */
function eventsOf(binding: Binding): string {
  if (binding.scope === 'publisher') return binding.publisher ?? '?';
  return 'every publisher';
}
