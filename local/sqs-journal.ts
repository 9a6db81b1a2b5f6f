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
 *   is not in it. Written to a temporary file, flushed with fsync and renamed over the old one.
 * - `journal-<generation>.jsonl`: one JSON line per change since that snapshot. A new snapshot
 *   is taken (and older journals removed) when the journal outgrows 8 MB or the snapshot, on start
 *   and on a clean stop.
 *
 * What is guaranteed:
 * - A clean stop (Ctrl-C, SIGTERM, `host.stop()`) loses nothing: the pollers finish their batches
 *   first, then a final snapshot is written and flushed.
 * - A killed process (kill -9, a crash) loses nothing either: each change is handed to the kernel
 *   with a synchronous write(2) before the emulator answers, so a message whose SendMessage
 *   succeeded is in the journal. The only imprecision is a message received in the last moment
 *   before the kill whose receive never reached the journal: it comes back visible at once, with its
 *   previous receive count (at least once, never lost).
 * - A crash of the machine itself (power cut, kernel panic) can lose what the kernel had not yet
 *   written: the journal is flushed with fdatasync once a second, so at most about the last second.
 *
 * What is not kept: queue configuration. Queues are created from lib/resources.ts on every start
 * (attributes, dead-letter queues and their redrive policies), so a change there takes effect; a
 * change made at run time with SetQueueAttributes is not carried over. Messages of a queue that no
 * longer exists stay in the snapshot, untouched, and a warning names them.
 */
import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { createRequestHandler } from 'local-aws-sqs';

type SqsService = ReturnType<typeof createRequestHandler>['service'];

/** A message as local-aws-sqs keeps it (its `Queue.createRecord`), all plain JSON. */
export interface EmulatorRecord {
  MessageId: string;
  ReceiptHandle: string;
  MessageBody: string;
  attributes: Record<string, string | undefined> & { ApproximateReceiveCount: string; SentTimestamp: string };
  MessageAttributes?: unknown;
  MD5OfMessageBody?: string;
  MD5OfMessageAttributes?: string;
}

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
  receive(options: { VisibilityTimeout?: unknown; WaitTimeSeconds?: unknown; MaxNumberOfMessages?: unknown }): Promise<EmulatorRecord[]>;
  delete(receiptHandle: string): boolean;
  changeVisibility(receiptHandle: string, visibilityTimeout: string | number): boolean;
  clearRecords(): void;
}

type Change =
  | { readonly op: 'put'; readonly queue: string; readonly record: EmulatorRecord; readonly delayedUntil: number }
  | {
      readonly op: 'receive';
      readonly queue: string;
      readonly id: string;
      readonly receiveCount: string;
      readonly firstReceive: string;
      readonly receiptHandle: string;
      readonly invisibleUntil: number;
    }
  | { readonly op: 'visibility'; readonly queue: string; readonly id: string; readonly receiveCount: string; readonly invisibleUntil: number }
  | { readonly op: 'delete'; readonly queue: string; readonly id: string }
  | { readonly op: 'clear'; readonly queue: string };

/** One message as the snapshot keeps it. Times are epoch milliseconds; 0 means not delayed / not invisible. */
interface StoredMessage {
  record: EmulatorRecord;
  delayedUntil: number;
  invisibleUntil: number;
}

interface Snapshot {
  readonly version: 1;
  /** Journals of this generation and later hold what happened after this snapshot. */
  readonly generation: number;
  readonly savedAt: string;
  readonly queues: Record<string, StoredMessage[]>;
}

const SNAPSHOT = 'snapshot.json';
const JOURNAL_PATTERN = /^journal-(\d+)\.jsonl$/;
const MIN_COMPACTION_BYTES = 8 * 1024 * 1024;
const DATASYNC_INTERVAL_MS = 1000;

export interface SqsJournal {
  /** Messages restored into the emulator at start, per queue. */
  readonly restored: Readonly<Record<string, number>>;
  /** Writes a final snapshot and closes the journal; call after the emulator stopped answering. */
  close(): void;
}

/**
 * Restores the messages kept under `directory` into the queues of `service` (which must already
 * exist), then journals every later change. Queues created later are watched from their first
 * request on, through `watchNewQueues`.
 */
