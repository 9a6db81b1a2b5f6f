/**
 * The erasure itself (issue 31 item 4; docs/PRIVACY.md, "Erasure"), a chunk per queue message:
 *
 * 1. `archive`: the archive hour by hour, oldest kept first, until the chunk's time budget is
 *    spent; an object holding a taken event is written again without it (removed when nothing else
 *    is left), and the claim-check object of a taken event's data goes with it. The next message
 *    continues at the next hour.
 * 2. `queued`: the dead letters of every subscription (a dead letter is written again without the
 *    taken events, removed when nothing else is left), the queue of every pull subscription
 *    (each visible message received once; a taken one deleted, the rest made visible again), and,
 *    when any subscription is ordered, the events waiting in the lanes (./erase-ordered-lanes.ts).
 *
 * Then the record says what was not reached: copies already delivered to receivers, messages a
 * pull consumer holds locked, push deliveries waiting in the deliveries queue for their next attempt.
 */
import { decodeDelivery, encodeDeliveryMessage } from '../delivery-message/delivery-message.js';
import { payloadIdInDataref, payloadObjectKey } from '../claim-check/payload-reference.js';
import { PullQueueGone } from '../pull/pull-queues.js';
import { decodeArchiveObject, encodeArchiveObject, hourPrefix, hoursOf } from '../replay/archive-format.js';
import type { Log } from '../ports/log.js';
import { eraseOrderedLanes } from './erase-ordered-lanes.js';
import { selects, type SelectableEvent } from './event-selector.js';
import {
  NO_ERASED,
  type ErasableStores,
  type ErasedCounts,
  type ErasureMessage,
  type ErasureQueue,
  type ErasureRecord,
  type ErasureStore,
  type NotReached,
} from './ports.js';

const HOUR_MS = 3_600_000;
const PAGE = 100;
/** A pull message received by the erasure stays hidden this long, so one pass sees each message once. */
const PULL_SCAN_VISIBILITY_SECONDS = 300;

export interface ErasureWorkerDependencies {
  readonly stores: ErasableStores;
  readonly store: ErasureStore;
  readonly queue: ErasureQueue;
  /** How far back the archive keeps events. */
  readonly archiveRetentionMs: number;
  /** How long dead letters are kept: a dead letter written again keeps that from now. */
  readonly deadLetterRetentionSeconds: number;
  /** How long one chunk may read the archive before it hands on to the next message. */
  readonly chunkBudgetMs: number;
  readonly clock: () => number;
  readonly log: Log;
}

/** Takes the event (true) or leaves it. */
type Take = (json: string) => Promise<boolean>;
type Counts = { -readonly [K in keyof ErasedCounts]: number };

export async function runErasureChunk(message: ErasureMessage, deps: ErasureWorkerDependencies): Promise<void> {
  const record = await deps.store.get(message.erasureId);
  if (record === undefined || record.state !== 'running') return;
  // A record begun before a count existed starts it at 0.
  const counts: Counts = { ...NO_ERASED, ...record.erased };
  const erasedPayloads = new Set<string>();
  const withData = (json: string): SelectableEvent => ({
    json,
    referencedData: () => referencedData(json, deps.stores),
  });
  const forget = async (json: string) => {
    const payload = await payloadOf(json, deps.stores);
    if (payload === undefined || erasedPayloads.has(payload.key)) return;
    erasedPayloads.add(payload.key);
    const there = (await deps.stores.claimCheck.get(payload.key)) !== undefined;
    if (there) await deps.stores.claimCheck.delete(payload.key);
    await deps.stores.payloadLedger.forget(payload.id);
    if (there) counts.payloadObjects++;
  };
  /** Whether the event is taken; its claim-check object goes at once. */
  const take: Take = async (json) => {
    if (!(await selects(message.selector, withData(json)))) return false;
    await forget(json);
    return true;
  };

  if (message.phase === 'archive') {
    const started = deps.clock();
    const first = message.hour ?? Math.floor((started - deps.archiveRetentionMs) / HOUR_MS) * HOUR_MS;
    for (const hour of hoursOf(first, started + HOUR_MS)) {
      if (deps.clock() - started > deps.chunkBudgetMs) {
        await saveProgress(deps, record, counts);
        await deps.queue.send({ ...message, hour });
        return;
      }
      for (const key of await deps.stores.archive.list(hourPrefix(hour))) {
        const body = await deps.stores.archive.get(key);
        if (body === undefined) continue;
        const events = decodeArchiveObject(body);
        const keep = [];
        for (const event of events) {
          if (!(await take(event.json))) keep.push(event);
        }
        if (keep.length === events.length) continue;
        counts.archiveEvents += events.length - keep.length;
        if (keep.length === 0) {
          await deps.stores.archive.delete(key);
          counts.archiveObjectsDeleted++;
        } else {
          await deps.stores.archive.put(key, encodeArchiveObject(keep));
          counts.archiveObjectsRewritten++;
        }
      }
    }
    await saveProgress(deps, record, counts);
    await deps.queue.send({ erasureId: message.erasureId, selector: message.selector, phase: 'queued' });
    return;
  }

  const notReached = await eraseQueued(deps, counts, take);
  const now = deps.clock();
  const finished: ErasureRecord = {
    ...record,
    state: 'finished',
    erased: counts,
    notReached: [
      {
        where: 'receivers',
        count: counts.archiveEvents,
        detail:
          'Events of the selection were routed to their subscribers when accepted; copies already delivered are beyond Koerier and are the receivers’ to erase (their owners: the subscriptions these events went to).',
      },
      ...notReached,
    ],
    updatedAt: now,
    finishedAt: now,
  };
  await deps.store.put(finished);
  deps.log.info('erasure finished', { erasureId: record.id, ...counts });
}

