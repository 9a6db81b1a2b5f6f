/**
 * `koerier contracts`: the contract register (`/contracts…`, docs/CONTRACTS.md): list the contracts,
 * show one with its versions, fetch a version's document; publishing and metadata changes are in ./contract-changes.ts. A
 * gateway without a register answers its routes with 404; the CLI then says the register is not
 * yet available there, and a register without a write route says that of the change asked for.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { contextOf, printJson, printRecord, printTable } from '../output.js';
import { registerContractBindings } from './contract-bindings.js';
import { registerContractChanges } from './contract-changes.js';
import { compatibilityLine, contactLine, contractView } from './contract-metadata.js';
import { contractPath, registerRequest } from './register-requests.js';

export function registerContracts(program: Command): void {
  const contracts = program
    .command('contracts')
    .description('the contract register: list, show, document, publish, update, deprecate; bind event types to it');

  contracts
    .command('list')
    .description('the registered contracts')
    .action(async (_options: unknown, command: Command) => {
      const context = await contextOf(command);
      const answer = (await registerRequest(context, 'GET', '')).json as
        { contracts?: Record<string, unknown>[] } | Record<string, unknown>[];
      const items = Array.isArray(answer) ? answer : (answer.contracts ?? []);
      if (context.json) return printJson(items);
      if (items.length === 0) return void process.stdout.write('No contracts.\n');
      printTable(
        ['name', 'kind', 'latest', 'owner', 'updated'],
        items.map((c) => [c['name'], c['kind'], c['latestVersion'], contactLine(c['owner']), c['updatedAt']]),
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
      if (context.json) return printJson(answer.json);
      const { versions, consumers, ...contract } = (answer.json ?? {}) as Record<string, unknown> & {
        versions?: unknown;
        consumers?: unknown;
      };
      printRecord(contractView(contract));
      if (Array.isArray(versions)) {
        printTable(
          ['version', 'status', 'sunset', 'event types', 'compatibility', 'published'],
          (versions as Record<string, unknown>[]).map((v) => [
            v['version'],
            v['status'],
            v['sunset'],
            (v['eventTypes'] as string[] | undefined)?.join(', '),
            compatibilityLine(v['compatibility']),
            v['createdAt'],
          ]),
        );
      }
      if (Array.isArray(consumers)) {
        if (consumers.length === 0)
          process.stdout.write(
            "None of your subscriptions consumes its event types (an operator sees every client's).\n",
          );
        else
          printTable(
            ['consumer', 'owner', 'types'],
            (consumers as Record<string, unknown>[]).map((c) => [
              c['subscriptionId'],
              c['owner'],
              JSON.stringify(c['types'] ?? []),
            ]),
          );
      }
    });

  contracts
    .command('document')
    .description('the document of a version as published, byte for byte (EDU-6: for people and automated processes)')
    .argument('<name>')
    .argument('<version>')
    .option('-o, --output <file>', 'write it to this file instead of stdout')
    .action(async (name: string, version: string, options: { output?: string }, command: Command) => {
      const context = await contextOf(command);
      const answer = await registerRequest(context, 'GET', `${contractPath(name, version)}/document`, {
        headers: { accept: '*/*' },
      });
      if (options.output === undefined) return void process.stdout.write(answer.text);
      await writeFile(options.output, answer.text);
      process.stderr.write(
        `Wrote ${name} ${version} to ${options.output} (${answer.headers.get('content-type') ?? '?'}, ${answer.headers.get('repr-digest') ?? 'no digest'}).\n`,
      );
    });

  registerContractChanges(contracts);
  registerContractBindings(contracts);
}
