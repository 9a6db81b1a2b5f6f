/**
 * Issue 33, the lane sweeper (ORD-8, docs/ORDERING.md "Sweeper") without emulators: a lane whose
 * settle message or head message is lost for good is found through the sweep index and its message
 * queued again; a healthy lane is left alone; a copy queued beside a message that was not lost is
 * harmless. The queue hands messages out in any order, as a standard queue may; in-memory lanes.
 */
import { describe, expect, it } from 'vitest';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import type { AttemptResult } from '../../../functions/core/delivery/attempt-outcome.js';
import type { DeliveryTask } from '../../../functions/core/delivery/dispatch-ports.js';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import { sweepLanes } from '../../../functions/core/delivery-message/lane-sweep.js';
import type { Outbox } from '../../../functions/core/delivery-message/outbox.js';
import { isSettleMessage, orderedOutbox } from '../../../functions/core/delivery-message/ordered-outbox.js';
import { InMemoryLaneSweepIndex } from '../../support/memory/memory-lane-sweep-index.js';
import { InMemoryOrderedLanes } from '../../support/memory/memory-ordered-lanes.js';
import { keyedDeliveries } from '../../support/keyed-deliveries.js';
import { SUB, setup } from '../delivery/dispatcher-harness.js';

const WINDOW_MS = 1000;
const MARGIN_MS = 5 * 60_000;
const HEAD_BOUND_MS = 30 * 60_000;

function harness(answer: (n: number) => number = () => 204) {
  const h = setup({ subscription: { ordering: { key: 'partitionkey', withoutKey: 'unordered', onFailure: 'block' } } });
  const queue: (DeliveryTask & { visibleAt: number })[] = [];
  let ids = 0;
  const push = (body: string, delaySeconds = 0) =>
    queue.push({ messageId: `m${++ids}`, body, receiveCount: 0, visibleAt: h.clock.now + delaySeconds * 1000 });
  const inner: Outbox = {
    enqueueAll: async (entries) => {
      for (const { message, delaySeconds } of entries) push(encodeDeliveryMessage(message), delaySeconds);
    },
    enqueue: async (_subscription, messages) => {
      for (const message of messages) push(encodeDeliveryMessage(message));
    },
  };
  const lanes = new InMemoryOrderedLanes(() => h.clock.now);
  const outbox = orderedOutbox(inner, () => lanes, { now: () => h.clock.now, settlingWindowMs: WINDOW_MS });
  const sent: number[] = [];
  h.deps.outbox = outbox;
  h.deps.lanes = lanes;
  h.deps.send = async (request): Promise<AttemptResult> => {
    const { n } = JSON.parse(request.body.toString('utf8')) as { n: number };
    const status = answer(n);
    if (status < 300) sent.push(n);
    return { status, headers: {}, latencyMs: 5 };
  };
  /** One batch of what is visible, retries back on the queue with their delay; the clock a second on. */
  const step = async () => {
    const batch = queue.filter((task) => task.visibleAt <= h.clock.now).slice(0, 10);
    for (const task of batch) queue.splice(queue.indexOf(task), 1);
    const outcome = await dispatchBatch(
      batch.map((task) => ({ ...task, receiveCount: task.receiveCount + 1 })),
      h.deps,
    );
    for (const decision of outcome.decisions)
      if (decision.action === 'retry') {
        const task = batch.find((one) => one.messageId === decision.messageId)!;
        queue.push({
          ...task,
          receiveCount: task.receiveCount + 1,
          visibleAt: h.clock.now + decision.delaySeconds * 1000,
        });
      }
    h.clock.now += 1000;
  };
  const drain = async (rounds = 50) => {
    for (let round = 0; round < rounds && queue.length > 0; round++) await step();
  };
  const publish = (perKey: number) =>
    outbox.enqueueAll(
      keyedDeliveries(SUB, 1, perKey, h.clock.now).map((message) => ({
        subscription: { id: SUB, delivery: 'push' as const },
        message,
      })),
    );
  const sweep = () =>
    sweepLanes(
      {
        index: new InMemoryLaneSweepIndex(lanes),
        lanes,
        subscription: async (id) => (id === SUB ? { id, delivery: 'push' } : undefined),
        outbox: inner,
      },
      {
        now: h.clock.now,
        settlingWindowMs: WINDOW_MS,
        stagedMarginMs: MARGIN_MS,
        headBoundMs: HEAD_BOUND_MS,
        limit: 100,
      },
    );
  /** Takes the queued messages the predicate picks off the queue for good, as a dead-letter queue or an erasure would. */
  const lose = (which: (body: string) => boolean) => {
    const lost = queue.filter((task) => which(task.body));
    for (const task of lost) queue.splice(queue.indexOf(task), 1);
    return lost.length;
  };
  const sequenceOf = (body: string) => decodeDeliveryMessage(body).ordering?.sequence;
  return { h, queue, sent, drain, step, publish, sweep, lose, sequenceOf };
}