async function eraseQueued(deps: ErasureWorkerDependencies, counts: Counts, take: Take): Promise<NotReached[]> {
  const notReached: NotReached[] = [];
  let inFlight = 0;
  let gone = 0;
  let anyOrdered = false;
  let cursor: string | undefined;
  do {
    const page = await deps.stores.subscriptions.listAll({ limit: PAGE, cursor });
    for (const subscription of page.items) {
      anyOrdered ||= subscription.ordering !== undefined;
      await eraseDeadLetters(subscription.id, deps, counts, take);
      if (subscription.delivery !== 'pull') continue;
      try {
        // Counted before the scan: the scan's own receives hide messages too.
        inFlight += await deps.stores.pullQueues.inFlight(subscription.id);
        counts.pullQueueEvents += await erasePullQueue(subscription.id, deps, take);
      } catch (error) {
        if (!(error instanceof PullQueueGone)) throw error;
        gone++;
      }
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  // Lanes are found by reading the whole deliveries table: only when some subscription has them.
  if (anyOrdered) counts.orderedLaneEvents += await eraseOrderedLanes(deps.stores.orderedLanes, take);
  if (inFlight > 0)
    notReached.push({
      where: 'pull-queues-in-flight',
      count: inFlight,
      detail:
        'Messages a pull consumer held locked during the erasure could not be read; any of the selection among them is the consumer’s once acknowledged, or comes back and stays until erased again.',
    });
  if (gone > 0)
    notReached.push({
      where: 'pull-queue-gone',
      count: gone,
      detail: 'Pull subscriptions deleted during the erasure.',
    });
  notReached.push({
    where: 'push-deliveries-queued',
    detail:
      'Push deliveries waiting in the deliveries queue for a next attempt carry their events until delivered or dead-lettered (at most koerier:deliveryRetryWindowSeconds); erase again after that window to take a dead-lettered one.',
  });
  return notReached;
}

async function eraseDeadLetters(
  subscriptionId: string,
  deps: ErasureWorkerDependencies,
  counts: Counts,
  take: Take,
): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await deps.stores.deadLetters.listDeadLetters(subscriptionId, { limit: PAGE, cursor });
    for (const deadLetter of page.items) {
      const keep: string[] = [];
      for (const json of deadLetter.events) if (!(await take(json))) keep.push(json);
      if (keep.length === deadLetter.events.length) continue;
      counts.deadLetterEvents += deadLetter.events.length - keep.length;
      if (keep.length === 0) await deps.stores.deadLetters.deleteDeadLetters([deadLetter]);
      else
        await deps.stores.deadLetters.putDeadLetter(
          { ...deadLetter, events: keep },
          Math.floor(deps.clock() / 1000) + deps.deadLetterRetentionSeconds,
        );
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
}

/** One pass over the queue's visible messages; answers how many events it took off. */
async function erasePullQueue(subscriptionId: string, deps: ErasureWorkerDependencies, take: Take): Promise<number> {
  const queues = deps.stores.pullQueues;
  const release: { entryId: string; receiptHandle: string; seconds: number }[] = [];
  let erased = 0;
  let entries = 0;
  for (;;) {
    const messages = await queues.receive(subscriptionId, {
      max: 10,
      waitSeconds: 0,
      visibilitySeconds: PULL_SCAN_VISIBILITY_SECONDS,
    });
    if (messages.length === 0) break;
    const remove: { entryId: string; receiptHandle: string }[] = [];
    for (const pulled of messages) {
      const entry = { entryId: String(entries++), receiptHandle: pulled.receiptHandle };
      let decoded: ReturnType<typeof decodeDelivery>;
      try {
        decoded = decodeDelivery(pulled.body);
      } catch {
        release.push({ ...entry, seconds: 0 });
        continue;
      }
      const keep: string[] = [];
      for (const json of decoded.message.events) if (!(await take(json))) keep.push(json);
      if (keep.length === decoded.message.events.length) {
        release.push({ ...entry, seconds: 0 });
        continue;
      }
      erased += decoded.message.events.length - keep.length;
      // The rest of a batch travels on in a message of its own, with the same delivery id.
      if (keep.length > 0)
        await queues.send(subscriptionId, [encodeDeliveryMessage({ ...decoded.message, events: keep })]);
      remove.push(entry);
    }
    if (remove.length > 0) await queues.delete(subscriptionId, remove);
  }
  for (let at = 0; at < release.length; at += 10)
    await queues.changeVisibility(subscriptionId, release.slice(at, at + 10));
  return erased;
}

async function saveProgress(deps: ErasureWorkerDependencies, record: ErasureRecord, counts: Counts): Promise<void> {
  await deps.store.put({ ...record, erased: counts, updatedAt: deps.clock() });
}

/** The claim-check object of the event's data (its payload id and object key), when it travels by a Koerier `dataref`. */
async function payloadOf(json: string, stores: ErasableStores): Promise<{ id: string; key: string } | undefined> {
  const dataref = datarefOf(json);
  const id = dataref === undefined ? undefined : payloadIdInDataref(dataref);
  if (id === undefined) return undefined;
  return { id, key: (await stores.payloadLedger.get(id))?.objectKey ?? payloadObjectKey(id) };
}

async function referencedData(json: string, stores: ErasableStores): Promise<unknown> {
  const key = (await payloadOf(json, stores))?.key;
  const stored = key === undefined ? undefined : await stores.claimCheck.get(key);
  if (stored === undefined || stored.form !== 'json') return undefined;
  try {
    return JSON.parse(stored.bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function datarefOf(json: string): string | undefined {
  try {
    const value = JSON.parse(json) as Record<string, unknown>;
    return typeof value['dataref'] === 'string' ? value['dataref'] : undefined;
  } catch {
    return undefined;
  }
}
