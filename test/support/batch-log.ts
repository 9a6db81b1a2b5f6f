/**
 * What the laptop host's SQS pollers log per batch they hand a queue-triggered function (`batch`
 * lines: how many records it received and how many it failed), read from a test host's log: how a
 * test sees the batches a function was invoked with (router batch sizes and isolation).
 */
import type { TestHost } from './host.js';

export interface BatchLine {
  readonly message: string;
  readonly function?: string;
  readonly received?: number;
  readonly failed?: number;
}

/** The `batch` lines of `functionName` in the host's log so far, oldest first. */
export function batchesLogged(host: Pick<TestHost, 'logs'>, functionName: string): BatchLine[] {
  return host.logs
    .map((line) => JSON.parse(line) as BatchLine)
    .filter((line) => line.message === 'batch' && line.function === functionName);
}
