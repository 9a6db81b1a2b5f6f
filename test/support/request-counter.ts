/**
 * Counts the requests a lean AWS client (functions/aws/lean-client-support.ts) sends, per
 * operation: it tells of every HTTP attempt itself, retries included, which is what AWS bills.
 */
import type { LeanAwsClient } from '../../functions/aws/lean-client-support.js';

export interface RequestCounter {
  /** Requests per operation name (e.g. `PutItemCommand`) since the last reset. */
  readonly byOperation: Record<string, number>;
  total(): number;
  reset(): void;
}

export function countRequests(client: Pick<LeanAwsClient, 'observeAttempts'>): RequestCounter {
  const byOperation: Record<string, number> = {};
  // Named as the SDK's commands are, so the tests read the same keys as when the SDK sent.
  client.observeAttempts(({ operation }) => {
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
