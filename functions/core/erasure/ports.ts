/**
 * What an erasure needs from the world (issue 31 item 4; docs/PRIVACY.md, "Erasure"): the stores
 * event data rests in, each able to remove what it holds (S3 and SQS: functions/aws), the audit
 * records (DynamoDB: functions/aws/dynamodb-erasure-store.ts) and the queue that carries a running
 * erasure from one chunk to the next (SQS: functions/aws/sqs-erasure-queue.ts).
 */
import type { ClaimCheckStore, PayloadLedger } from '../claim-check/ports.js';
import type { DeadLetterStore } from '../delivery/delivery-records.js';
import type { PullQueues } from '../pull/pull-queues.js';
import type { EventArchive } from '../replay/ports.js';
import type { SubscriptionStore } from '../subscriptions/store.js';
import type { EventSelector } from './event-selector.js';

export type ErasureState = 'running' | 'finished' | 'failed';

/** What was removed, per store. */
export interface ErasedCounts {
  /** Events taken out of the archive. */
  readonly archiveEvents: number;
  /** Archive objects written again without them, and objects removed because nothing else was in them. */
  readonly archiveObjectsRewritten: number;
  readonly archiveObjectsDeleted: number;
  /** Claim-check objects (data kept by reference) removed. */
  readonly payloadObjects: number;
  /** Events taken out of dead letters (dead letters holding nothing else are removed). */
  readonly deadLetterEvents: number;
  /** Events taken off pull subscriptions' queues. */
  readonly pullQueueEvents: number;
  /** Events taken out of ordered subscriptions' lanes, waiting there for their turn (docs/ORDERING.md). */
  readonly orderedLaneEvents: number;
}

export const NO_ERASED: ErasedCounts = {
  archiveEvents: 0,
  archiveObjectsRewritten: 0,
  archiveObjectsDeleted: 0,
  payloadObjects: 0,
  deadLetterEvents: 0,
  pullQueueEvents: 0,
  orderedLaneEvents: 0,
};

/** A place the erasure could not reach, and why; never which events (that would say what the person did). */
export interface NotReached {
  readonly where: 'receivers' | 'pull-queues-in-flight' | 'push-deliveries-queued' | 'pull-queue-gone';
  readonly count?: number;
  readonly detail: string;
}

/** The audit record: who asked, when, the selector only as kind and keyed hash, what was removed and what was not reached. */
export interface ErasureRecord {
  readonly id: string;
  readonly state: ErasureState;
  readonly selectorKind: EventSelector['kind'];
  /** `hmac-sha256=:…:` (./erasure-audit.ts). */
  readonly selectorDigest: string;
  readonly requestedBy: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly finishedAt?: number;
  readonly erased: ErasedCounts;
  readonly notReached: readonly NotReached[];
  readonly reason?: string;
}

export interface ErasureStore {
  put(record: ErasureRecord): Promise<void>;
  get(id: string): Promise<ErasureRecord | undefined>;
  /** Newest first, at most `limit`. */
  list(limit: number): Promise<ErasureRecord[]>;
}

/** Where the running erasure is: the archive hour it continues from, then the dead letters and pull queues. */
export interface ErasureMessage {
  readonly erasureId: string;
  /** Personal data: it lives only in this message (an encrypted queue, deleted once handled). */
  readonly selector: EventSelector;
  readonly phase: 'archive' | 'queued';
  /** Epoch ms of the next archive hour to read. */
  readonly hour?: number;
}

export interface ErasureQueue {
  send(message: ErasureMessage): Promise<void>;
}

/** The archive, also writable and deletable (the erasure worker's grant). */
export interface ErasableArchive extends EventArchive {
  delete(key: string): Promise<void>;
}

/** An event waiting in an ordered lane: staged (not yet numbered) or numbered and not yet delivered. */
export interface WaitingLaneEvent {
  /** Where it is stored, as the store names it. */
  readonly ref: string;
  readonly state: 'staged' | 'numbered';
  /** Its delivery message, encoded. */
  readonly body: string;
}

/** The ordered lanes' waiting events (issue 33), as the erasure reaches them. */
export interface ErasableLanes {
  /** A page of every lane's waiting events; `cursor` continues. */
  waiting(cursor?: string): Promise<{ readonly items: readonly WaitingLaneEvent[]; readonly cursor?: string }>;
  /** Stores its message again, without the taken events; not when it has left the lane meanwhile. */
  rewrite(event: WaitingLaneEvent, body: string): Promise<void>;
  /** Removes a staged event: it has no number yet, so the lane keeps no gap for it. */
  remove(event: WaitingLaneEvent): Promise<void>;
}

/** What the erasure worker reaches. */
export interface ErasableStores {
  readonly archive: ErasableArchive;
  readonly claimCheck: Pick<ClaimCheckStore, 'get'> & { delete(key: string): Promise<void> };
  readonly payloadLedger: Pick<PayloadLedger, 'get'> & {
    /** Removes the record of who may fetch the object: a fetch of an erased event's data is a 404. */
    forget(payloadId: string): Promise<void>;
  };
  readonly subscriptions: Pick<SubscriptionStore, 'listAll'>;
  readonly deadLetters: DeadLetterStore;
  readonly pullQueues: Pick<PullQueues, 'receive' | 'delete' | 'changeVisibility' | 'send'> & {
    /** Messages a consumer holds locked (received, not settled): a receive cannot see them. */
    inFlight(subscriptionId: string): Promise<number>;
  };
  readonly orderedLanes: ErasableLanes;
}
