/**
 * `npm run pull-queues -- --stack <stack name> --subscriptions-table <table> [--apply]`: the take-over
 * step that gives a standby stack the queues of the pull subscriptions it reads through the
 * replicated subscriptions table (docs/DISASTER-RECOVERY.md, "Pull queues on the standby";
 * functions/aws/pull-queue-provisioning.ts). Lists the pull subscriptions without a queue in the
 * stack's Region; with `--apply` it makes them, each with its dead-letter queue and its
 * subscription's settings. AWS credentials and Region come from the environment, as for the AWS
 * CLI (`AWS_PROFILE`, `AWS_REGION`: the standby's).
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createDynamoDbClient, createSqsClient } from '../functions/aws/clients.js';
import { provisionPullQueues, type PullQueueProvisioning } from '../functions/aws/pull-queue-provisioning.js';
import { SqsPullQueues } from '../functions/aws/sqs-pull-queues.js';
import { pullQueuePrefixOf } from '../lib/koerier-stack.js';

const USAGE =
  'usage: npm run pull-queues -- --stack <stack name> --subscriptions-table <table> [--apply]\n' +
  '  --stack: the stack whose queues to make (its name gives the queue names: <prefix>-pull-<subscription id>)\n' +
  '  without --apply: list the pull subscriptions without a queue, make nothing';

/** Runs the command; answers the exit status. `clients`: the ones to send with (the tests' emulators). */
export async function runPullQueues(
  args: readonly string[],
  io: {
    readonly out: (line: string) => void;
    readonly clients?: { readonly dynamodb: DynamoDBClient; readonly sqs: SQSClient };
  },
): Promise<number> {
  let values: { stack?: string; 'subscriptions-table'?: string; apply?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        stack: { type: 'string' },
        'subscriptions-table': { type: 'string' },
        apply: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    io.out(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const table = values['subscriptions-table'];
  if (values.help || !values.stack || !table) {
    io.out(USAGE);
    return values.help ? 0 : 2;
  }
  const dynamodb = io.clients?.dynamodb ?? createDynamoDbClient();
  const sqs = io.clients?.sqs ?? createSqsClient();
  try {
    const report = await provisionPullQueues(dynamodb, new SqsPullQueues(sqs, pullQueuePrefixOf(values.stack)), {
      subscriptionsTable: table,
      apply: values.apply === true,
    });
    io.out(describeProvisioning(report));
    return 0;
  } finally {
    if (!io.clients) {
      dynamodb.destroy();
      sqs.destroy();
    }
  }
}

export function describeProvisioning(report: PullQueueProvisioning): string {
  return [
    `${report.present.length} pull subscriptions have their queue`,
    `${report.missing.length} pull subscriptions ${report.applied ? 'got their queue now' : 'have no queue'}` +
      (report.missing.length > 0 ? `: ${report.missing.join(', ')}` : ''),
    ...(report.applied || report.missing.length === 0 ? [] : ['Nothing made: run again with --apply to make them.']),
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runPullQueues(process.argv.slice(2), { out: (line) => process.stdout.write(`${line}\n`) }).then(
    (status) => process.exit(status),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
