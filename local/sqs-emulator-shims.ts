/**
 * Where local-aws-sqs differs from SQS in a way a consumer can see, put right from the outside,
 * as local/dynalite-shims.ts does for dynalite:
 *
 * - `ChangeMessageVisibility` raises a message's `ApproximateReceiveCount` in the emulator (its
 *   one visibility routine counts a receive every time). On SQS only a receive counts. Pull
 *   delivery shows the count as the delivery count and dead-letters by it (docs/PULL.md), so a
 *   release or a renewed lock must not count as a delivery: the count is put back after the call.
 *
 * - A long poll on SQS returns as soon as a message is there; the laptop's pollers receive with
 *   short polls (local/event-source-poller.ts). `onArrival` tells them the moment a message is
 *   added to a queue, so they receive it at once instead of at their next poll (issue 15, item 3).
 *
 * Installed on every queue before the SQS journal (local/sqs-journal.ts) wraps it, so the journal
 * records the corrected count.
 *
 * To put the count back the shim must find a message's record by its id; it knows a message only
 * while the emulator holds it. A deleted, purged or dead-lettered message is forgotten at once, and
 * the record is held weakly, so one the emulator drops on its own (retention) is not kept alive
 * either: the soak found every message ever sent kept here (about 1 KB each, the host's memory
 * growing with every event; docs/PERFORMANCE.md, "Soak").
 */
import type { createRequestHandler } from 'local-aws-sqs';

type SqsService = ReturnType<typeof createRequestHandler>['service'];

interface ShimmedRecord {
  MessageId: string;
  attributes: { ApproximateReceiveCount: string; DeadLetterQueueSourceArn?: string };
}

interface ShimmedQueue {
  QueueName: string;
  newRecord: (record: ShimmedRecord, delaySeconds?: number) => { record: ShimmedRecord };
  changeVisibility(receiptHandle: string, visibilityTimeout: string | number): boolean;
  delete(receiptHandle: string): boolean;
  clearRecords(): void;
}

/** Called with the queue's name whenever a message is added to it (sent, moved back from a dead-letter queue). */
export type ArrivalListener = (queueName: string) => void;

export interface SqsEmulatorShims {
  watchNewQueues(): void;
  /** Subscribes to message arrivals; the returned function unsubscribes. */
  onArrival(listener: ArrivalListener): () => void;
  /** Messages the shim knows of, over every queue: at most those the emulator holds. */
  trackedMessages(): number;
}

export function installSqsEmulatorShims(service: SqsService): SqsEmulatorShims {
  const patched = new WeakSet<object>();
  const listeners = new Set<ArrivalListener>();
  /** Queue name → message id → the emulator's record, for as long as the emulator keeps it. */
  const byQueue = new Map<string, Map<string, WeakRef<ShimmedRecord>>>();
  // A record the emulator dropped without a request (its retention timer) takes its id along once collected.
  const collected = new FinalizationRegistry<{ records: Map<string, WeakRef<ShimmedRecord>>; id: string }>(({ records, id }) => {
    if (records.get(id)?.deref() === undefined) records.delete(id);
  });
  const watchNewQueues = () => {
    for (const queue of service.Queues as unknown as ShimmedQueue[]) {
      if (patched.has(queue)) continue;
      patched.add(queue);
      // The emulator keeps its records private; the ones it makes pass through newRecord.
      const records = new Map<string, WeakRef<ShimmedRecord>>();
      byQueue.set(queue.QueueName, records);
      const newRecord = queue.newRecord;
      queue.newRecord = (record, delaySeconds) => {
        const entry = newRecord(record, delaySeconds);
        records.set(record.MessageId, new WeakRef(entry.record));
        collected.register(entry.record, { records, id: record.MessageId });
        // A message moved to its dead-letter queue has left its source queue.
        const source = record.attributes.DeadLetterQueueSourceArn?.split(':').at(-1);
        if (source) byQueue.get(source)?.delete(record.MessageId);
        // After this request is answered: the emulator has the message by then, and a listener's receive finds it.
        if (listeners.size > 0) setImmediate(() => listeners.forEach((listener) => listener(queue.QueueName)));
        return entry;
      };
      const changeVisibility = queue.changeVisibility.bind(queue);
      queue.changeVisibility = (receiptHandle, visibilityTimeout) => {
        const record = records.get(messageIdOf(receiptHandle) ?? '')?.deref();
        const count = record?.attributes.ApproximateReceiveCount;
        const changed = changeVisibility(receiptHandle, visibilityTimeout);
        if (record && count !== undefined) record.attributes.ApproximateReceiveCount = count;
        return changed;
      };
      const deleteMessage = queue.delete.bind(queue);
      queue.delete = (receiptHandle) => {
        // The emulator deletes by message id (or throws for a FIFO queue's stale handle, and then nothing was deleted).
        const deleted = deleteMessage(receiptHandle);
        records.delete(messageIdOf(receiptHandle) ?? '');
        return deleted;
      };
      const clearRecords = queue.clearRecords.bind(queue);
      queue.clearRecords = () => {
        clearRecords();
        records.clear();
      };
    }
  };
  watchNewQueues();
  return {
    watchNewQueues,
    onArrival(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    trackedMessages: () => [...byQueue.values()].reduce((sum, records) => sum + records.size, 0),
  };
}

/** The emulator's receipt handle: base64 of a UUID and `{"date", "MessageId", "QueueName"}`. */
function messageIdOf(receiptHandle: string): string | undefined {
  try {
    const text = Buffer.from(receiptHandle, 'base64').toString('utf8');
    const id = (JSON.parse(text.slice(text.indexOf('{'))) as { MessageId?: unknown }).MessageId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
