/**
 * Keeps the messages of local-aws-sqs across a restart of the laptop host. The emulator holds its
 * queues in memory only; this module watches it from the outside, through the few public members
 * of its `Queue` objects, and writes every change of a message to a journal on disk before the
 * emulator answers the request that made it. On the next start the messages are put back into the
 * freshly created queues, each in the state it had: visible, delayed for the rest of its delay, or
 * invisible for the rest of its visibility timeout, with its message id, body, attributes, receipt
 * handle and receive count. The handlers keep their one code path: the real SDK against the
 * emulator.
 *
 * Files under `<stateDir>/sqs/`:
 * - `snapshot.json`: every message at one moment, and the generation of the first journal that
 *   is not in it. Written to a temporary file, flushed with fsync and renamed over the old one
 *   (local/sqs-snapshot.ts).
 * - `journal-<generation>.jsonl`: one JSON line per change since that snapshot. A new snapshot
 *   is taken (and older journals removed) when the journal outgrows 8 MB or the snapshot, on start
 *   and on a clean stop.
 *
 * Compaction while the host serves (issue 15): a backlog of 100k messages is a 65–90 MB
 * snapshot, and writing it in one go held the thread for 0.4–1 s (bench/journal.ts). So the
 * next journal is opened at once (every later change goes there), the messages of that moment are
 * taken as they are (a change replaces a stored message, never alters it), and the snapshot is
 * written a couple of milliseconds of serialising at a time, with the writes and the fsyncs off
 * the thread. Journals older than the new one are removed only after the rename and the
 * directory's fsync. Until the rename, the old snapshot and every journal from its generation on
 * are still there, which is what a start replays; after it, the new snapshot and the new journal.
 * One such compaction runs at a time. On start and on a clean stop the snapshot is written in one
 * go; a clean stop during a compaction makes it give up before its rename, so it can neither
 * replace the final snapshot nor remove a journal that snapshot needs.
 *
 * What is guaranteed:
 * - A clean stop (Ctrl-C, SIGTERM, `host.stop()`) loses nothing: the pollers finish their batches
 *   first, then a final snapshot is written and flushed.
 * - A killed process (kill -9, a crash) loses nothing either, also during a compaction: each change
 *   is handed to the kernel with a synchronous write(2) before the emulator answers, so a message
 *   whose SendMessage succeeded is in the journal. The only imprecision is a message received in the
 *   last moment before the kill whose receive never reached the journal: it comes back visible at
 *   once, with its previous receive count (at least once, never lost).
 * - A crash of the machine itself (power cut, kernel panic) can lose what the kernel had not yet
 *   written: the journal is flushed with fdatasync once a second, and so is the journal a
 *   compaction replaces, as it starts; so at most about the last second is lost.
 *
 * What is not kept: queue configuration. Queues are created from functions/config/resources.ts on every start
 * (attributes, dead-letter queues and their redrive policies), so a change there takes effect; a
 * change made at run time with SetQueueAttributes is not carried over. Messages of a queue that no
 * longer exists stay in the snapshot, untouched, and a warning names them.
 */
