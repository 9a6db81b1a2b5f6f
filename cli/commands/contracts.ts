/**
 * `koerier contracts`: the contract register (`/contracts…`): list the contracts, show one with its
 * versions. A gateway without a register answers the route with 404; the CLI then says the
 * register is not yet available there.
 */
import type { Command } from 'commander';
import { problemError, type ApiAnswer } from '../api-client.js';
import { CliError, exitCodes } from '../exit-codes.js';
import { contextOf, printJson, printRecord, printTable, type Context } from '../output.js';

export function registerContracts(program: Command): void {
  const contracts = program.command('contracts').description('the contract register: list, show');

  contracts
    .command('list')
    .description('the registered contracts')
    .action(async (_options: unknown, command: Command) => {
      const context = await contextOf(command);
      const answer = (await contractsRequest(context, '')).json as { contracts?: Record<string, unknown>[] } | Record<string, unknown>[];
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
      const answer = await contractsRequest(context, `/${encodeURIComponent(name)}${version ? `/versions/${encodeURIComponent(version)}` : ''}`);
      if (context.json) printJson(answer.json);
      else printRecord((answer.json ?? {}) as Record<string, unknown>);
    });
}

async function contractsRequest(context: Context, rest: string): Promise<ApiAnswer> {
  const answer = await context.client.request('GET', `/contracts${rest}`);
  if (answer.status === 404 || answer.status === 405) {
    // The collection itself missing means the gateway has no register; a 404 below it is an unknown contract.
    const collection = rest === '' ? answer : await context.client.request('GET', '/contracts');
    if (collection.status === 404 || collection.status === 405) {
      throw new CliError(`the contract register is not yet available on this gateway (${context.client.gatewayUrl})`, exitCodes.notFound);
    }
  }
  if (answer.status >= 300) throw problemError(answer, `GET /contracts${rest}`);
  return answer;
}
