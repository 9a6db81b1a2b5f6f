/**
 * The SQS journal's files under `<stateDir>/sqs/` other than the snapshot's writing
 * (local/sqs-snapshot.ts): the changes a journal holds, how one is applied to the kept state
 * (live and at start alike), reading the state back from the snapshot and the journals after it,
 * and removing the journals a snapshot replaced.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SNAPSHOT, type EmulatorRecord, type Snapshot, type StoredMessage } from './sqs-snapshot.js';

/** One line of a journal. */
export type Change =
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
  | {
      readonly op: 'visibility';
      readonly queue: string;
      readonly id: string;
      readonly receiveCount: string;
      readonly invisibleUntil: number;
    }
  | { readonly op: 'delete'; readonly queue: string; readonly id: string }
  | { readonly op: 'clear'; readonly queue: string };

export const JOURNAL_PATTERN = /^journal-(\d+)\.jsonl$/;

export function journalName(generation: number): string {
  return `journal-${String(generation).padStart(12, '0')}.jsonl`;
}

/** The snapshot, with every journal of its generation or later replayed on top, in order. */
export function readState(directory: string): { messages: Record<string, StoredMessage[]>; generation: number } {
  let snapshot: Snapshot = { version: 1, generation: 0, savedAt: '', queues: {} };
  try {
    snapshot = JSON.parse(readFileSync(join(directory, SNAPSHOT), 'utf8')) as Snapshot;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new Error(`the SQS snapshot ${join(directory, SNAPSHOT)} cannot be read: ${String(error)}`, {
        cause: error,
      });
  }
  const state = new Map<string, Map<string, StoredMessage>>();
  for (const [queue, messages] of Object.entries(snapshot.queues))
    state.set(queue, new Map(messages.map((m) => [m.record.MessageId, m])));
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
        throw new Error(`the SQS journal ${journal.name} is damaged at line ${index + 1}: ${String(error)}`, {
          cause: error,
        });
      }
      replay(state, change);
    }
  }
  return {
    messages: Object.fromEntries([...state].map(([queue, messages]) => [queue, [...messages.values()]])),
    generation,
  };
}

/** Applies one change to what the journal says each queue holds, live and at start alike. */
export function replay(state: Map<string, Map<string, StoredMessage>>, change: Change): void {
  const queue = state.get(change.queue) ?? new Map<string, StoredMessage>();
  state.set(change.queue, queue);
  switch (change.op) {
    case 'put': {
      queue.set(change.record.MessageId, {
        record: change.record,
        delayedUntil: change.delayedUntil,
        invisibleUntil: 0,
      });
      const source = change.record.attributes['DeadLetterQueueSourceArn']?.split(':').at(-1);
      if (source && source !== change.queue) state.get(source)?.delete(change.record.MessageId);
      break;
    }
    case 'receive':
    case 'visibility': {
      const message = queue.get(change.id);
      if (!message) break;
      // Replaced, not altered: a snapshot being written may hold the message as it was.
      const attributes: EmulatorRecord['attributes'] = {
        ...message.record.attributes,
        ApproximateReceiveCount: change.receiveCount,
      };
      const record: EmulatorRecord = { ...message.record, attributes };
      if (change.op === 'receive') {
        attributes['ApproximateFirstReceiveTimestamp'] = change.firstReceive;
        record.ReceiptHandle = change.receiptHandle;
      }
      queue.set(change.id, { ...message, record, invisibleUntil: change.invisibleUntil });
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

/** Journals older than `generation`: once a snapshot of that generation is in place, nothing needs them. */
export function removeJournalsSync(directory: string, generation: number): void {
  for (const name of readdirSync(directory)) {
    const match = JOURNAL_PATTERN.exec(name);
    if (match && Number(match[1]) < generation) rmSync(join(directory, name), { force: true });
  }
}

export async function removeJournals(directory: string, generation: number): Promise<void> {
  for (const name of await readdir(directory)) {
    const match = JOURNAL_PATTERN.exec(name);
    if (match && Number(match[1]) < generation) await rm(join(directory, name), { force: true });
  }
}
