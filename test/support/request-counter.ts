/**
 * Counts the requests an AWS SDK client sends, per operation, from the SDK middleware that sees
 * every HTTP attempt, retries included, which is what AWS bills (functions/aws/aws-request-observer.ts).
 */
import { observeAttempts, type ObservableClient } from '../../functions/aws/aws-request-observer.js';

export interface RequestCounter {
  /** Requests per operation name (e.g. `PutItemCommand`) since the last reset. */
  readonly byOperation: Record<string, number>;
  total(): number;
  reset(): void;
}

export function countRequests(client: ObservableClient): RequestCounter {
  const byOperation: Record<string, number> = {};
  // Named as the SDK's commands are.
  observeAttempts(client, ({ operation }) => {
    byOperation[`${operation}Command`] = (byOperation[`${operation}Command`] ?? 0) + 1;
  });
  return {
    byOperation,
    total: () => Object.values(byOperation).reduce((a, b) => a + b, 0),
    reset: () => {
      for (const name of Object.keys(byOperation)) delete byOperation[name];
    },
  };
}