export function openSqsJournal(directory: string, service: SqsService, log: (line: string) => void = () => undefined): SqsJournal & { watchNewQueues(): void } {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
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
  const orphaned = [...state.keys()].filter((name) => !queues().some((queue) => queue.QueueName === name) && (state.get(name)?.size ?? 0) > 0);
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
  let closed = false;

  /** A new snapshot of `state` and an empty journal of the next generation; older journals go. */
  const compact = () => {
    generation += 1;
    if (journal !== -1) closeSync(journal);
    journal = openSync(join(directory, journalName(generation)), 'a', 0o600);
    journalBytes = 0;
    snapshotBytes = writeSnapshot(directory, generation, state);
    for (const name of readdirSync(directory)) {
      const match = JOURNAL_PATTERN.exec(name);
      if (match && Number(match[1]) < generation) rmSync(join(directory, name), { force: true });
    }
    dirty = false;
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
    if (journalBytes > Math.max(MIN_COMPACTION_BYTES, snapshotBytes)) compact();
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

  compact();
  watchNewQueues();
  const datasync = setInterval(() => {
    if (dirty && journal !== -1) {
      dirty = false;
      fdatasyncSync(journal);
    }
  }, DATASYNC_INTERVAL_MS);
  datasync.unref();

  return {
    restored,
    watchNewQueues,
    close() {
      if (closed) return;
      clearInterval(datasync);
      // Expired messages are dropped by the emulator without telling anyone; drop them here too.
      const closingAt = Date.now();
      for (const queue of queues()) {
        for (const [id, message] of state.get(queue.QueueName) ?? []) {
          if (expired(message, queue, closingAt)) state.get(queue.QueueName)?.delete(id);
        }
      }
      compact();
      closed = true;
      closeSync(journal);
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

function journalName(generation: number): string {
  return `journal-${String(generation).padStart(12, '0')}.jsonl`;
}

/** The snapshot, with every journal of its generation or later replayed on top, in order. */
function readState(directory: string): { messages: Record<string, StoredMessage[]>; generation: number } {
  let snapshot: Snapshot = { version: 1, generation: 0, savedAt: '', queues: {} };
  try {
    snapshot = JSON.parse(readFileSync(join(directory, SNAPSHOT), 'utf8')) as Snapshot;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`the SQS snapshot ${join(directory, SNAPSHOT)} cannot be read: ${String(error)}`, { cause: error });
  }
  const state = new Map<string, Map<string, StoredMessage>>();
  for (const [queue, messages] of Object.entries(snapshot.queues)) state.set(queue, new Map(messages.map((m) => [m.record.MessageId, m])));
  const journals = readdirSync(directory)
    .map((name) => ({ name, generation: Number(JOURNAL_PATTERN.exec(name)?.[1] ?? -1) }))
    .filter((journal) => journal.generation >= snapshot.generation)
    .sort((a, b) => a.generation - b.generation);
  let generation = snapshot.generation;
  for (const journal of journals) {
    generation = Math.max(generation, journal.generation);
    const lines = readFileSync(join(directory, journal.name), 'utf8').split('\n');
    for (const [index, line] of lines.entries()) {
      if (line === '') continue;
      let change: Change;
      try {
        change = JSON.parse(line) as Change;
      } catch (error) {
        // Only the very last line can be cut short (a write(2) the process did not finish).
        if (index >= lines.length - 2) break;
        throw new Error(`the SQS journal ${journal.name} is damaged at line ${index + 1}: ${String(error)}`, { cause: error });
      }
      replay(state, change);
    }
  }
  return { messages: Object.fromEntries([...state].map(([queue, messages]) => [queue, [...messages.values()]])), generation };
}

/** Applies one change to what the journal says each queue holds, live and at start alike. */
function replay(state: Map<string, Map<string, StoredMessage>>, change: Change): void {
  const queue = state.get(change.queue) ?? new Map<string, StoredMessage>();
  state.set(change.queue, queue);
  switch (change.op) {
    case 'put': {
      queue.set(change.record.MessageId, { record: change.record, delayedUntil: change.delayedUntil, invisibleUntil: 0 });
      const source = change.record.attributes['DeadLetterQueueSourceArn']?.split(':').at(-1);
      if (source && source !== change.queue) state.get(source)?.delete(change.record.MessageId);
      break;
    }
    case 'receive':
    case 'visibility': {
      const message = queue.get(change.id);
      if (!message) break;
      message.record.attributes.ApproximateReceiveCount = change.receiveCount;
      message.invisibleUntil = change.invisibleUntil;
      if (change.op === 'receive') {
        message.record.attributes['ApproximateFirstReceiveTimestamp'] = change.firstReceive;
        message.record.ReceiptHandle = change.receiptHandle;
      }
      break;
    }
    case 'delete':
      queue.delete(change.id);
      break;
    case 'clear':
      queue.clear();
      break;
  }
}

function writeSnapshot(directory: string, generation: number, state: Map<string, Map<string, StoredMessage>>): number {
  const snapshot: Snapshot = {
    version: 1,
    generation,
    savedAt: new Date().toISOString(),
    queues: Object.fromEntries([...state].filter(([, messages]) => messages.size > 0).map(([queue, messages]) => [queue, [...messages.values()]])),
  };
  const text = JSON.stringify(snapshot);
  const temporary = join(directory, `${SNAPSHOT}.tmp`);
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, join(directory, SNAPSHOT));
  // The rename itself must reach the disk before the journals it replaces are removed.
  const directoryFd = openSync(directory, 'r');
  try {
    fsyncSync(directoryFd);
  } finally {
    closeSync(directoryFd);
  }
  return statSync(join(directory, SNAPSHOT)).size;
}
