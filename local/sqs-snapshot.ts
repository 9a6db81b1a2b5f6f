/**
 * The SQS journal's `snapshot.json` (local/sqs-journal.ts): its format, and the two ways it is
 * written. Both write a temporary file of their own (named after the snapshot's generation, so two
 * writers never share one), flush it with fsync, rename it over `snapshot.json` and flush the
 * directory, so that a crash at any moment leaves either the old snapshot or the new one, whole.
 *
 * - `writeSnapshotSync`: in one go, blocking the thread; for the start and the clean stop, when
 *   nothing is being served.
 * - `writeSnapshotInSlices`: while the host serves. A 100k-message backlog is a 65–90 MB snapshot,
 *   and serialising plus writing it in one go stalled the thread for 0.4–1 s; here it is
 *   serialised about 2 ms at a time with the writes and fsyncs done off the thread, and the
 *   snapshot it replaces gets a second name first so that the rename does not free its blocks on
 *   the thread. It gives up (and removes its temporary file) when `givenUp()` says so, at the
 *   latest just before the rename, which is synchronous so that nothing can slip between that
 *   check and the rename.
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { link, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

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

/**
 * One message as the snapshot keeps it. Times are epoch milliseconds; 0 means not delayed / not
 * invisible. Never changed once made (a change replaces it), so a list of them taken at one moment
 * stays that moment's while a sliced write runs.
 */
export interface StoredMessage {
  readonly record: EmulatorRecord;
  readonly delayedUntil: number;
  readonly invisibleUntil: number;
}

export interface Snapshot {
  readonly version: 1;
  /** Journals of this generation and later hold what happened after this snapshot. */
  readonly generation: number;
  readonly savedAt: string;
  readonly queues: Record<string, readonly StoredMessage[]>;
}

/** What a snapshot holds: the generation of the first journal not in it, and each queue's messages. */
export interface SnapshotContent {
  readonly generation: number;
  readonly queues: ReadonlyArray<readonly [string, readonly StoredMessage[]]>;
}

/** Where a sliced write stands; a test pauses at one to kill the process there. */
export type SnapshotStage = 'writing' | 'flushed' | 'renamed';

export const SNAPSHOT = 'snapshot.json';
const TEMPORARY_PATTERN = /^snapshot\.json\.\d+\.(tmp|old)$/;
/** Serialising for this long is one slice; then the slice is written and the thread is free again. */
const SLICE_MS = 2;
/** How many messages are serialised between two looks at the clock. */
const MESSAGES_PER_CLOCK_CHECK = 64;

const temporaryName = (generation: number) => `${SNAPSHOT}.${generation}.tmp`;
/** A second name for the snapshot being replaced, so that the rename does not free its blocks. */
const replacedName = (generation: number) => `${SNAPSHOT}.${generation}.old`;

/** Temporary files and second names of writes that a crash, a kill or a clean stop cut short; call before any write starts. */
export function removeAbandonedSnapshots(directory: string): void {
  for (const name of readdirSync(directory))
    if (TEMPORARY_PATTERN.test(name)) rmSync(join(directory, name), { force: true });
}

/** Writes the snapshot in one go; returns its size in bytes. */
export function writeSnapshotSync(directory: string, content: SnapshotContent): number {
  const snapshot: Snapshot = {
    version: 1,
    generation: content.generation,
    savedAt: new Date().toISOString(),
    queues: Object.fromEntries(content.queues),
  };
  const temporary = join(directory, temporaryName(content.generation));
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(snapshot));
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

export interface SlicedWriteOptions {
  /** True once the write must not replace `snapshot.json` any more (the journal was closed). */
  readonly givenUp: () => boolean;
  /** Awaited at each stage; for tests. */
  readonly onStage?: (stage: SnapshotStage) => void | Promise<void>;
}

/**
 * Writes the snapshot without holding the thread for more than a slice at a time. Resolves to its
 * size in bytes once it is renamed into place and the directory flushed, or to `undefined` if it
 * gave up before the rename (then `snapshot.json` is untouched and the temporary file removed).
 */
export async function writeSnapshotInSlices(
  directory: string,
  content: SnapshotContent,
  options: SlicedWriteOptions,
): Promise<number | undefined> {
  if (options.givenUp()) return undefined;
  const temporary = join(directory, temporaryName(content.generation));
  const replaced = join(directory, replacedName(content.generation));
  const file = await open(temporary, 'w', 0o600);
  let fileClosed = false;
  let renamed = false;
  let linked = false;
  try {
    let bytes = 0;
    const write = async (text: string) => {
      const buffer = Buffer.from(text);
      for (let offset = 0; offset < buffer.length;) offset += (await file.write(buffer, offset)).bytesWritten;
      bytes += buffer.length;
    };
    // The same text JSON.stringify makes of a `Snapshot`, piece by piece.
    await write(
      `{"version":1,"generation":${content.generation},"savedAt":${JSON.stringify(new Date().toISOString())},"queues":{`,
    );
    await options.onStage?.('writing');
    let pieces: string[] = [];
    let sliceStart = performance.now();
    for (const [queueIndex, [queue, messages]] of content.queues.entries()) {
      pieces.push(`${queueIndex === 0 ? '' : ','}${JSON.stringify(queue)}:[`);
      for (let index = 0; index < messages.length; index++) {
        pieces.push(index === 0 ? JSON.stringify(messages[index]) : `,${JSON.stringify(messages[index])}`);
        if (
          index % MESSAGES_PER_CLOCK_CHECK === MESSAGES_PER_CLOCK_CHECK - 1 &&
          performance.now() - sliceStart >= SLICE_MS
        ) {
          await write(pieces.join(''));
          pieces = [];
          if (options.givenUp()) return undefined;
          // However quickly the write came back, a turn of the loop for the requests waiting before the next slice.
          await new Promise<void>((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
      }
      pieces.push(']');
    }
    pieces.push('}}');
    await write(pieces.join(''));
    await file.sync();
    await file.close();
    fileClosed = true;
    await options.onStage?.('flushed');
    // Renaming over the last name of a 90 MB file frees its blocks in the rename itself: 15–33 ms
    // on the thread. With a second name the rename only unlinks, and the removal below frees them
    // off the thread.
    linked = await link(join(directory, SNAPSHOT), replaced).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    if (options.givenUp()) return undefined;
    // Synchronous, right after the check: a clean stop cannot write its final snapshot in between
    // and then have this older one renamed over it.
    renameSync(temporary, join(directory, SNAPSHOT));
    renamed = true;
    const directoryHandle = await open(directory, 'r');
    try {
      await directoryHandle.sync();
    } finally {
      await directoryHandle.close();
    }
    await options.onStage?.('renamed');
    return bytes;
  } finally {
    if (!fileClosed) await file.close();
    if (!renamed) await rm(temporary, { force: true });
    if (linked) await rm(replaced, { force: true });
  }
}
