/**
 * What archive and replay need from the world (docs/REPLAY.md): the archive's object store (S3,
 * s3rver on the laptop: functions/aws/s3-event-archive.ts), the replays' records (DynamoDB:
 * functions/aws/dynamodb-replay-store.ts) and the queue that carries a running replay from one
 * chunk to the next (SQS: functions/aws/sqs-replay-queue.ts). Memory adapters: ./memory-adapters.ts.
 */
import type { Filter } from '../subscriptions/filters.js';
import type { ArchivePosition } from './archive-format.js';

export interface EventArchive {
  put(key: string, body: Buffer): Promise<void>;
  /** Every key under `prefix`, in key order. */
  list(prefix: string): Promise<string[]>;
  /** The object's bytes; undefined once it is gone (expired). */
  get(key: string): Promise<Buffer | undefined>;
}

export type ReplayState = 'running' | 'finished' | 'cancelled' | 'failed';

export interface ReplayProgress {
  /** Events of the window read from the archive (each event once). */
  readonly scanned: number;
  /** Of those, the ones the subscription receives: its own conditions, the owner's entitlement and the replay's narrowing. */
  readonly matched: number;
  /** Matched events queued on the subscription's delivery path. */
  readonly sent: number;
  /** Matched events that could not be queued (the replay gave up on them). */
  readonly failed: number;
}

export interface ReplayRecord extends ReplayProgress {
  readonly subscriptionId: string;
  readonly replayId: string;
  readonly state: ReplayState;
  /** Epoch ms: events accepted at or after `from` and before `to`. */
  readonly from: number;
  readonly to: number;
  /** Narrowing: only these types (each within the subscription and the owner's entitlement). */
  readonly types?: readonly string[];
  /** Narrowing: these filters too, on top of the subscription's. */
  readonly filters?: readonly Filter[];
  /** The client that asked. */
  readonly requestedBy: string;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly finishedAt?: number;
  /** Why a replay failed, in words. */
  readonly reason?: string;
  /** The last event passed, in acceptance order; absent before the first chunk. */
  readonly position?: ArchivePosition;
  /** Incremented by every write: a chunk's progress is stored only over the state it started from. */
  readonly version: number;
}

/** How a replay whose slot was taken over after its lease ran out is ended. */
export function staleFailure(
  record: ReplayRecord,
  now: number,
): Pick<ReplayRecord, 'state' | 'reason' | 'finishedAt' | 'updatedAt' | 'version'> {
  return {
    state: 'failed',
    reason: 'it stopped making progress (its worker kept failing)',
    finishedAt: now,
    updatedAt: now,
    version: record.version + 1,
  };
}

export class ReplayRunningError extends Error {
  override name = 'ReplayRunningError';
  constructor(readonly runningReplayId: string | undefined) {
    super('another replay of this subscription is running');
  }
}

export interface ReplayStore {
  /**
   * Takes the subscription's one running-replay slot (a conditional write, free once the holder
   * finished or its lease ran out) and stores the record. Throws `ReplayRunningError` when taken.
   * A holder whose lease ran out (its worker kept crashing) is marked `failed` on the way.
   */
  start(record: ReplayRecord, leaseUntil: number): Promise<void>;
  get(subscriptionId: string, replayId: string): Promise<ReplayRecord | undefined>;
  /** The subscription's replays still kept (30 days after their last change), in any order. */
  list(subscriptionId: string): Promise<ReplayRecord[]>;
  /**
   * Writes `next` if the stored record is still at `expectedVersion` and in `expectedState`
   * (default `running`); answers whether it did. Extends the slot's lease while running.
   */
  update(
    next: ReplayRecord,
    expectedVersion: number,
    leaseUntil: number,
    expectedState?: ReplayState,
  ): Promise<boolean>;
  /** Frees the slot if `replayId` holds it. */
  release(subscriptionId: string, replayId: string): Promise<void>;
}

/** Where a running replay's next chunk waits: its message comes back after `delaySeconds`. */
export interface ReplayQueue {
  continueLater(message: ReplayMessage, delaySeconds: number): Promise<void>;
}

export interface ReplayMessage {
  readonly subscriptionId: string;
  readonly replayId: string;
}
