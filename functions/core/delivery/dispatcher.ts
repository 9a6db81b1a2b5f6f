/**
 * The delivery function's work on one batch of delivery messages (EDU-9, EDU-17, EDU-18): it moves
 * each subscription's deliveries through typed stages and applies what they decide.
 *
 *   gates      `preparation.ts`   subscription active, key alive, sendable, long wait over;
 *              `redrive.ts`        the owner still entitled and the filters still matching, now
 *   hand-out   `hand-out-check.ts` the same, before every attempt (`mayReceive`, issue 29 item 3)
 *   split      `split.ts`         a multi-event message for a target that takes no batches
 *   admission  `admission.ts`     the target's breaker and rate (WH-6, EDU-10, EDU-12)
 *   attempt    `attempt.ts`       send with a token and judge the answer (WH-1, WH-2, WH-3)
 *   settle     `settle-attempt.ts` pure: record, progress, next step; `target-health-change.ts` the target's
 *
 * This file is the batch: decoding, grouping by subscription, one read of the targets and one write
 * of the history; each subscription's share runs in `subscription-dispatch.ts`.
 *
 * Every message ends `done` (delivered, dead-lettered, or split up) or `retry` after a delay,
 * which the handler turns into the message's visibility timeout, so nothing ever waits in memory
 * for a retry. Nothing is dropped silently: a delivery that will not be tried again becomes a dead
 * letter (kept with its events, attempts and reason) before its message is let go. The one
 * exception is a subscription that no longer exists: its owner deleted it, so there is nowhere to
 * keep it for.
 */
import { systemClock } from '../ports/clock.js';
import { decodeDelivery } from '../delivery-message/delivery-message.js';
import { errorMessage } from '../errors/describe-error.js';
import type { AttemptRecord } from './delivery-records.js';
import type {
  BatchOutcome,
  DeliveryDecision,
  DeliveryTask,
  DispatchOptions,
  DispatcherDependencies,
  QueuedDelivery,
} from './dispatch-ports.js';
import { SubscriptionDispatch } from './subscription-dispatch.js';
import { HEALTHY, type TargetState } from './target-health.js';

export async function dispatchBatch(
  tasks: readonly DeliveryTask[],
  deps: DispatcherDependencies,
  options: DispatchOptions = {},
): Promise<BatchOutcome> {
  const decisions: DeliveryDecision[] = [];
  const groups = new Map<string, QueuedDelivery[]>();
  for (const task of tasks) {
    try {
      const { message, events, eventNames } = decodeDelivery(task.body);
      groups.set(message.subscriptionId, [
        ...(groups.get(message.subscriptionId) ?? []),
        { messageId: task.messageId, receiveCount: task.receiveCount, message, events, eventReferences: eventNames },
      ]);
    } catch {
      // Cannot ever be delivered, nor kept under a subscription: straight on to the queue's
      // redrive policy, whose dead-letter queue raises the alarm.
      deps.log.error('not a delivery message; left for the dead-letter queue', { messageId: task.messageId });
      decisions.push({ messageId: task.messageId, action: 'retry', delaySeconds: 0 });
    }
  }
  const outcome = (
    all: DeliveryDecision[],
    records: readonly AttemptRecord[] = [],
    deadLettered = 0,
    suspended = 0,
  ): BatchOutcome => ({
    decisions: all,
    attempts: records.length,
    failedAttempts: records.filter((record) => record.outcome !== 'delivered').length,
    deadLettered,
    suspended,
  });
  if (groups.size === 0) return outcome(decisions);

  // One read for the targets of the whole batch, one write for its attempt history: the common
  // case costs two requests per batch, whatever the number of subscriptions in it.
  let targets: ReadonlyMap<string, TargetState>;
  try {
    targets = await deps.targets.getTargets([...groups.keys()]);
  } catch (error) {
    deps.log.error('target state unreadable; retrying the batch', { error: errorMessage(error) });
    const dispatches = [...groups].map(([subscriptionId, group]) => ({
      dispatch: new SubscriptionDispatch(subscriptionId, deps, HEALTHY),
      group,
    }));
    const later = await Promise.all(dispatches.map(({ dispatch, group }) => dispatch.retryLater(group)));
    return outcome(
      [...decisions, ...later.flat()],
      [],
      dispatches.reduce((sum, { dispatch }) => sum + dispatch.deadLettered, 0),
    );
  }
  const records: AttemptRecord[] = [];
  let deadLettered = 0;
  let suspended = 0;
  const perGroup = await Promise.all(
    [...groups].map(async ([subscriptionId, group]) => {
      const dispatch = new SubscriptionDispatch(
        subscriptionId,
        deps,
        targets.get(subscriptionId) ?? HEALTHY,
        options.deadline,
      );
      try {
        return await dispatch.run(group);
      } catch (error) {
        // Store or queue trouble: try the whole group again later; attempts already made repeat
        // with the same Idempotency-Key, which is what the receiver deduplicates on.
        deps.log.error('delivery group failed; retrying', { subscriptionId, error: errorMessage(error) });
        // Awaited here, so the `finally` below counts the dead letters retryLater writes.
        return await dispatch.retryLater(group);
      } finally {
        records.push(...dispatch.records);
        deadLettered += dispatch.deadLettered;
        suspended += dispatch.suspended;
      }
    }),
  );
  if (records.length > 0) {
    try {
      const now = (deps.clock ?? systemClock)();
      await deps.ledger.recordAttempts(records, Math.ceil((now + deps.policy.historySeconds * 1000) / 1000));
    } catch (error) {
      // History is for people; the deliveries themselves are settled. Never redo them for it.
      deps.log.warn('attempt history not written', { attempts: records.length, error: errorMessage(error) });
    }
  }
  return outcome([...decisions, ...perGroup.flat()], records, deadLettered, suspended);
}
