/**
 * Issue 33, "Push": "Batch delivery, where the target takes batches, sends consecutive events of
 * one key in one request, in order" (ORD-6, core/delivery/ordered-run.ts), over in-memory lanes and
 * a queue without order (./ordered-push-harness.ts).
 */
import { describe, expect, it } from 'vitest';
import { redriveMessages } from '../../../functions/core/delivery/redrive.js';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import { SUB, T0 } from '../delivery/dispatcher-harness.js';
import { orderedPushHarness, type Answer, type Sent } from './ordered-push-harness.js';
import type { OrderingFailurePolicy } from '../../../functions/core/ordering/ordering-settings.js';

const BATCH = { contentMode: 'batch', batchSupported: true } as const;
const batched = (onFailure: OrderingFailurePolicy, answer: Answer) => orderedPushHarness(onFailure, answer, BATCH);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const ns = (events: readonly Sent[]) => events.map((one) => one.n);
const sequences = (events: readonly Sent[]) => events.map((one) => Number(one.sequence));
const has = (all: readonly Sent[], key: string, n: number) => all.some((one) => one.key === key && one.n === n);

describe('ordered batch delivery (issue 33, Push: consecutive events of one key in one request)', () => {
  it('ORD-6: where the target takes batches, a key’s consecutive events go in one request, in sequence order, each with its own sequence, at most ten; fewer requests and queue messages per event than one by one', async () => {
    const figures: Record<string, number>[] = [];
    for (const mode of ['structured', 'batch'] as const) {
      const run = orderedPushHarness('block', () => 204, mode === 'batch' ? BATCH : {});
      await run.publish(4, 25);
      await run.drain();
      for (let k = 0; k < 4; k++) {
        expect(ns(run.ofKey(`k${k}`))).toEqual(range(1, 25));
        expect(run.ofKey(`k${k}`).map((one) => one.sequence)).toEqual(
          range(1, 25).map((n) => String(n).padStart(10, '0')),
        );
      }
      const events = 4 * 25;
      figures.push({
        batch: mode === 'batch' ? 1 : 0,
        requestsPerEvent: run.requests.length / events,
        queueMessagesPerEvent: (run.counts.queued + run.counts.received) / events,
        laneCallsPerEvent: run.counts.laneCalls / events,
      });
      if (mode === 'structured') continue;
      for (const request of run.requests) {
        // One key per request, its numbers consecutive and rising.
        expect(new Set(request.map((one) => one.key)).size).toBe(1);
        expect(sequences(request)).toEqual(range(sequences(request)[0]!, sequences(request)[0]! + request.length - 1));
        expect(request.length).toBeLessThanOrEqual(10);
      }
      // Each key's 25 numbered events: runs of 10, 10 and 5.
      expect(run.requests.map((request) => request.length).sort((a, b) => b - a)).toEqual([
        ...Array<number>(8).fill(10),
        ...Array<number>(4).fill(5),
      ]);
    }
    console.log('ordered push, 4 keys × 25 events, per event (one by one, then in batches):', JSON.stringify(figures));
    const [single, batch] = figures as [Record<string, number>, Record<string, number>];
    expect(single['requestsPerEvent']).toBe(1);
    expect(batch['requestsPerEvent']).toBe(0.12);
    expect(batch['queueMessagesPerEvent']!).toBeLessThan(single['queueMessagesPerEvent']!);
    expect(batch['laneCallsPerEvent']!).toBeLessThan(single['laneCallsPerEvent']!);
  });

  it('ORD-6: a run never takes an event not yet numbered (staged, its settling window not over) nor goes across a number not yet stored', async () => {
    const run = batched('block', () => 204);
    await run.publish(1, 5);
    await run.untilHeadQueued();
    // A settler numbered 3 but has not stored it yet: the run stops before the gap.
    const lane = [...run.lanes.lanes.values()][0]!;
    const third = lane.bodies.get(3)!;
    lane.bodies.delete(3);
    // And events 6..8 are staged, their settle message not due yet.
    await run.publish(1, 3, 6);
    await run.drain(1);
    expect(run.requests.map(ns)).toEqual([[1, 2]]);
    // The settler stores 3 and finds it the head: it queues it (lane-settling.ts).
    lane.bodies.set(3, third);
    await run.outbox.enqueue({ id: SUB, delivery: 'push' }, [decodeDeliveryMessage(third)]);
    await run.drain(1);
    expect(run.requests.map(ns)).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    await run.drain();
    expect(run.requests.map(ns)).toEqual([
      [1, 2],
      [3, 4, 5],
      [6, 7, 8],
    ]);
  });

  it('ORD-6, issue 29 item 3: an event the subscriber may no longer receive ends a run and is withheld on its own; a run never starts with one', async () => {
    const run = batched('block', () => 204);
    run.h.deps.entitlements = async () => new Map([['subscriber', [{ typePrefix: 't' }]]]);
    await run.publish(1, 6);
    await run.untilHeadQueued();
    // Since it was routed, the owner lost the grant for event 3's type.
    const lane = [...run.lanes.lanes.values()][0]!;
    const third = decodeDeliveryMessage(lane.bodies.get(3)!);
    const events = third.events.map((event) => event.replace('"type":"t"', '"type":"other"'));
    lane.bodies.set(3, encodeDeliveryMessage({ ...third, events }));
    await run.drain();
    expect(run.requests.map(ns)).toEqual([
      [1, 2],
      [4, 5, 6],
    ]);
    expect(run.h.messages('delivery withheld: settled unsent')).toHaveLength(1);
    expect(run.h.store.deadLetters).toHaveLength(0);
  });

  it('ORD-6, ORD-4: block — a failing run is retried as it was first sent (same events, same Idempotency-Key, though more events came behind it), the other keys go on, then the key goes on in order', async () => {
    // k0's first run: 500 twice, then 415 once (would dead-letter: block tries again), then accepted.
    const run = batched('block', (one, tries) =>
      one.key === 'k0' && one.n === 1 ? ([500, 500, 415][tries - 1] ?? 204) : 204,
    );
    await run.publish(2, 4);
    await run.drain(6);
    // More events of both keys arrive while k0's first run fails.
    await run.publish(2, 4, 5);
    await run.drain(40);
    expect(ns(run.ofKey('k1'))).toEqual(range(1, 8));
    expect(ns(run.ofKey('k0'))).toEqual([]);
    await run.drain();
    expect(ns(run.ofKey('k0'))).toEqual(range(1, 8));
    const firstRun = run.attempts.filter((attempt) => attempt.events[0]!.key === 'k0' && attempt.events[0]!.n === 1);
    expect(firstRun.map((attempt) => attempt.status)).toEqual([500, 500, 415, 204]);
    expect(new Set(firstRun.map((attempt) => attempt.idempotencyKey)).size).toBe(1);
    for (const attempt of firstRun) expect(ns(attempt.events)).toEqual([1, 2, 3, 4]);
    expect(run.requests.filter((request) => request[0]!.key === 'k0').map(ns)).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
    ]);
    expect(run.h.store.deadLetters).toHaveLength(0);
  });

  it('ORD-6, ORD-4: park — a refused run is a dead letter per event (payload and sequence), the key waits, and a redrive of them, in any order, delivers them in order, then the rest', async () => {
    const refusing = { on: true };
    const run = batched('park', (_one, _tries, all) => (refusing.on && has(all, 'k0', 2) ? 415 : 204));
    await run.publish(2, 4);
    await run.drain();
    expect(ns(run.ofKey('k1'))).toEqual(range(1, 4));
    expect(ns(run.ofKey('k0'))).toEqual([]);
    const deadLetters = run.h.store.deadLetters.map(({ deadLetter }) => deadLetter);
    expect(deadLetters.map((one) => JSON.parse(one.events[0]!) as Record<string, unknown>)).toMatchObject(
      range(1, 4).map((n) => ({ partitionkey: 'k0', n, sequence: String(n).padStart(10, '0') })),
    );
    expect(deadLetters.every((one) => one.events.length === 1 && one.reason === deadLetters[0]!.reason)).toBe(true);
    // Later events of the parked key wait in the lane.
    await run.publish(1, 2, 5);
    await run.drain();
    expect(ns(run.ofKey('k0'))).toEqual([]);
    refusing.on = false;
    // The owner redrives them all at once, last first.
    await run.outbox.enqueue({ id: SUB, delivery: 'push' }, redriveMessages(SUB, [...deadLetters].reverse(), T0));
    await run.drain();
    expect(ns(run.ofKey('k0'))).toEqual(range(1, 6));
    expect(sequences(run.ofKey('k0'))).toEqual(range(1, 6));
    // Each redrive alone, in its place; the events behind the parked run as a run again.
    expect(run.requests.filter((request) => request[0]!.key === 'k0').map(ns)).toEqual([[1], [2], [3], [4], [5, 6]]);
  });

  it('ORD-6, ORD-4: skip — a refused run is a dead letter per event, the key goes on past it, the gap shows in sequence, and a redrive delivers one alone with its old sequence', async () => {
    const run = batched('skip', (_one, _tries, all) => (has(all, 'k0', 2) && all.length > 1 ? 415 : 204));
    await run.publish(1, 3);
    await run.drain();
    expect(run.h.store.deadLetters.map(({ deadLetter }) => JSON.parse(deadLetter.events[0]!).sequence)).toEqual([
      '0000000001',
      '0000000002',
      '0000000003',
    ]);
    await run.publish(1, 2, 4);
    await run.drain();
    expect(sequences(run.ofKey('k0'))).toEqual([4, 5]);
    const second = run.h.store.deadLetters[1]!.deadLetter;
    await run.outbox.enqueue({ id: SUB, delivery: 'push' }, redriveMessages(SUB, [second], T0));
    await run.drain();
    expect(run.requests.at(-1)!.map((one) => [one.n, Number(one.sequence)])).toEqual([[2, 2]]);
  });
});
