/**
 * One chunk of a running replay (docs/REPLAY.md): read the archive on from where the replay
 * stands, in acceptance order; keep the events the subscription receives — its own conditions and
 * its owner's entitlement as they are now, exactly as routing decides (EDU-7), then the replay's
 * narrowing; queue each as a new delivery on the subscription's own path (push: the deliveries
 * queue with its retries, breaker and dead letters; pull: its queue); store the progress; and
 * queue the next chunk. The chunk's size and the pause before the next keep a push replay within
 * the rate the target allowed (WH-6, EDU-10), which the delivery function enforces anyway.
 *
 * A chunk whose message SQS hands out twice, or that is retried after queueing, queues the same
 * deliveries with the same keys (`replayDeliveryId`), and only one copy stores its progress (the
 * record's version), so receivers drop the repeats by Idempotency-Key (EDU-IDEM-9).
 */
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { EventText } from '../cloudevents/event-text.js';
import type { DeliveryMessage } from '../delivery-message/delivery-message.js';
import { replayDeliveryId } from '../delivery-message/delivery-rules.js';
import type { Outbox } from '../delivery-message/outbox.js';
import { mayReceive } from '../routing/may-receive.js';
import { subscriptionMatches } from '../routing/route-keys.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { Subscription } from '../subscriptions/subscription.js';
import { positionOf, type ArchivedEvent } from './archive-format.js';
import { readArchiveChunk } from './archive-reader.js';
import { inReplayLane } from './ordered-replay.js';
import type { EventArchive, ReplayMessage, ReplayProgress, ReplayQueue, ReplayRecord, ReplayStore } from './ports.js';
import { REPLAY_LEASE_MS } from './replay-service.js';

/** Seconds between two chunks of a push replay to a target with an allowed rate. */
export const RATE_CHUNK_SECONDS = 10;
/** Events queued per chunk when no rate applies (pull, or a target that allowed any rate). */
export const MAX_CHUNK_EVENTS = 500;
/** Archived events one chunk reads at most, matched or not. */
export const MAX_CHUNK_SCAN = 5000;

export interface ReplayWorkerDependencies {
  readonly store: ReplayStore;
  readonly queue: ReplayQueue;
  readonly archive: EventArchive;
  readonly subscriptions: { get(id: string): Promise<Subscription | undefined> };
  readonly entitlements: Entitlements;
  /** Puts delivery messages on the subscription's path: the deliveries queue (push) or its own queue (pull). */
  readonly outbox: Pick<Outbox, 'enqueue'>;
  /** How long the archive keeps events: older ones are never replayed, whatever the store still holds. */
  readonly retentionMs: number;
  readonly clock: Clock;
  readonly log: Log;
  /**
   * Told once a replay is over (finished, failed; a cancel is told by the API). The call site for
   * the "replay finished" operational event (issue 13, item 3), wired by the composition.
   */
  readonly onReplayFinished?: (record: ReplayRecord) => Promise<void> | void;
  /** Each chunk's figures once stored (the metrics' replay progress). */
  readonly onProgress?: (subscriptionId: string, step: ReplayProgress) => void;
}

export interface ChunkAttempt {
  /** The message's last receive before the queue gives up on it: fail the replay rather than throw. */
  readonly lastAttempt: boolean;
}

export async function runReplayChunk(
  message: ReplayMessage,
  attempt: ChunkAttempt,
  deps: ReplayWorkerDependencies,
): Promise<void> {
  const record = await deps.store.get(message.subscriptionId, message.replayId);
  if (!record || record.state !== 'running') return;
  try {
    await chunk(record, message, attempt, deps);
  } catch (error) {
    if (!attempt.lastAttempt) throw error;
    deps.log.error('replay failed', {
      subscriptionId: record.subscriptionId,
      replayId: record.replayId,
      error: String(error),
    });
    await finish(record, { state: 'failed', reason: 'the archive or the delivery path kept failing' }, deps);
  }
}

