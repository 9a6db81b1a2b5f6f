/**
 * Counts the requests an AWS client sends, per operation, every HTTP attempt (what AWS bills): an
 * SDK v3 client with a middleware in the deserialize step (below the retry middleware), a lean
 * client (functions/aws/lean-client-support.ts) with its attempt observer.
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
  if ('observeAttempts' in client) {
    // Named as the SDK's commands, so counts read the same whichever client sent them.
    client.observeAttempts(({ operation }) => void (byOperation[`${operation}Command`] = (byOperation[`${operation}Command`] ?? 0) + 1));
  } else
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
