/**
 * `npm run restore-table -- --from <restored table> --to <live table> [--apply] [--keep-newer]`:
 * the copy step of restoring a Koerier table to a point in time (docs/OPERATIONS.md, "Restore a
 * table from a point in time"). Compares the table RestoreTableToPointInTime made with the
 * stack's live table and prints what differs; with `--apply` it writes the live table back to the
 * restored state (functions/aws/dynamodb-table-restore.ts). AWS credentials and region come from
 * the environment, as for the AWS CLI (`AWS_PROFILE`, `AWS_REGION`).
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoDbClient } from '../functions/aws/clients.js';
import {
  restoreTableItems,
  TableRestoreError,
  type TableRestoreReport,
} from '../functions/aws/dynamodb-table-restore.js';

const USAGE =
  'usage: npm run restore-table -- --from <restored table> --to <live table> [--apply] [--keep-newer]\n' +
  '  without --apply: report what would change, write nothing\n' +
  '  --keep-newer: keep live items the restored table lacks (written after the point in time); default: delete them';

/** Runs the command; answers the exit status. `dynamodb`: the client to send with (the tests' emulator). */
export async function runRestoreTable(
  args: readonly string[],
  io: { readonly out: (line: string) => void; readonly dynamodb?: DynamoDBClient },
): Promise<number> {
  let values: { from?: string; to?: string; apply?: boolean; 'keep-newer'?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        from: { type: 'string' },
        to: { type: 'string' },
        apply: { type: 'boolean' },
        'keep-newer': { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    io.out(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help || !values.from || !values.to) {
    io.out(USAGE);
    return values.help ? 0 : 2;
  }
  const dynamodb = io.dynamodb ?? createDynamoDbClient();
  try {
    const report = await restoreTableItems(dynamodb, {
      from: values.from,
      to: values.to,
      apply: values.apply === true,
      keepNewer: values['keep-newer'] === true,
    });
    io.out(describeReport(report));
    return 0;
  } catch (error) {
    if (!(error instanceof TableRestoreError)) throw error;
    io.out(`restore refused: ${error.message}`);
    return 1;
  } finally {
    if (!io.dynamodb) dynamodb.destroy();
  }
}

export function describeReport(report: TableRestoreReport): string {
  const verb = report.applied ? 'restored' : 'would restore';
  return [
    `${report.to} from ${report.from}:`,
    `  ${report.unchanged} items unchanged`,
    `  ${report.restored} items ${verb} (missing or changed since the point in time)`,
    report.kept > 0
      ? `  ${report.kept} newer items kept (--keep-newer)`
      : `  ${report.removed} newer items ${report.applied ? 'deleted' : 'would be deleted'}`,
    ...(report.applied ? [] : ['Nothing written: run again with --apply to write.']),
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runRestoreTable(process.argv.slice(2), { out: (line) => process.stdout.write(`${line}\n`) }).then(
    (status) => process.exit(status),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
