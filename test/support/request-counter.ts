/**
 * Counts the requests an AWS SDK v3 client sends, per operation, with a middleware in the
 * deserialize step (below the retry middleware), so every HTTP attempt counts: what AWS bills.
 * A lean client (functions/aws/lean-client-support.ts) tells of every attempt itself.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LeanAwsClient } from '../../functions/aws/lean-client-support.js';

export interface RequestCounter {
  /** Requests per operation name (e.g. `PutItemCommand`) since the last reset. */
  readonly byOperation: Record<string, number>;
  total(): number;
  reset(): void;
}

export function countRequests(client: DynamoDBClient | SQSClient | Pick<LeanAwsClient, 'observeAttempts'>): RequestCounter {
  const byOperation: Record<string, number> = {};
  const count = (name: string) => {
    byOperation[name] = (byOperation[name] ?? 0) + 1;
  };
  // Named as the SDK's commands are, so a test reads the same keys whichever client sent.
  if ('observeAttempts' in client) client.observeAttempts(({ operation }) => count(`${operation}Command`));
  else
    (client as DynamoDBClient).middlewareStack.add(
      (next, context) => async (args) => {
        byOperation[context.commandName ?? 'unknown'] = (byOperation[context.commandName ?? 'unknown'] ?? 0) + 1;
        return next(args);
      },
      { step: 'deserialize', name: 'koerierRequestCounter' },
    );
  return {
    byOperation,
    total: () => Object.values(byOperation).reduce((a, b) => a + b, 0),
    reset: () => {
      for (const name of Object.keys(byOperation)) delete byOperation[name];
    },
  };
}