async function chunk(
  record: ReplayRecord,
  message: ReplayMessage,
  attempt: ChunkAttempt,
  deps: ReplayWorkerDependencies,
): Promise<void> {
  const subscription = await deps.subscriptions.get(record.subscriptionId);
  if (!subscription) return finish(record, { state: 'failed', reason: 'the subscription was deleted' }, deps);
  if (subscription.status !== 'active' && subscription.status !== 'suspended') {
    return finish(record, { state: 'failed', reason: `the subscription is ${subscription.status}` }, deps);
  }
  const now = deps.clock();
  // Retention is judged here, not only by the lifecycle rule: s3rver runs none, and S3's runs once a day.
  const from = Math.max(record.from, now - deps.retentionMs);
  const budget = chunkBudget(subscription);
  const read =
    from < record.to
      ? await readArchiveChunk(deps.archive, { from, to: record.to, after: record.position, limit: MAX_CHUNK_SCAN })
      : undefined;
  const events = read?.events ?? [];

  let scanned = 0;
  const selected: { event: ArchivedEvent; sequence: number }[] = [];
  for (const event of events) {
    if (selected.length >= budget) break;
    scanned++;
    if (receives(subscription, record, event, deps.entitlements))
      selected.push({ event, sequence: record.matched + selected.length + 1 });
  }
  const done = read === undefined || (read.done && scanned === events.length);
  // An ordered subscription's events go into the replay's own lanes, one per key (ordered-replay.ts).
  const messages = selected.map(({ event, sequence }) =>
    inReplayLane(subscription, replayDelivery(record, event, sequence, now)),
  );
  const last = events[scanned - 1];
  try {
    if (messages.length > 0) await deps.outbox.enqueue(subscription, messages);
  } catch (error) {
    if (!attempt.lastAttempt) throw error;
    // Given up: these events count as failed, and the replay ends here.
    const counted = {
      ...record,
      scanned: record.scanned + scanned,
      matched: record.matched + selected.length,
      failed: record.failed + selected.length,
    };
    deps.onProgress?.(record.subscriptionId, { scanned, matched: selected.length, sent: 0, failed: selected.length });
    deps.log.error('replay failed', {
      subscriptionId: record.subscriptionId,
      replayId: record.replayId,
      error: String(error),
    });
    return finish(counted, { state: 'failed', reason: 'the delivery path would not take the events' }, deps);
  }

  const next: ReplayRecord = {
    ...record,
    ...(last ? { position: positionOf(last) } : {}),
    scanned: record.scanned + scanned,
    matched: record.matched + selected.length,
    sent: record.sent + selected.length,
    updatedAt: now,
    version: record.version + 1,
    ...(done ? { state: 'finished' as const, finishedAt: now } : {}),
  };
  // Not stored: cancelled meanwhile, or another copy of this message got there first and goes on.
  if (!(await deps.store.update(next, record.version, now + REPLAY_LEASE_MS)))
    return countAfterCancel(record, next, deps);
  deps.onProgress?.(record.subscriptionId, { scanned, matched: selected.length, sent: selected.length, failed: 0 });
  if (done) return finished(next, deps);
  const paced =
    subscription.delivery === 'push' && subscription.allowedRatePerMinute !== undefined && selected.length > 0;
  await deps.queue.continueLater(message, paced ? RATE_CHUNK_SECONDS : 0);
}

/**
 * A cancel that came while this chunk was queueing: its events are on their way, so the cancelled
 * record counts them (only if nothing but the cancel wrote in between).
 */
async function countAfterCancel(
  record: ReplayRecord,
  chunkDone: ReplayRecord,
  deps: ReplayWorkerDependencies,
): Promise<void> {
  const latest = await deps.store.get(record.subscriptionId, record.replayId);
  if (latest?.state !== 'cancelled' || latest.version !== record.version + 1 || chunkDone.sent === record.sent) return;
  const { scanned, matched, sent, position } = chunkDone;
  const counted: ReplayRecord = {
    ...latest,
    scanned,
    matched,
    sent,
    ...(position ? { position } : {}),
    version: latest.version + 1,
  };
  await deps.store.update(counted, latest.version, latest.updatedAt, 'cancelled');
}

/** Whether the subscription receives the event now (`mayReceive`, as routing decides), and the replay asked for it. */
function receives(
  subscription: Subscription,
  record: ReplayRecord,
  archived: ArchivedEvent,
  entitlements: Entitlements,
): boolean {
  if (record.types && !record.types.includes(archived.type)) return false;
  const event = new EventText(archived.json);
  return (
    mayReceive(subscription, event, entitlements) === 'receives' &&
    subscriptionMatches({ filters: record.filters ?? [] }, event.attributes)
  );
}

/** Events one chunk queues: a rate's worth of the pause between chunks, or a fixed amount. */
export function chunkBudget(subscription: Pick<Subscription, 'delivery' | 'allowedRatePerMinute'>): number {
  if (subscription.delivery !== 'push' || subscription.allowedRatePerMinute === undefined) return MAX_CHUNK_EVENTS;
  return Math.max(
    1,
    Math.min(MAX_CHUNK_EVENTS, Math.floor((subscription.allowedRatePerMinute * RATE_CHUNK_SECONDS) / 60)),
  );
}

/**
 * A replayed event is a new delivery operation with a new key (as a redrive is, EDU-IDEM-13): the
 * first delivery's key may hold a stored answer at the receiver. The key is derived from the
 * replay and the event, so a chunk queued twice carries the same one. Its correlation id is the
 * replay's id: what a receiver quotes to find the replay (the publish request's id is not archived).
 */
export function replayDelivery(
  record: Pick<ReplayRecord, 'replayId' | 'subscriptionId'>,
  event: ArchivedEvent,
  sequence: number,
  now: number,
): DeliveryMessage {
  return {
    version: 1,
    deliveryId: replayDeliveryId(record.replayId, event),
    subscriptionId: record.subscriptionId,
    events: [event.json],
    createdAt: now,
    replay: { id: record.replayId, sequence },
    correlationId: record.replayId,
  };
}

async function finish(
  record: ReplayRecord,
  outcome: { state: 'failed'; reason: string },
  deps: ReplayWorkerDependencies,
): Promise<void> {
  const now = deps.clock();
  const next: ReplayRecord = { ...record, ...outcome, updatedAt: now, finishedAt: now, version: record.version + 1 };
  // `record` may carry this chunk's counts; its version is still the stored one.
  if (await deps.store.update(next, record.version, now)) await finished(next, deps);
}

async function finished(record: ReplayRecord, deps: ReplayWorkerDependencies): Promise<void> {
  await deps.store.release(record.subscriptionId, record.replayId);
  deps.log.info('replay finished', {
    subscriptionId: record.subscriptionId,
    replayId: record.replayId,
    state: record.state,
    scanned: record.scanned,
    matched: record.matched,
    sent: record.sent,
    failed: record.failed,
  });
  await deps.onReplayFinished?.(record);
}
