/**
 * The erasure worker (issue 31 item 4): SQS event source on the erasures queue, one message (one
 * running erasure's next chunk) per invocation. A chunk that throws comes back after the queue's
 * visibility timeout and starts its hour again (what it removed stays removed); on its last receive
 * the erasure is marked failed, so the audit record says so and the operator starts it again.
 */
import { runErasureChunk } from '../core/erasure/erasure-worker.js';
import type { ErasureMessage } from '../core/erasure/ports.js';
import { queues } from '../config/resources.js';
import type { KoerierDependencies } from './dependencies.js';
import { describeError } from './logger.js';
import type { QueueApp } from './queue-app.js';

const DAY_MS = 24 * 3600_000;
/** How long one chunk reads the archive: well inside the worker's 300 s timeout. */
const CHUNK_BUDGET_MS = 120_000;

/** What the app reads: its handler (functions/handlers/erasure-worker.ts) must compose a builder for each. */
export type ErasureWorkerAppDependencies = Pick<
  KoerierDependencies,
  'config' | 'log' | 'clock' | 'erasureStore' | 'erasureQueue' | 'erasableStores'
>;

export function erasureWorkerApp(deps: ErasureWorkerAppDependencies): QueueApp {
  const { log, config } = deps;
  return async (batch) => {
    const failed: string[] = [];
    for (const record of batch.records) {
      let message: ErasureMessage;
      try {
        message = JSON.parse(record.body) as ErasureMessage;
        if (typeof message.erasureId !== 'string' || typeof message.selector !== 'object')
          throw new TypeError('not an erasure message');
      } catch {
        log.warn('erasure message unreadable', { messageId: record.messageId });
        continue;
      }
      try {
        await runErasureChunk(message, {
          stores: deps.erasableStores,
          store: deps.erasureStore,
          queue: deps.erasureQueue,
          archiveRetentionMs: config.archive.retentionDays * DAY_MS,
          deadLetterRetentionSeconds: config.delivery.deadLetterRetentionSeconds,
          chunkBudgetMs: CHUNK_BUDGET_MS,
          clock: deps.clock,
          log,
        });
      } catch (error) {
        // Never the selector: it names a person.
        log.warn('erasure chunk failed; it comes back', {
          erasureId: message.erasureId,
          phase: message.phase,
          receiveCount: record.receiveCount,
          error: describeError(error),
        });
        if (record.receiveCount >= queues.erasures.maxReceiveCount) await markFailed(deps, message.erasureId);
        else failed.push(record.messageId);
      }
    }
    return { failedMessageIds: failed };
  };
}

async function markFailed(deps: ErasureWorkerAppDependencies, erasureId: string): Promise<void> {
  const record = await deps.erasureStore.get(erasureId);
  if (record === undefined) return;
  const now = deps.clock();
  await deps.erasureStore.put({
    ...record,
    state: 'failed',
    reason: 'its worker kept failing; start the erasure again (what was removed stays removed)',
    updatedAt: now,
    finishedAt: now,
  });
}
