/**
 * `koerier payload get <dataref|id>` (issue 30 item 5): the data behind a Koerier `dataref` (EDU-1),
 * to a file or stdout, byte for byte. The id is read from the dataref and fetched through the
 * gateway the CLI is logged in to, never from the URL's own origin: a `dataref` comes from an
 * event, and the bearer token goes only where it was given for. Data above the inline limit comes
 * as a 307 to a presigned URL, which is read without the token.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { KoerierClient, problemError } from '../api-client.js';
import { CliError, exitCodes, exitCodeForStatus } from '../exit-codes.js';
import { contextOf } from '../output.js';
import { digestOf, isPayloadId, payloadIdInDataref } from '../../functions/core/claim-check/payload-reference.js';

export function registerPayload(program: Command): void {
  const payload = program.command('payload').description('the data behind a Koerier dataref');
  payload
    .command('get')
    .description('fetch the data of an event sent by reference, by its dataref URL or payload id')
    .argument('<dataref>', 'the event’s dataref (…/payloads/<id>) or the id alone')
    .option('-o, --output <file>', 'write the data to this file (default: stdout)')
    .action(async (dataref: string, options: { output?: string }, command: Command) => {
      const context = await contextOf(command);
      const id = payloadIdFromArgument(dataref);
      const outcome = await context.client.outcome((api) =>
        api.GET('/payloads/{id}', { params: { path: { id } }, parseAs: 'arrayBuffer', redirect: 'manual' }),
      );
      if (!outcome.ok) throw problemError(outcome.refusal, `GET payload ${id}`);
      const { data, response } = outcome;
      let bytes: Buffer;
      const location = response.headers.get('location');
      if (response.status === 307 && location) {
        // The object store's presigned URL: no token goes there.
        const object = await new KoerierClient(context.client.gatewayUrl, undefined).request('GET', location);
        if (object.status !== 200)
          throw new CliError(`the presigned URL answered ${object.status}`, exitCodeForStatus(object.status));
        bytes = object.bytes;
      } else if (data) bytes = Buffer.from(data);
      else throw new CliError(`GET payload ${id}: answered ${response.status} without data`, exitCodes.refused);
      const digest = digestOf(bytes);
      const expected = response.headers.get('repr-digest');
      if (expected && expected !== digest)
        throw new CliError(`the data does not match its Repr-Digest (${expected}, got ${digest})`, exitCodes.refused);
      if (options.output) {
        await writeFile(options.output, bytes);
        process.stderr.write(`Wrote ${bytes.length.toLocaleString('en-US')} bytes to ${options.output} (${digest}).\n`);
      } else process.stdout.write(bytes);
    });
}

/** The payload id of a dataref URL (`…/payloads/<id>`) or of the id given alone. */
export function payloadIdFromArgument(dataref: string): string {
  const text = dataref.trim();
  const id = isPayloadId(text) ? text : payloadIdInDataref(text);
  if (!id) throw new CliError(`not a Koerier dataref or payload id: ${dataref}`, exitCodes.usage);
  return id;
}
