/**
 * The replay worker (docs/REPLAY.md): SQS event source on the replays queue, one message (one
 * running replay's next chunk) per invocation. A chunk that throws comes back after the queue's
 * visibility timeout; on its last receive the replay is ended as failed instead.
 */
import { replayFinishedNotice, tell } from '../core/operations/operational-events.js';
import { runReplayChunk } from '../core/replay/replay-worker.js';
import type { ReplayMessage } from '../core/replay/ports.js';
import { queues } from '../config/resources.js';
import type { KoerierDependencies } from './dependencies.js';
import { describeError } from './logger.js';
import type { QueueApp } from './queue-app.js';

const DAY_MS = 24 * 3600_000;

/** What the app reads: its handler (functions/handlers/replay-worker.ts) must compose a builder for each. */
export type ReplayWorkerAppDependencies = Pick<
  KoerierDependencies,
  | 'config'
  | 'log'
  | 'clock'
  | 'subscriptions'
  | 'partners'
  | 'eventArchive'
  | 'replayStore'
  | 'replayQueue'
  | 'outbox'
  | 'operationalEvents'
  | 'metrics'
>;

export function replayWorkerApp(deps: ReplayWorkerAppDependencies): QueueApp {
  const { log, config } = deps;
  return async (batch) => {
    const failed: string[] = [];
    for (const record of batch.records) {
      let message: ReplayMessage;
      try {
        message = JSON.parse(record.body) as ReplayMessage;
        if (typeof message.subscriptionId !== 'string' || typeof message.replayId !== 'string')
          throw new TypeError('not a replay message');
      } catch {
        log.warn('replay message unreadable', { messageId: record.messageId });
        continue;
      }
      try {
        await runReplayChunk(
          message,
          { lastAttempt: record.receiveCount >= queues.replays.maxReceiveCount },
          {
            store: deps.replayStore,
            queue: deps.replayQueue,
            archive: deps.eventArchive,
            subscriptions: deps.subscriptions,
            entitlements: (await deps.partners.current()).entitlements,
            outbox: deps.outbox,
            retentionMs: config.archive.retentionDays * DAY_MS,
            clock: deps.clock,
            log,
            onProgress: (subscriptionId, step) => deps.metrics.replayProgress(subscriptionId, step),
            // Told to the subscription's owner (and operators), like every operational event.
            onReplayFinished: async (finished) => {
              const subscription = await deps.subscriptions.get(finished.subscriptionId);
              if (!subscription) return;
              const { scanned, matched, sent, failed } = finished;
              const notice = replayFinishedNotice(
                { id: subscription.id, owner: subscription.owner },
                { id: finished.replayId, state: finished.state, figures: { scanned, matched, sent, failed } },
                finished.finishedAt ?? deps.clock(),
              );
              await tell(deps.operationalEvents, [notice], log);
            },
          },
        );
      } catch (error) {
        log.warn('replay chunk failed; it comes back', {
          ...message,
          receiveCount: record.receiveCount,
          error: describeError(error),
        });
        failed.push(record.messageId);
      }
    }
    return { failedMessageIds: failed };
  };
}