import { close, closeSync, fdatasync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { createRequestHandler } from 'local-aws-sqs';
import {
  journalName,
  readState,
  removeJournals,
  removeJournalsSync,
  replay,
  type Change,
} from './sqs-journal-files.js';
import {
  removeAbandonedSnapshots,
  writeSnapshotInSlices,
  writeSnapshotSync,
  type EmulatorRecord,
  type SnapshotContent,
  type SnapshotStage,
  type StoredMessage,
} from './sqs-snapshot.js';

type SqsService = ReturnType<typeof createRequestHandler>['service'];

/** The emulator's bookkeeping around a record (`Queue.newRecord`). */
interface EmulatorEntry {
  visible: boolean;
  delayed: boolean;
  record: EmulatorRecord;
  /** When the current visibility timeout started. */
  tmStart?: number;
}

/** The members of local-aws-sqs's `Queue` this module relies on (all public in its typings). */
interface EmulatorQueue {
  readonly QueueName: string;
  DelaySeconds: number;
  VisibilityTimeout: number;
  MessageRetentionPeriod: number;
  newRecord: (record: EmulatorRecord, delaySeconds?: number) => EmulatorEntry;
  receive(options: {
    VisibilityTimeout?: unknown;
    WaitTimeSeconds?: unknown;
    MaxNumberOfMessages?: unknown;
  }): Promise<EmulatorRecord[]>;
  delete(receiptHandle: string): boolean;
  changeVisibility(receiptHandle: string, visibilityTimeout: string | number): boolean;
  clearRecords(): void;
}

const MIN_COMPACTION_BYTES = 8 * 1024 * 1024;
const DATASYNC_INTERVAL_MS = 1000;

export type { EmulatorRecord } from './sqs-snapshot.js';

/** Where a compaction while serving stands: `started` once the next journal is open, `done` once the old ones are removed. */
export type CompactionStage = 'started' | SnapshotStage | 'done';

export interface SqsJournalOptions {
  /** Compacts in one go on the thread, as before issue 15: the baseline of bench/journal.ts. */
  readonly synchronousCompaction?: boolean;
  /** Awaited at each stage of a compaction while serving; for tests that kill the process there. */
  readonly onCompactionStage?: (stage: CompactionStage) => void | Promise<void>;
}

export interface SqsJournal {
  /** Messages restored into the emulator at start, per queue. */
  readonly restored: Readonly<Record<string, number>>;
  /**
   * Compacts now, as the journal's growth does; resolves once it is done, given up or failed (a
   * failure is logged and loses nothing). While one runs, it is the promise of that one.
   */
  compact(): Promise<void>;
  /** Writes a final snapshot and closes the journal; call after the emulator stopped answering. */
  close(): void;
}

/**
 * Restores the messages kept under `directory` into the queues of `service` (which must already
 * exist), then journals every later change. Queues created later are watched from their first
 * request on, through `watchNewQueues`.
 */
export function openSqsJournal(
  directory: string,
  service: SqsService,
  log: (line: string) => void = () => undefined,
  options: SqsJournalOptions = {},
): SqsJournal & { watchNewQueues(): void } {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  removeAbandonedSnapshots(directory);
  const { messages: stored, generation: lastGeneration } = readState(directory);
  const queues = () => service.Queues as unknown as EmulatorQueue[];

  /** What the journal says each queue holds: the state a restart restores. */
  const state = new Map<string, Map<string, StoredMessage>>();
  /** The emulator's own entries, to read when a visibility timeout started. */
  const entries = new Map<string, Map<string, EmulatorEntry>>();
  const of = <T>(map: Map<string, Map<string, T>>, queue: string) => {
    let inner = map.get(queue);
    if (!inner) map.set(queue, (inner = new Map()));
    return inner;
  };
  for (const [queue, messages] of Object.entries(stored)) {
    for (const message of messages) of(state, queue).set(message.record.MessageId, message);
  }

  const restored: Record<string, number> = {};
  const restoredQueues = new Set<string>();
  /** Puts the queue's kept messages back, once per queue name (also for a queue made at run time, e.g. a pull subscription's). */
  const restoreQueue = (queue: EmulatorQueue) => {
    if (restoredQueues.has(queue.QueueName)) return;
    restoredQueues.add(queue.QueueName);
    const messages = state.get(queue.QueueName);
    if (!messages) return;
    const now = Date.now();
    for (const [id, message] of messages) {
      if (expired(message, queue, now)) {
        messages.delete(id);
        continue;
      }
      of(entries, queue.QueueName).set(id, restore(queue, message, now));
      restored[queue.QueueName] = (restored[queue.QueueName] ?? 0) + 1;
    }
  };
  for (const queue of queues()) restoreQueue(queue);
  const orphaned = [...state.keys()].filter(
    (name) => !queues().some((queue) => queue.QueueName === name) && (state.get(name)?.size ?? 0) > 0,
  );
  if (orphaned.length > 0) {
    log(
      JSON.stringify({
        level: 'warn',
        time: new Date().toISOString(),
        message: 'the SQS state holds messages of queues that no longer exist; they are kept, not restored',
        queues: Object.fromEntries(orphaned.map((name) => [name, state.get(name)?.size ?? 0])),
      }),
    );
  }

  let generation = lastGeneration;
  let journal = -1;
  let journalBytes = 0;
  let snapshotBytes = 0;
  let dirty = false;
  /** The once-a-second flush while it runs: no descriptor is closed under it. */
  let flushing: Promise<void> | undefined;
  let closed = false;

  let compacting: Promise<void> | undefined;

  /** Closes a journal's descriptor, once a flush still running on it is done. */
  const closeJournal = (fd: number) => {
    if (flushing) void flushing.finally(() => closeSync(fd));
    else closeSync(fd);
  };

  /** Opens the journal of the next generation for every later change; returns the messages of this moment and the journal it replaces. */
  const nextGeneration = () => {
    const replaced = { fd: journal, dirty };
    generation += 1;
    journal = openSync(join(directory, journalName(generation)), 'a', 0o600);
    journalBytes = 0;
    dirty = false;
    const content: SnapshotContent = {
      generation,
      queues: [...state]
        .filter(([, messages]) => messages.size > 0)
        .map(([queue, messages]) => [queue, [...messages.values()]] as const),
    };
    return { content, replaced };
  };

  /** In one go: on start, on a clean stop, and as the benchmark's baseline. */
  const compactSynchronously = () => {
    const { content, replaced } = nextGeneration();
    if (replaced.fd !== -1) closeJournal(replaced.fd);
    snapshotBytes = writeSnapshotSync(directory, content);
    removeJournalsSync(directory, content.generation);
  };

  const compactInSlices = async (content: SnapshotContent, replaced: { fd: number; dirty: boolean }) => {
    const stage = options.onCompactionStage;
    await stage?.('started');
    // Its last second may not be on the disk yet, and the snapshot that holds it will not be for a while.
    await flushing;
    if (replaced.dirty) await promisify(fdatasync)(replaced.fd);
    await promisify(close)(replaced.fd);
    const bytes = await writeSnapshotInSlices(directory, content, {
      givenUp: () => closed,
      ...(stage && { onStage: stage }),
    });
    // After a clean stop its final snapshot has removed these journals already.
    if (bytes === undefined || closed) return;
    snapshotBytes = bytes;
    await removeJournals(directory, content.generation);
    await stage?.('done');
  };

  const compact = (): Promise<void> => {
    if (closed) return Promise.resolve();
    if (options.synchronousCompaction) {
      compactSynchronously();
      return Promise.resolve();
    }
    if (compacting) return compacting;
    const { content, replaced } = nextGeneration();
    compacting = compactInSlices(content, replaced)
      .catch((error: unknown) => {
        // Nothing is lost: the old snapshot and every journal since are still there.
        log(
          JSON.stringify({
            level: 'warn',
            time: new Date().toISOString(),
            message: 'an SQS snapshot could not be written',
            error: String(error),
          }),
        );
      })
      .finally(() => {
        compacting = undefined;
      });
    return compacting;
  };

  const append = (changes: readonly Change[]) => {
    if (closed || changes.length === 0) return;
    const text = changes.map((change) => JSON.stringify(change)).join('\n') + '\n';
    // Synchronous on purpose: the emulator must not answer before the change is with the kernel.
    writeSync(journal, text);
    journalBytes += Buffer.byteLength(text);
    dirty = true;
    // A copy through JSON: the emulator keeps changing its own record objects.
    for (const line of text.trimEnd().split('\n')) replay(state, JSON.parse(line) as Change);
    if (!compacting && journalBytes > Math.max(MIN_COMPACTION_BYTES, snapshotBytes)) void compact();
  };

  const watched = new WeakSet<EmulatorQueue>();
  const watch = (queue: EmulatorQueue) => {
    if (watched.has(queue)) return;
    watched.add(queue);
    const name = queue.QueueName;
    const newRecord = queue.newRecord;
    queue.newRecord = (record, delaySeconds) => {
      const entry = newRecord(record, delaySeconds);
      // The emulator's own rule: no number means the queue's DelaySeconds.
      const delay = Number.isNaN(Number(delaySeconds)) ? queue.DelaySeconds : Number(delaySeconds);
      of(entries, name).set(record.MessageId, entry);
      const source = record.attributes['DeadLetterQueueSourceArn']?.split(':').at(-1);
      if (source) entries.get(source)?.delete(record.MessageId);
      append([{ op: 'put', queue: name, record, delayedUntil: delay > 0 ? Date.now() + delay * 1000 : 0 }]);
      return entry;
    };
    const receive = queue.receive.bind(queue);
    queue.receive = async (options) => {
      const records = await receive(options);
      const requested = Number(options?.VisibilityTimeout);
      const timeoutMs = (Number.isNaN(requested) ? queue.VisibilityTimeout : requested) * 1000;
      append(
        records.map((record) => ({
          op: 'receive',
          queue: name,
          id: record.MessageId,
          receiveCount: record.attributes.ApproximateReceiveCount,
          firstReceive: record.attributes['ApproximateFirstReceiveTimestamp'] ?? '',
          receiptHandle: record.ReceiptHandle,
          invisibleUntil: (entries.get(name)?.get(record.MessageId)?.tmStart ?? Date.now()) + timeoutMs,
        })),
      );
      return records;
    };
    const changeVisibility = queue.changeVisibility.bind(queue);
    queue.changeVisibility = (receiptHandle, visibilityTimeout) => {
      const changed = changeVisibility(receiptHandle, visibilityTimeout);
      const id = messageIdOf(receiptHandle);
      const entry = id === undefined ? undefined : entries.get(name)?.get(id);
      if (changed && id !== undefined && entry) {
        append([
          {
            op: 'visibility',
            queue: name,
            id,
            receiveCount: entry.record.attributes.ApproximateReceiveCount,
            invisibleUntil: (entry.tmStart ?? Date.now()) + Number(visibilityTimeout) * 1000,
          },
        ]);
      }
      return changed;
    };
    const deleteMessage = queue.delete.bind(queue);
    queue.delete = (receiptHandle) => {
      const deleted = deleteMessage(receiptHandle);
      const id = messageIdOf(receiptHandle);
      if (deleted && id !== undefined && entries.get(name)?.delete(id)) append([{ op: 'delete', queue: name, id }]);
      return deleted;
    };
    const clearRecords = queue.clearRecords.bind(queue);
    queue.clearRecords = () => {
      clearRecords();
      entries.get(name)?.clear();
      append([{ op: 'clear', queue: name }]);
    };
  };

  const watchNewQueues = () => {
    for (const queue of queues()) {
      // Restored before it is watched, so putting the messages back is not journalled again.
      if (!watched.has(queue)) restoreQueue(queue);
      watch(queue);
    }
  };

  // Nothing is served yet: in one go.
  compactSynchronously();
  watchNewQueues();
  // Off the thread: a flush that waits for the disk (behind a compaction's fsync of 90 MB, say)
  // took 5–30 ms when it was synchronous.
  const datasync = setInterval(() => {
    if (!dirty || journal === -1 || flushing) return;
    dirty = false;
    flushing = promisify(fdatasync)(journal)
      .catch((error: unknown) => {
        dirty = true;
        log(
          JSON.stringify({
            level: 'warn',
            time: new Date().toISOString(),
            message: 'the SQS journal could not be flushed',
            error: String(error),
          }),
        );
      })
      .finally(() => {
        flushing = undefined;
      });
  }, DATASYNC_INTERVAL_MS);
  datasync.unref();

  return {
    restored,
    watchNewQueues,
    compact,
    close() {
      if (closed) return;
      // From here on a compaction still running gives up before its rename.
      closed = true;
      clearInterval(datasync);
      // Expired messages are dropped by the emulator without telling anyone; drop them here too.
      const closingAt = Date.now();
      for (const queue of queues()) {
        for (const [id, message] of state.get(queue.QueueName) ?? []) {
          if (expired(message, queue, closingAt)) state.get(queue.QueueName)?.delete(id);
        }
      }
      compactSynchronously();
      closeJournal(journal);
    },
  };
}

/** Puts a stored message back into `queue` in the state it was in. */
function restore(queue: EmulatorQueue, message: StoredMessage, now: number): EmulatorEntry {
  const record = structuredClone(message.record);
  const remainingDelay = Math.max(0, message.delayedUntil - now) / 1000;
  if (message.invisibleUntil === 0 || Number(record.attributes.ApproximateReceiveCount) === 0) {
    return queue.newRecord(record, remainingDelay);
  }
  // ChangeMessageVisibility is the emulator's one public way to hide a message for a while, and
  // it counts a receive (and, at the end of the timeout, applies the redrive policy as usual).
  const receiveCount = record.attributes.ApproximateReceiveCount;
  const firstReceive = record.attributes['ApproximateFirstReceiveTimestamp'];
  record.attributes.ApproximateReceiveCount = String(Number(receiveCount) - 1);
  const entry = queue.newRecord(record, 0);
  queue.changeVisibility(record.ReceiptHandle, Math.max(0, message.invisibleUntil - now) / 1000);
  entry.record.attributes.ApproximateReceiveCount = receiveCount;
  entry.record.attributes['ApproximateFirstReceiveTimestamp'] = firstReceive;
  return entry;
}

function expired(message: StoredMessage, queue: EmulatorQueue, now: number): boolean {
  return Number(message.record.attributes.SentTimestamp) + queue.MessageRetentionPeriod * 1000 < now;
}

/** local-aws-sqs's receipt handles are base64 of a UUID followed by JSON naming the message. */
function messageIdOf(receiptHandle: string): string | undefined {
  try {
    const text = Buffer.from(receiptHandle, 'base64').toString('utf8');
    const id = (JSON.parse(text.slice(text.indexOf('{'))) as { MessageId?: unknown }).MessageId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
