/**
 * The ports of pull delivery (docs/PULL.md): each pull subscription's own queue and dead-letter
 * queue (SQS in AWS and on the laptop: functions/aws/sqs-pull-queues.ts), the marks a reject
 * leaves for the next receive, and the locks consumers gave up.
 */
import type { PullQueueAdmin } from '../subscriptions/pull-queue-admin.js';

/** A message as a receive hands it over: the receipt handle never leaves Koerier unsealed. */
export interface PulledMessage {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** SQS's ApproximateReceiveCount: this receive included. */
  readonly receiveCount: number;
}

/** What SQS said about one settle entry. */
export type QueueEntryOutcome = 'done' | 'lock-lost' | 'failed';

export interface QueueEntry {
  /** Unique within one call. */
  readonly entryId: string;
  readonly receiptHandle: string;
}

/**
 * The subscription's queue no longer exists: the subscription was deleted. Receive, delete and
 * changeVisibility throw it, so a caller that found the subscription in a cache can tell a deleted
 * subscription (404) from a queue that failed (503).
 */
export class PullQueueGone extends Error {
  constructor(readonly subscriptionId: string) {
    super(`the pull queue of subscription ${subscriptionId} no longer exists`);
    this.name = 'PullQueueGone';
  }
}

export interface PullQueues extends PullQueueAdmin {
  /** Writes every message or throws (batches of ten); `delaySeconds` (0–900) hides them that long (an ordered lane's settle message). */
  send(subscriptionId: string, bodies: readonly string[], delaySeconds?: number): Promise<void>;
  /** One ReceiveMessage: at most `max` (≤ 10) messages, waiting up to `waitSeconds`, each hidden for `visibilitySeconds`. */
  receive(
    subscriptionId: string,
    options: { readonly max: number; readonly waitSeconds: number; readonly visibilitySeconds: number },
  ): Promise<PulledMessage[]>;
  /** DeleteMessageBatch, ten at a time; one outcome per entry id. */
  delete(subscriptionId: string, entries: readonly QueueEntry[]): Promise<ReadonlyMap<string, QueueEntryOutcome>>;
  /** ChangeMessageVisibilityBatch, ten at a time; one outcome per entry id. */
  changeVisibility(
    subscriptionId: string,
    entries: readonly (QueueEntry & { readonly seconds: number })[],
  ): Promise<ReadonlyMap<string, QueueEntryOutcome>>;
}

/**
 * A reject cannot move the message itself: SQS gives a message's body only to a receive, never
 * for a receipt handle. So a reject marks the message and makes it visible again; the next receive
 * that meets it (its receive count is above one) finds the mark and moves it to the dead letters
 * with the reject's reason instead of handing it out.
 */
export interface RejectionMarks {
  mark(subscriptionId: string, messageId: string, reason: string, expiresAt: number): Promise<void>;
  /** The reasons of the marked ones among `messageIds`. */
  find(subscriptionId: string, messageIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
  clear(subscriptionId: string, messageIds: readonly string[]): Promise<void>;
}

/**
 * Locks a consumer gave up (a release, a reject), by the receipt handle their tokens carry (issue
 * 28 item 14e). SQS does not refuse a settle by an outdated receipt handle once the message was
 * received again (it may delete or hide the message the new holder has locked), and a released
 * token is still inside its own `lockeduntil`, so Koerier remembers the lock ended: every settle
 * asks first, and a given-up lock is `LockLost`.
 */
export interface GivenUpLocks {
  /** Records the locks of these receipt handles as given up, remembered until `expiresAt` (epoch seconds). Throws when it could not. */
  giveUp(subscriptionId: string, receiptHandles: readonly string[], expiresAt: number): Promise<void>;
  /** Which of `receiptHandles` are given up (a consistent read: a release a moment ago counts). */
  givenUp(subscriptionId: string, receiptHandles: readonly string[]): Promise<ReadonlySet<string>>;
}

/**
 * Slots for concurrent long polls (docs/PULL.md, "Capacity"), shared by every container: a scope
 * (a subscription, a client) has `limit` slots; a poll holds one until it ends or its lease runs
 * out (so a crashed container's slot frees itself).
 */
export interface PollLeases {
  /** One free slot of `scope`, held by `leaseId` until `until` (epoch ms); undefined when all `limit` are held. */
  take(scope: string, limit: number, leaseId: string, now: number, until: number): Promise<number | undefined>;
  /** Frees the slot, if `leaseId` still holds it. */
  give(scope: string, slot: number, leaseId: string): Promise<void>;
}
