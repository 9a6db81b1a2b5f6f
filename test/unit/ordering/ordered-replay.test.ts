/**
 * Issue 33, "Replays of an ordered subscription are in order per key too" (ORD-7), without
 * emulators: the replay worker reads an archive whose objects overlap in time, its deliveries go
 * through the ordered outbox into a queue that hands messages out in any order (as a standard SQS
 * queue may), and the dispatcher sends them over in-memory lanes to a target scripted per event.
 */
import { describe, expect, it } from 'vitest';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import { redriveMessages } from '../../../functions/core/delivery/redrive.js';
import type { DeliveryTask } from '../../../functions/core/delivery/dispatch-ports.js';
import { REPLAY_HEADERS } from '../../../functions/core/delivery/webhook-request.js';
import { encodeDeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import type { Outbox } from '../../../functions/core/delivery-message/outbox.js';
import { orderedOutbox } from '../../../functions/core/delivery-message/ordered-outbox.js';
import type { OrderingFailurePolicy } from '../../../functions/core/ordering/ordering-settings.js';
import { replayLaneKey } from '../../../functions/core/ordering/replay-lanes.js';
import { archiveObjects, type ArchivedEvent } from '../../../functions/core/replay/archive-format.js';
import { runReplayChunk } from '../../../functions/core/replay/replay-worker.js';
import { InMemoryOrderedLanes } from '../../support/memory/memory-ordered-lanes.js';
import { SUB, setup } from '../delivery/dispatcher-harness.js';
import { HOUR, NOW, SOURCE, runningReplay, subscription, workerWorld } from '../replay/replay-fakes.js';

interface Sent {
  readonly key: string;
  readonly n: number;
  readonly sequence: string | undefined;
  readonly replayId: string | undefined;
}

const REPLAY = 'replay-1';
const KEYS = 5;
const PER_KEY = 8;

/** `keys` × `perKey` events, interleaved over the keys, each accepted a second after the one before. */
function acceptedEvents(keys: number, perKey: number): ArchivedEvent[] {
  const events: ArchivedEvent[] = [];
  let at = NOW - 5 * HOUR;
  for (let n = 1; n <= perKey; n++)
    for (let k = 0; k < keys; k++) {
      const id = `k${k}-${n}`;
      const json = JSON.stringify({ specversion: '1.0', id, source: SOURCE, type: 't.v1', partitionkey: `k${k}`, n });
      events.push({ acceptedAt: (at += 1000), source: SOURCE, id, type: 't.v1', json });
    }
  return events;
}

function harness(onFailure: OrderingFailurePolicy, answer: (sent: Sent, tries: number) => number) {
  const ordering = { key: 'partitionkey', withoutKey: 'unordered' as const, onFailure };
  // The replay reads the subscription with a rate: ten events a chunk, so chunks and deliveries interleave.
  const world = workerWorld({ subscription: subscription({ id: SUB, ordering, allowedRatePerMinute: 60 }) });
  const h = setup({ subscription: { ordering } });
  const queue: DeliveryTask[] = [];
  let ids = 0;
  const inner: Outbox = {
    enqueueAll: async (entries) => {
      for (const { message } of entries)
        queue.push({ messageId: `m${++ids}`, body: encodeDeliveryMessage(message), receiveCount: 0 });
    },
    enqueue: (subscription, messages) => inner.enqueueAll(messages.map((message) => ({ subscription, message }))),
  };
  const lanes = new InMemoryOrderedLanes();
  const outbox = orderedOutbox(inner, () => lanes, { now: () => h.clock.now });
  const deps = { ...world.deps, outbox };
  h.deps.outbox = outbox;
  h.deps.lanes = lanes;
  const sent: Sent[] = [];
  const tries = new Map<string, number>();
  h.deps.send = async (request) => {
    const event = JSON.parse(request.body.toString('utf8')) as { partitionkey: string; sequence?: string; n: number };
    const one = {
      key: event.partitionkey,
      n: event.n,
      sequence: event.sequence,
      replayId: request.headers[REPLAY_HEADERS.id],
    };
    const id = `${one.key}/${one.n}`;
    tries.set(id, (tries.get(id) ?? 0) + 1);
    const status = answer(one, tries.get(id)!);
    if (status < 300) sent.push(one);
    return { status, headers: {}, latencyMs: 5 };
  };
  let seed = 11;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const receives = new Map<string, number>();
  /** Delivery batches of up to ten messages picked at random from the queue; retries come back at once. */
  const drain = async (rounds = 10_000) => {
    for (let round = 0; round < rounds && queue.length > 0; round++) {
      const batch: DeliveryTask[] = [];
      while (batch.length < 10 && queue.length > 0) {
        const [task] = queue.splice(Math.floor(random() * queue.length), 1);
        const count = (receives.get(task!.messageId) ?? 0) + 1;
        receives.set(task!.messageId, count);
        batch.push({ ...task!, receiveCount: count });
      }
      const outcome = await dispatchBatch(batch, h.deps);
      for (const decision of outcome.decisions)
        if (decision.action === 'retry') queue.push(batch.find((task) => task.messageId === decision.messageId)!);
      h.clock.now += 1000;
    }
  };
  /** The archive, written as router batches would: objects that overlap in time, each in its own order. */
  const archive = async (events: readonly ArchivedEvent[]) => {
    for (let start = 0; start < events.length; start += 7) {
      const batch = events.slice(start, start + 9).reverse();
      for (const object of archiveObjects(batch)) await world.archive.put(object.key, object.body);
    }
  };
  /** Runs the replay's chunks to its end, a couple of delivery batches after each chunk. */
  const replay = async () => {
    await world.store.start(runningReplay({ subscriptionId: SUB, replayId: REPLAY }), NOW + HOUR);
    for (let i = 0; i < 100; i++) {
      await runReplayChunk({ subscriptionId: SUB, replayId: REPLAY }, { lastAttempt: false }, deps);
      await drain(2);
      if ((await world.store.get(SUB, REPLAY))?.state !== 'running') return;
    }
    throw new Error('replay did not end');
  };
  const ofKey = (key: string) => sent.filter((one) => one.key === key);
  return { h, world, deps, queue, lanes, outbox, sent, archive, replay, drain, ofKey };
}

const numbers = (sent: readonly Sent[]) => sent.map((one) => one.n);
const sequences = (sent: readonly Sent[]) => sent.map((one) => Number(one.sequence));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('replays of an ordered subscription (issue 33, ORD-7)', () => {
  it('ORD-7: a replay of 5 keys × 8 events, through a queue without order: each key in acceptance order, one at a time, sequence from 1 without gaps, marked as the replay', async () => {
    const run = harness('block', () => 204);
    await run.archive(acceptedEvents(KEYS, PER_KEY));
    await run.replay();
    // While it ran, no replay lane ever had two events on the queue: only heads are queued.
    await run.drain();
    for (let k = 0; k < KEYS; k++) {
      const sent = run.ofKey(`k${k}`);
      expect(numbers(sent)).toEqual(range(1, PER_KEY));
      expect(sent.map((one) => one.sequence)).toEqual(range(1, PER_KEY).map((n) => String(n).padStart(10, '0')));
      expect(new Set(sent.map((one) => one.replayId))).toEqual(new Set([REPLAY]));
    }
    expect(await run.world.store.get(SUB, REPLAY)).toMatchObject({ state: 'finished', matched: 40, sent: 40 });
  });

  it('ORD-7: a replay lane holds its later events back: after the replay queued everything, the queue holds one head per key', async () => {
    const run = harness('block', () => 204);
    await run.archive(acceptedEvents(KEYS, PER_KEY));
    await run.world.store.start(runningReplay({ subscriptionId: SUB, replayId: REPLAY }), NOW + HOUR);
    for (let i = 0; i < 10; i++)
      await runReplayChunk({ subscriptionId: SUB, replayId: REPLAY }, { lastAttempt: false }, run.deps);
    expect(run.queue).toHaveLength(KEYS);
    expect(run.lanes.lanes.get(JSON.stringify([SUB, replayLaneKey(REPLAY, 'k3')]))?.bodies.size).toBe(PER_KEY);
  });

  it('ORD-7: the replay neither waits behind the live lane nor moves it: a key whose live lane is parked is replayed whole, and the live lane stays where it was', async () => {
    const run = harness('park', () => 204);
    const live = { subscriptionId: SUB, key: 'k0' };
    for (const n of [1, 2, 3]) await run.lanes.append(live, `live-${n}`, (sequence) => `{"live":${sequence}}`);
    await run.lanes.park(live, 1);
    await run.archive(acceptedEvents(KEYS, PER_KEY));
    await run.replay();
    await run.drain();
    expect(numbers(run.ofKey('k0'))).toEqual(range(1, PER_KEY));
    expect(await run.lanes.head(live)).toEqual({ next: 1, parked: true });
  });

  it('ORD-7: block applies in the replay lane — a replayed event the target fails is retried, the key waits, the other keys flow; then it goes on in order', async () => {
    const run = harness('block', (one, tries) => (one.key === 'k0' && one.n === 3 && tries <= 4 ? 500 : 204));
    await run.archive(acceptedEvents(KEYS, PER_KEY));
    await run.replay();
    await run.drain();
    expect(numbers(run.ofKey('k0'))).toEqual(range(1, PER_KEY));
    for (let k = 1; k < KEYS; k++) expect(numbers(run.ofKey(`k${k}`))).toEqual(range(1, PER_KEY));
    expect(run.h.store.deadLetters).toHaveLength(0);
  });

  it('ORD-7: park applies in the replay lane — the dead letter keeps its replay and sequence, the key waits in order, and its redrive unparks the replay lane, not the live one', async () => {
    const refused = new Set(['k0/3']);
    const run = harness('park', (one) => (refused.has(`${one.key}/${one.n}`) ? 415 : 204));
    const live = { subscriptionId: SUB, key: 'k0' };
    for (const n of [1, 2, 3, 4]) await run.lanes.append(live, `live-${n}`, (sequence) => `{"live":${sequence}}`);
    // The live lane parked at its third event: a redrive landing there would find its place.
    await run.lanes.advance(live, 1);
    await run.lanes.advance(live, 2);
    await run.lanes.park(live, 3);
    await run.archive(acceptedEvents(KEYS, PER_KEY));
    await run.replay();
    await run.drain();
    expect(numbers(run.ofKey('k0'))).toEqual([1, 2]);
    for (let k = 1; k < KEYS; k++) expect(numbers(run.ofKey(`k${k}`))).toEqual(range(1, PER_KEY));
    expect(run.h.store.deadLetters).toHaveLength(1);
    const { deadLetter } = run.h.store.deadLetters[0]!;
    expect(deadLetter.replay).toEqual({ id: REPLAY, sequence: 11 });
    expect(JSON.parse(deadLetter.events[0]!)).toMatchObject({ partitionkey: 'k0', n: 3, sequence: '0000000003' });
    refused.clear();
    await run.outbox.enqueue({ id: SUB, delivery: 'push' }, redriveMessages(SUB, [deadLetter], NOW));
    await run.drain();
    expect(numbers(run.ofKey('k0'))).toEqual(range(1, PER_KEY));
    expect(sequences(run.ofKey('k0'))).toEqual(range(1, PER_KEY));
    expect(new Set(run.ofKey('k0').map((one) => one.replayId))).toEqual(new Set([REPLAY]));
    expect(await run.lanes.head(live)).toEqual({ next: 3, parked: true });
  });

  it('ORD-7: skip applies in the replay lane — the failing replayed event is a dead letter and the gap shows in the replay’s sequence', async () => {
    const run = harness('skip', (one) => (one.key === 'k2' && one.n === 5 ? 415 : 204));
    await run.archive(acceptedEvents(KEYS, PER_KEY));
    await run.replay();
    await run.drain();
    expect(sequences(run.ofKey('k2'))).toEqual([1, 2, 3, 4, 6, 7, 8]);
    expect(run.h.store.deadLetters.map(({ deadLetter }) => JSON.parse(deadLetter.events[0]!).sequence)).toEqual([
      '0000000005',
    ]);
  });

  it('ORD-7: an event without the key is replayed unordered, without sequence, as it was delivered live', async () => {
    const run = harness('block', () => 204);
    const json = JSON.stringify({ specversion: '1.0', id: 'keyless', source: SOURCE, type: 't.v1', n: 99 });
    await run.archive([
      ...acceptedEvents(1, 2),
      { acceptedAt: NOW - HOUR, source: SOURCE, id: 'keyless', type: 't.v1', json },
    ]);
    await run.replay();
    await run.drain();
    const keyless = run.sent.find((one) => one.n === 99);
    expect(keyless).toMatchObject({ sequence: undefined, replayId: REPLAY });
    expect(numbers(run.ofKey('k0'))).toEqual([1, 2]);
  });
});
