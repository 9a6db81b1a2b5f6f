/**
 * `koerier contracts`: the contract register (`/contracts…`, docs/CONTRACTS.md): list the contracts,
 * show one with its versions; publishing and metadata changes are in ./contract-changes.ts. A
 * gateway without a register answers its routes with 404; the CLI then says the register is not
 * yet available there, and a register without a write route says that of the change asked for.
 */
import type { Command } from 'commander';
import { contextOf, printJson, printRecord, printTable } from '../output.js';
import { registerContractChanges } from './contract-changes.js';
import { contractPath, registerRequest } from './register-requests.js';

export function registerContracts(program: Command): void {
  const contracts = program.command('contracts').description('the contract register: list, show, publish, update, deprecate');

  contracts
    .command('list')
    .description('the registered contracts')
    .action(async (_options: unknown, command: Command) => {
      const context = await contextOf(command);
      const answer = (await registerRequest(context, 'GET', '')).json as { contracts?: Record<string, unknown>[] } | Record<string, unknown>[];
      const items = Array.isArray(answer) ? answer : (answer.contracts ?? []);
      if (context.json) return printJson(items);
      if (items.length === 0) return void process.stdout.write('No contracts.\n');
      printTable(
        ['name', 'kind', 'status', 'latest', 'types'],
        items.map((c) => [c['name'], c['kind'], c['status'], c['latestVersion'] ?? c['version'], JSON.stringify(c['types'] ?? c['eventTypes'] ?? [])]),
      );
    });

  contracts
    .command('show')
    .description('one contract, or one version of it')
    .argument('<name>')
    .argument('[version]')
    .action(async (name: string, version: string | undefined, _options: unknown, command: Command) => {
      const context = await contextOf(command);
      const answer = await registerRequest(context, 'GET', contractPath(name, version));
      if (context.json) printJson(answer.json);
      else printRecord((answer.json ?? {}) as Record<string, unknown>);
    });

  registerContractChanges(contracts);
}