const settle = (body: string) => isSettleMessage(decodeDeliveryMessage(body));

describe('the lane sweeper (issue 33, ORD-8)', () => {
  it('ORD-8: a settle message lost for good — the staged events wait; the sweeper queues a settle message again and the key is delivered in order', async () => {
    const run = harness();
    await run.publish(3);
    expect(run.lose(settle)).toBe(1);
    run.h.clock.now += WINDOW_MS + MARGIN_MS - 1000;
    // Not yet past the margin: nothing is queued, the staged events are left to their settle message.
    expect(await run.sweep()).toMatchObject({ settles: 0, heads: 0 });
    expect(run.queue).toHaveLength(0);
    run.h.clock.now += 2000;
    expect(await run.sweep()).toMatchObject({ settles: 1, heads: 0 });
    await run.drain();
    expect(run.sent).toEqual([1, 2, 3]);
  });

  it('ORD-8: a head lost for good (its message gone after the one before was delivered) — the sweeper queues it again after the bound, and the key goes on in order', async () => {
    const run = harness();
    await run.publish(3);
    // Delivered 1; the next head, 2, is queued by the advance: lose it.
    for (let round = 0; round < 10 && run.sent.length === 0; round++) await run.step();
    expect(run.sent).toEqual([1]);
    expect(run.lose((body) => run.sequenceOf(body) === 2)).toBe(1);
    await run.drain();
    expect(run.sent).toEqual([1]);
    run.h.clock.now += HEAD_BOUND_MS - 30_000;
    expect(await run.sweep()).toMatchObject({ heads: 0 });
    run.h.clock.now += 60_000;
    expect(await run.sweep()).toMatchObject({ settles: 0, heads: 1 });
    await run.drain();
    expect(run.sent).toEqual([1, 2, 3]);
  });

  it('ORD-8: a healthy lane — delivered, or its head in flight under a live hold — gets nothing queued, and a caught-up lane leaves the index', async () => {
    const run = harness((n) => (n === 2 ? 500 : 204));
    await run.publish(3);
    // 2 fails and waits for its retry under its hold; sweeping past the bound queues nothing.
    for (let round = 0; round < 10 && run.sent.length === 0; round++) await run.step();
    await run.step();
    run.h.clock.now += HEAD_BOUND_MS + 1000;
    const queued = run.queue.length;
    expect(await run.sweep()).toMatchObject({ settles: 0, heads: 0 });
    expect(run.queue).toHaveLength(queued);

    const done = harness();
    await done.publish(3);
    await done.drain();
    expect(done.sent).toEqual([1, 2, 3]);
    done.h.clock.now += HEAD_BOUND_MS + 1000;
    expect(await done.sweep()).toEqual({ looked: 1, settles: 0, heads: 0 });
    expect(done.queue).toHaveLength(0);
    // Caught up: its mark is gone, the next run reads nothing of it.
    expect(await done.sweep()).toEqual({ looked: 0, settles: 0, heads: 0 });
  });

  it('ORD-8: a copy is harmless — a settle message and a head queued again beside ones that were not lost deliver each event once, in order', async () => {
    const run = harness();
    await run.publish(3);
    // The settle message is only late (still on the queue, not received): the sweeper adds a second.
    run.h.clock.now += WINDOW_MS + MARGIN_MS + 1000;
    expect(await run.sweep()).toMatchObject({ settles: 1 });
    expect(run.queue.filter((task) => settle(task.body))).toHaveLength(2);
    // Both settle messages run: the events are numbered once; the head is queued; hold it back a while.
    await run.step();
    expect(run.queue.filter((task) => run.sequenceOf(task.body) === 1)).toHaveLength(1);
    for (const task of run.queue) task.visibleAt = run.h.clock.now + HEAD_BOUND_MS + 10_000;
    run.h.clock.now += HEAD_BOUND_MS + 1000;
    expect(await run.sweep()).toMatchObject({ heads: 1 });
    expect(run.queue.filter((task) => run.sequenceOf(task.body) === 1)).toHaveLength(2);
    await run.drain();
    run.h.clock.now += HEAD_BOUND_MS;
    await run.drain();
    expect(run.sent).toEqual([1, 2, 3]);
  });
});
