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
 *   added to a queue, comes due after its delay or is made visible again by ChangeMessageVisibility,
 *   so they receive it at once instead of at their next poll (issue 15, item 3), and can pause long
 *   between polls of an idle queue.
 *
 * - A receive in the emulator scans its queue every 10 ms and ends only when it has
 *   MaxNumberOfMessages or its wait plus 40 ms is over, so even a short poll (WaitTimeSeconds 0)
 *   asking for ten took 40 ms whenever fewer than ten were there: on the laptop, every hop of an
 *   event through a queue cost 40 ms (issue 15, item 3). SQS answers a short poll at once with what
 *   it has, and a long poll as soon as there is any. So a receive with messages ready takes them
 *   at once, through the emulator's own visibility routine, and a short poll with none ready
 *   answers empty at once. A long poll with none ready, and any receive of a FIFO queue, is the
 *   emulator's own.
 *
 * Installed on every queue before the SQS journal (local/sqs-journal.ts) wraps it, so the journal
 * records the corrected count.
 *
 * The shim knows a message only while the emulator holds it: a deleted, purged or dead-lettered
 * message is forgotten at once. The soak found every message ever sent kept here (about 1 KB each,
 * the host's memory growing with every event; docs/PERFORMANCE.md, "Soak"). A message the emulator
 * drops on its own at the end of its retention period stays known here; the laptop's queues keep
 * messages longer than a laptop session runs.
 */
import { randomUUID } from 'node:crypto';
import type { createRequestHandler } from 'local-aws-sqs';

type SqsService = ReturnType<typeof createRequestHandler>['service'];

interface ShimmedRecord {
  MessageId: string;
  ReceiptHandle: string;
  attributes: { ApproximateReceiveCount: string; DeadLetterQueueSourceArn?: string };
}

/** The emulator's own entry around a record: the objects its receive scans. */
interface ShimmedEntry {
  readonly record: ShimmedRecord;
  visible: boolean;
  delayed: boolean;
}

interface ReceiveOptions {
  VisibilityTimeout?: unknown;
  WaitTimeSeconds?: unknown;
  MaxNumberOfMessages?: unknown;
}

interface ShimmedQueue {
  QueueName: string;
  FifoQueue?: boolean;
  VisibilityTimeout: number;
  DelaySeconds: number;
  ReceiveMessageWaitTimeSeconds: number;
  newRecord: (record: ShimmedRecord, delaySeconds?: number) => ShimmedEntry;
  changeVisibility(receiptHandle: string, visibilityTimeout: string | number): boolean;
  receive(options: ReceiveOptions): Promise<unknown[]>;
  delete(receiptHandle: string): boolean;
  clearRecords(): void;
}

/** Called with the queue's name whenever a message added to it (sent, moved back from a dead-letter queue) can be received: at once, or when its delay ends. */
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
  /** Per queue name, the emulator's entries of the messages it holds (it keeps its list private; they pass through newRecord). */
  const entriesByQueue = new Map<string, Map<string, ShimmedEntry>>();
  const watchNewQueues = () => {
    for (const queue of service.Queues as unknown as ShimmedQueue[]) {
      if (patched.has(queue)) continue;
      patched.add(queue);
      const entries = new Map<string, ShimmedEntry>();
      entriesByQueue.set(queue.QueueName, entries);
      // Messages sent without a delay whose 0 ms ready timer has not fired yet (see receive).
      let becomingReady = 0;
      const newRecord = queue.newRecord;
      queue.newRecord = (record, delaySeconds) => {
        const entry = newRecord(record, delaySeconds);
        entries.set(record.MessageId, entry);
        // A message the redrive policy moved here has left its source queue.
        const source = record.attributes.DeadLetterQueueSourceArn?.split(':').at(-1);
        if (source && source !== queue.QueueName) entriesByQueue.get(source)?.delete(record.MessageId);
        // Told when a receive can take it: the emulator marks even an undelayed message ready on a
        // timer of its delay (0 ms for none), and a timer set after its own fires after it. Told any
        // sooner, a woken poller found nothing and slept its whole pause.
        const delayMs = (Number.isNaN(Number(delaySeconds)) ? queue.DelaySeconds : Number(delaySeconds)) * 1000;
        if (delayMs === 0) {
          becomingReady++;
          setTimeout(() => becomingReady--, 0);
        }
        if (listeners.size > 0)
          setTimeout(() => listeners.forEach((listener) => listener(queue.QueueName)), delayMs).unref();
        return entry;
      };
      const changeVisibility = queue.changeVisibility.bind(queue);
      queue.changeVisibility = (receiptHandle, visibilityTimeout) => {
        const record = entries.get(messageIdOf(receiptHandle) ?? '')?.record;
        const count = record?.attributes.ApproximateReceiveCount;
        const changed = changeVisibility(receiptHandle, visibilityTimeout);
        if (record && count !== undefined) record.attributes.ApproximateReceiveCount = count;
        // Told when the message is visible again (a retry's delay, a release), as a delayed send is.
        const visibleInMs = Number(visibilityTimeout) * 1000;
        if (record && listeners.size > 0 && Number.isFinite(visibleInMs))
          setTimeout(() => listeners.forEach((listener) => listener(queue.QueueName)), visibleInMs).unref();
        return changed;
      };
      const receive = queue.receive.bind(queue);
      queue.receive = async (options) => {
        const wanted = Number(options?.MaxNumberOfMessages ?? 1);
        const waitSeconds = Number(options?.WaitTimeSeconds ?? queue.ReceiveMessageWaitTimeSeconds);
        const readyNow = () => {
          const ready: ShimmedEntry[] = [];
          for (const entry of entries.values())
            if (entry.visible && !entry.delayed && ready.push(entry) >= wanted) break;
          return ready;
        };
        let ready = readyNow();
        // On SQS a message is receivable once SendMessage has answered; here not until the
        // emulator's 0 ms ready timer fires, which a receive arriving at once can beat (and then
        // miss it, or take only the messages sent before it). One timer turn later it has fired.
        if (ready.length < wanted && becomingReady > 0) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          ready = readyNow();
        }
        if (ready.length === 0) return waitSeconds > 0 ? receive(options) : [];
        if (queue.FifoQueue) return receive({ ...options, MaxNumberOfMessages: ready.length });
        // Taken at once, as the emulator's own scan takes them: a new receipt handle, then its one
        // visibility routine (through ChangeMessageVisibility, before this module's count fix)
        // counts the receive, hides the message and arms the redrive policy for the timeout's end.
        const requested = Number(options?.VisibilityTimeout);
        const timeout = Number.isNaN(requested) ? queue.VisibilityTimeout : requested;
        return ready.map((entry) => {
          entry.record.ReceiptHandle = receiptHandleFor(entry.record.MessageId, queue.QueueName);
          changeVisibility(entry.record.ReceiptHandle, timeout);
          return { ...entry.record, attributes: { ...entry.record.attributes } };
        });
      };
      const deleteMessage = queue.delete.bind(queue);
      queue.delete = (receiptHandle) => {
        const deleted = deleteMessage(receiptHandle);
        if (deleted) entries.delete(messageIdOf(receiptHandle) ?? '');
        return deleted;
      };
      const clearRecords = queue.clearRecords.bind(queue);
      queue.clearRecords = () => {
        clearRecords();
        entries.clear();
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
    trackedMessages: () => [...entriesByQueue.values()].reduce((sum, entries) => sum + entries.size, 0),
  };
}

/** A new receipt handle in the emulator's own form, which its other actions read the message id from. */
function receiptHandleFor(messageId: string, queueName: string): string {
  return Buffer.from(
    randomUUID() + JSON.stringify({ date: Date.now(), MessageId: messageId, QueueName: queueName }),
    'utf-8',
  ).toString('base64');
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
