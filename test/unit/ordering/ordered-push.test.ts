/**
 * Issue 33 items 2 and 3 (ORD-2, ORD-3, ORD-4) without emulators: the router's marks through the
 * ordered outbox into a queue that hands messages out in any order (as a standard SQS queue may),
 * and the dispatcher over in-memory lanes, against a target scripted per key (./ordered-push-harness.ts).
 * Batches of consecutive events of a key: ./ordered-batch.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { redriveMessages } from '../../../functions/core/delivery/redrive.js';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import { SUB, T0 } from '../delivery/dispatcher-harness.js';
import { orderedPushHarness as harness, type Sent } from './ordered-push-harness.js';

const inOrder = (sent: readonly Sent[]) => sent.map((one) => one.n);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('ordered push delivery (issue 33 item 3)', () => {
  it('ORD-2, ORD-3: 20 keys × 30 events through a queue without order: each key in acceptance order, none lost, none twice, sequence without gaps', async () => {
    const run = harness('block', () => 204);
    await run.publish(20, 30);
    // One settle message per key is queued; the events wait staged in their lanes.
    expect(run.queue).toHaveLength(20);
    await run.drain();
    for (let k = 0; k < 20; k++) {
      const sent = run.ofKey(`k${k}`);
      expect(inOrder(sent)).toEqual(range(1, 30));
      expect(sent.map((one) => one.sequence)).toEqual(range(1, 30).map((n) => String(n).padStart(10, '0')));
    }
  });

  it('ORD-4: block — a key whose target fails waits, retried, while the other keys are all delivered; then it goes on in order', async () => {
    // k0's third event: 500 five times, then 415 once (a refusal that would dead-letter), then accepted.
    const run = harness('block', (one, tries) =>
      one.key === 'k0' && one.n === 3 ? (tries <= 5 ? 500 : tries === 6 ? 415 : 204) : 204,
    );
    await run.publish(5, 10);
    await run.drain(60);
    expect(inOrder(run.ofKey('k0'))).toEqual([1, 2]);
    for (let k = 1; k < 5; k++) expect(inOrder(run.ofKey(`k${k}`))).toEqual(range(1, 10));
    await run.drain();
    expect(inOrder(run.ofKey('k0'))).toEqual(range(1, 10));
    expect(run.h.store.deadLetters).toHaveLength(0);
  });

  it('ORD-4: park — the failing event is a dead letter with its payload, the key’s later events wait in order, and a redrive delivers them in order', async () => {
    const refused = new Set(['k0/3']);
    const run = harness('park', (one) => (refused.has(`${one.key}/${one.n}`) ? 415 : 204));
    await run.publish(5, 10);
    await run.drain();
    expect(inOrder(run.ofKey('k0'))).toEqual([1, 2]);
    for (let k = 1; k < 5; k++) expect(inOrder(run.ofKey(`k${k}`))).toEqual(range(1, 10));
    expect(run.h.store.deadLetters).toHaveLength(1);
    const { deadLetter } = run.h.store.deadLetters[0]!;
    expect(JSON.parse(deadLetter.events[0]!)).toMatchObject({ partitionkey: 'k0', n: 3, sequence: '0000000003' });
    refused.clear();
    await run.outbox.enqueue({ id: SUB, delivery: 'push' }, redriveMessages(SUB, [deadLetter], T0));
    await run.drain();
    expect(inOrder(run.ofKey('k0'))).toEqual(range(1, 10));
  });

  it('ORD-4: skip — the failing event is a dead letter, the key goes on, and the gap shows in sequence', async () => {
    const run = harness('skip', (one) => (one.key === 'k0' && one.n === 3 ? 415 : 204));
    await run.publish(3, 6);
    await run.drain();
    expect(run.ofKey('k0').map((one) => Number(one.sequence))).toEqual([1, 2, 4, 5, 6]);
    expect(run.h.store.deadLetters.map(({ deadLetter }) => JSON.parse(deadLetter.events[0]!).sequence)).toEqual([
      '0000000003',
    ]);
  });

  it('ORD-3: a head queued twice (router and delivery function both found it free) is sent once', async () => {
    const run = harness('block', () => 204);
    await run.publish(1, 3);
    const head = await run.untilHeadQueued();
    run.queue.push({ ...head, messageId: 'copy' });
    await run.drain();
    expect(inOrder(run.ofKey('k0'))).toEqual([1, 2, 3]);
  });

  it('ORD-3: a process killed after the lane moved past its head, before the next event was queued, does not strand the key', async () => {
    const run = harness('block', () => 204);
    await run.publish(1, 3);
    const head = await run.untilHeadQueued();
    const advance = run.lanes.advanceThrough.bind(run.lanes);
    let killed = false;
    run.lanes.advanceThrough = async (lane, first, last) => {
      const next = await advance(lane, first, last);
      if (killed) return next;
      killed = true;
      // Died after the update, before the send: the next event is on no queue.
      return undefined;
    };
    await run.drain();
    // SQS hands event 1's message out again: it was never deleted.
    run.queue.push({ ...head, receiveCount: 1 });
    await run.drain();
    expect([...new Set(inOrder(run.ofKey('k0')))]).toEqual([1, 2, 3]);
  });

  it('ORD-3: a settler killed after appending its lane, before queuing the head, does not strand the key: its message comes back and queues the head', async () => {
    const run = harness('block', () => 204);
    await run.publish(1, 3);
    // One settle message for the key's three events (one router batch).
    const [settle] = run.queue.filter((task) => decodeDeliveryMessage(task.body).ordering?.sequence === undefined);
    const enqueue = run.h.deps.outbox.enqueue.bind(run.h.deps.outbox);
    let killed = false;
    run.h.deps.outbox.enqueue = async (subscription, messages) => {
      if (killed) return enqueue(subscription, messages);
      // Died after the lane was appended and unstaged, before the head was sent.
      killed = true;
    };
    await run.drain();
    expect(inOrder(run.ofKey('k0'))).toEqual([]);
    // SQS hands the settle message out again: it was never deleted.
    run.queue.push({ ...settle!, receiveCount: 1 });
    await run.drain();
    expect(inOrder(run.ofKey('k0'))).toEqual([1, 2, 3]);
  });

  it('ORD-3, PRIV-2: an event erased while it waited in its lane is passed over when its turn comes: the key goes on, the gap shows in sequence', async () => {
    const run = harness('block', () => 204);
    await run.publish(1, 3);
    await run.untilHeadQueued();
    // What the erasure leaves of a numbered event (core/erasure/erase-ordered-lanes.ts): its message without events.
    const lane = [...run.lanes.lanes.values()][0]!;
    const second = decodeDeliveryMessage(lane.bodies.get(2)!);
    lane.bodies.set(2, encodeDeliveryMessage({ ...second, events: [] }));
    await run.drain();
    // Nothing at all was sent for it: every request the target saw is one of these two.
    expect(run.sent.map((one) => [one.key, one.n, Number(one.sequence)])).toEqual([
      ['k0', 1, 1],
      ['k0', 3, 3],
    ]);
    // Passed over as erased, told in the log (not attempted, not withheld, not a dead letter).
    expect(run.h.messages('ordered event erased while it waited: its place is passed over')).toHaveLength(1);
    expect(run.h.store.deadLetters).toHaveLength(0);
  });
});
