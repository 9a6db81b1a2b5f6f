/**
 * Issue 33 item "Pull" (ORD-5) without emulators: the router's marks through the ordered outbox
 * into a pull subscription's queue — simulated here as SQS behaves: messages handed out in any
 * order, hidden for their lock, back when the lock runs out, receipt handles per receive — and a
 * consumer receiving and settling through PullService, over in-memory lanes.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DeadLetter } from '../../../functions/core/delivery/delivery-records.js';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import { orderedOutbox } from '../../../functions/core/delivery-message/ordered-outbox.js';
import { queueOutbox } from '../../../functions/core/delivery-message/outbox.js';
import type { OrderingFailurePolicy } from '../../../functions/core/ordering/ordering-settings.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import type { PullQueues, QueueEntryOutcome } from '../../../functions/core/pull/pull-queues.js';
import { PullService } from '../../../functions/core/pull/pull-service.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import { archiveObjects, type ArchivedEvent } from '../../../functions/core/replay/archive-format.js';
import { runReplayChunk } from '../../../functions/core/replay/replay-worker.js';
import { InMemoryOrderedLanes } from '../../support/memory/memory-ordered-lanes.js';
import { HOUR, NOW, SOURCE, runningReplay, subscription as replayed, workerWorld } from '../replay/replay-fakes.js';
import { keyedDeliveries } from '../../support/keyed-deliveries.js';

const SUB = 'sub-ordered-pull';
const CLIENT = 'client-a';
const WINDOW_MS = 1000;

interface Queued {
  readonly messageId: string;
  readonly body: string;
  visibleAt: number;
  receiveCount: number;
  handle?: string;
}

interface Got {
  readonly key: string;
  readonly n: number;
  readonly sequence: string;
  readonly token: string;
  readonly deliveryCount: number;
  readonly lockedUntil: number;
  /** The replay the lock names (docs/REPLAY.md), on a replayed event. */
  readonly replayId?: string | undefined;
}

function harness(onFailure: OrderingFailurePolicy = 'block', maxDeliveryCount = 10) {
  const clock = { now: Date.UTC(2026, 10, 29, 12) };
  const subscription = {
    id: SUB,
    owner: CLIENT,
    delivery: 'pull',
    status: 'active',
    pull: { maxDeliveryCount, retentionSeconds: 3600 },
    ordering: { key: 'partitionkey', withoutKey: 'unordered', onFailure },
  } as Subscription;
  const queue: Queued[] = [];
  let ids = 0;
  let seed = 11;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const settle = (entries: readonly { entryId: string; receiptHandle: string }[], apply: (m: Queued) => void) =>
    new Map<string, QueueEntryOutcome>(
      entries.map(({ entryId, receiptHandle }) => {
        const message = queue.find((m) => m.handle === receiptHandle && m.visibleAt > clock.now);
        if (message === undefined) return [entryId, 'lock-lost'];
        apply(message);
        return [entryId, 'done'];
      }),
    );
  const queues: PullQueues = {
    create: async () => undefined,
    update: async () => undefined,
    remove: async () => undefined,
    send: async (_id, bodies, delaySeconds = 0) => {
      for (const body of bodies)
        queue.push({ messageId: `m${++ids}`, body, visibleAt: clock.now + delaySeconds * 1000, receiveCount: 0 });
    },
    receive: async (_id, { max, visibilitySeconds }) => {
      const taken: Queued[] = [];
      for (let visible = queue.filter((m) => m.visibleAt <= clock.now); taken.length < max && visible.length > 0;) {
        const pick = visible.splice(Math.floor(random() * visible.length), 1)[0]!;
        pick.receiveCount++;
        pick.handle = `${pick.messageId}#${pick.receiveCount}`;
        pick.visibleAt = clock.now + visibilitySeconds * 1000;
        taken.push(pick);
      }
      return taken.map((m) => ({
        messageId: m.messageId,
        receiptHandle: m.handle!,
        body: m.body,
        receiveCount: m.receiveCount,
      }));
    },
    delete: async (_id, entries) => settle(entries, (m) => queue.splice(queue.indexOf(m), 1)),
    changeVisibility: async (_id, entries) => {
      const seconds = new Map(entries.map((e) => [e.entryId, e.seconds]));
      return new Map(
        entries.map((entry) => [
          entry.entryId,
          settle([entry], (m) => (m.visibleAt = clock.now + seconds.get(entry.entryId)! * 1000)).get(entry.entryId)!,
        ]),
      );
    },
  };
  const lanes = new InMemoryOrderedLanes();
  const outbox = orderedOutbox(
    queueOutbox({
      deliveryQueue: { send: async () => expect.fail('nothing goes to the push queue') },
      pullQueues: queues,
    }),
    () => lanes,
    { settlingWindowMs: WINDOW_MS, now: () => clock.now },
  );
  const marks = new Map<string, string>();
  const givenUp = new Set<string>();
  const deadLetters: DeadLetter[] = [];
  const key = randomBytes(32);
  const service = new PullService({
    queues,
    rejections: {
      mark: async (_id, messageId, reason) => void marks.set(messageId, reason),
      find: async (_id, messageIds) => new Map([...marks].filter(([id]) => messageIds.includes(id))),
      clear: async (_id, messageIds) => messageIds.forEach((id) => marks.delete(id)),
    },
    givenUpLocks: {
      giveUp: async (_id, handles) => handles.forEach((h) => givenUp.add(h)),
      givenUp: async (_id, handles) => new Set(handles.filter((h) => givenUp.has(h))),
    },
    deadLetters: { putDeadLetter: async (deadLetter) => void deadLetters.push(deadLetter) },
    metrics: { deadLettered: () => undefined },
    lockTokenKey: async () => key,
    clock: () => clock.now,
    deadLetterRetentionSeconds: 3600,
    log: silentLog,
    leases: { take: async () => 0, give: async () => undefined },
    maxPollsPerSubscription: 5,
    maxPollsPerClient: 10,
    outgoingEvents: async (_s, events) => events,
    ordering: { lanes, outbox, settlingWindowMs: WINDOW_MS },
  });

  /** As the router marks them: interleaved over keys, each key's events in order, a millisecond apart. */
  const publish = (keys: number, perKey: number, from = 1) =>
    outbox.enqueueAll(
      keyedDeliveries(SUB, keys, perKey, clock.now, from).map((message) => ({ subscription, message })),
    );
  const receive = async (maxevents = 10, lockseconds = 30): Promise<Got[]> => {
    const answer = await service.receive(
      CLIENT,
      subscription,
      Buffer.from(JSON.stringify({ maxevents, waitseconds: 0, lockseconds })),
    );
    const body = JSON.parse(answer.body as string) as {
      events: { partitionkey: string; n: number; sequence: string }[];
      locks: { locktoken: string; deliverycount: number; lockeduntil: string; replay?: { id: string } }[];
    };
    return body.events.map((event, index) => ({
      key: event.partitionkey,
      n: event.n,
      sequence: event.sequence,
      token: body.locks[index]!.locktoken,
      deliveryCount: body.locks[index]!.deliverycount,
      lockedUntil: Date.parse(body.locks[index]!.lockeduntil),
      replayId: body.locks[index]!.replay?.id,
    }));
  };
  const settleTokens = async (action: 'acknowledge' | 'release' | 'reject', tokens: string[], extra = {}) => {
    if (tokens.length === 0) return { succeeded: [], failed: [] };
    const answer = await service.settle(
      CLIENT,
      subscription,
      action,
      Buffer.from(JSON.stringify({ locktokens: tokens, ...extra })),
    );
    return JSON.parse(answer.body as string) as { succeeded: unknown[]; failed: unknown[] };
  };
  return { clock, queue, lanes, service, publish, receive, settleTokens, deadLetters, subscription, outbox };
}

describe('ordered pull delivery (issue 33 item "Pull", ORD-5)', () => {
  it('ORD-5: several keys, a consumer receiving and acknowledging: each key in acceptance order, sequence 1..n, at most one locked event per key, none lost, none twice past an ack', async () => {
    const h = harness();
    const KEYS = 6;
    const EVENTS = 8;
    await h.publish(KEYS, EVENTS);
    const acked: Got[] = [];
    const locked = new Map<string, Got>();
    let maxLockedOfOneKey = 0;
    for (let round = 0; round < 200 && acked.length < KEYS * EVENTS; round++) {
      const got = await h.receive(7);
      for (const one of got) {
        if (locked.has(one.key)) maxLockedOfOneKey = 2;
        locked.set(one.key, one);
        maxLockedOfOneKey = Math.max(maxLockedOfOneKey, 1);
      }
      // Acknowledges one key's event of every two, so locks overlap across receives.
      const acking = [...locked.values()].filter((_, index) => index % 2 === round % 2);
      const answer = await h.settleTokens(
        'acknowledge',
        acking.map((one) => one.token),
      );
      expect(answer.failed).toEqual([]);
      for (const one of acking) {
        locked.delete(one.key);
        acked.push(one);
      }
      h.clock.now += 500;
    }
    expect(maxLockedOfOneKey).toBe(1);
    expect(acked).toHaveLength(KEYS * EVENTS);
    for (let k = 0; k < KEYS; k++)
      expect(acked.filter((one) => one.key === `k${k}`).map((one) => [one.n, one.sequence])).toEqual(
        Array.from({ length: EVENTS }, (_, i) => [i + 1, String(i + 1).padStart(10, '0')]),
      );
    // Nothing left: no event, no settle message.
    expect(h.queue).toEqual([]);
  });

  it('ORD-5: a settle message is never handed out; until its settling window has passed nothing of the key is', async () => {
    const h = harness();
    await h.publish(1, 3);
    // The settle message is delayed by the window: nothing is visible yet.
    expect(await h.receive()).toEqual([]);
    h.clock.now += WINDOW_MS + 1000;
    // This receive meets the settle message: it settles the lane and queues the head, handing out nothing itself.
    expect(await h.receive()).toEqual([]);
    expect(h.queue).toHaveLength(1);
    const [first] = await h.receive();
    expect([first!.n, first!.sequence]).toEqual([1, '0000000001']);
  });

  it('ORD-5: a release and an expired lock put the same head back; the next is not handed out before its acknowledgement', async () => {
    const h = harness();
    await h.publish(1, 3);
    h.clock.now += WINDOW_MS + 1000;
    await h.receive();
    const [first] = await h.receive(10, 10);
    expect(first!.n).toBe(1);
    expect((await h.settleTokens('release', [first!.token])).failed).toEqual([]);
    const [again] = await h.receive(10, 10);
    expect([again!.n, again!.deliveryCount]).toEqual([1, 2]);
    expect(await h.receive()).toEqual([]);
    h.clock.now += 11_000; // the lock runs out
    const [third] = await h.receive(10, 10);
    expect([third!.n, third!.deliveryCount]).toEqual([1, 3]);
    expect(await h.receive()).toEqual([]);
    expect((await h.settleTokens('acknowledge', [third!.token])).failed).toEqual([]);
    const [second] = await h.receive();
    expect([second!.n, second!.sequence]).toEqual([2, '0000000002']);
  });

  it('ORD-5, PRIV-2: an event erased while it waited in its lane is passed over, not handed out: the key goes on, the gap shows in sequence', async () => {
    const h = harness();
    await h.publish(1, 3);
    h.clock.now += WINDOW_MS + 1000;
    await h.receive();
    const [first] = await h.receive();
    expect(first!.n).toBe(1);
    // What the erasure leaves of a numbered event (core/erasure/erase-ordered-lanes.ts): its message without events.
    const lane = [...h.lanes.lanes.values()][0]!;
    lane.bodies.set(2, encodeDeliveryMessage({ ...decodeDeliveryMessage(lane.bodies.get(2)!), events: [] }));
    expect((await h.settleTokens('acknowledge', [first!.token])).failed).toEqual([]);
    // This receive meets the erased one and passes over it; the next queued is event 3.
    expect(await h.receive()).toEqual([]);
    const [third] = await h.receive();
    expect([third!.n, third!.sequence]).toEqual([3, '0000000003']);
  });

  it('ORD-5: skip — a rejected head is a dead letter with its sequence and the key goes on, the gap visible', async () => {
    const h = harness('skip');
    await h.publish(1, 3);
    h.clock.now += WINDOW_MS + 1000;
    await h.receive();
    const [first] = await h.receive();
    await h.settleTokens('reject', [first!.token], { reason: 'cannot use it' });
    // The next receive moves it to the dead letters and releases the next event; that one comes on the receive after.
    expect(await h.receive()).toEqual([]);
    expect(h.deadLetters.map((d) => JSON.parse(d.events[0]!) as { n: number; sequence: string })).toEqual([
      expect.objectContaining({ n: 1, sequence: '0000000001' }),
    ]);
    const [second] = await h.receive();
    expect([second!.n, second!.sequence]).toEqual([2, '0000000002']);
  });

  it('ORD-5: block — a rejected head is no dead letter: it comes back after 60 s, the key’s later events waiting while other keys flow, until it is acknowledged', async () => {
    const h = harness('block');
    await h.publish(2, 3);
    h.clock.now += WINDOW_MS + 1000;
    await h.receive();
    const heads = await h.receive();
    const k0 = heads.find((one) => one.key === 'k0')!;
    expect([k0.n, k0.deliveryCount]).toEqual([1, 1]);
    expect((await h.settleTokens('reject', [k0.token], { reason: 'not yet' })).failed).toEqual([]);
    await h.settleTokens(
      'acknowledge',
      heads.filter((one) => one.key === 'k1').map((one) => one.token),
    );
    // Within the minute: k1 goes on, nothing of k0 is handed out, nothing is a dead letter.
    const seen: Got[] = [];
    for (let round = 0; round < 3; round++) {
      const got = await h.receive();
      seen.push(...got);
      await h.settleTokens(
        'acknowledge',
        got.filter((one) => one.key === 'k1').map((one) => one.token),
      );
      h.clock.now += 19_000;
    }
    expect(seen.filter((one) => one.key === 'k1').map((one) => one.n)).toEqual([2, 3]);
    expect(seen.filter((one) => one.key === 'k0')).toEqual([]);
    expect(h.deadLetters).toEqual([]);
    h.clock.now += 4000;
    const [again] = await h.receive();
    expect([again!.key, again!.n, again!.sequence, again!.deliveryCount]).toEqual(['k0', 1, '0000000001', 2]);
    await h.settleTokens('acknowledge', [again!.token]);
    const rest: number[] = [];
    for (let round = 0; round < 4; round++) {
      const got = await h.receive();
      await h.settleTokens(
        'acknowledge',
        got.map((one) => one.token),
      );
      rest.push(...got.map((one) => one.n));
    }
    expect(rest).toEqual([2, 3]);
    expect(h.deadLetters).toEqual([]);
  });

  it('ORD-5: park — a head past maxdeliverycount is a dead letter, the key waits; a redrive of it delivers it, then the rest in order', async () => {
    const h = harness('park', 2);
    await h.publish(2, 3);
    h.clock.now += WINDOW_MS + 1000;
    await h.receive();
    // k0's head is never acknowledged; k1 is, every time.
    const k1: number[] = [];
    for (let round = 0; round < 12; round++) {
      const got = await h.receive(10, 10);
      await h.settleTokens(
        'acknowledge',
        got.filter((one) => one.key === 'k1').map((one) => one.token),
      );
      k1.push(...got.filter((one) => one.key === 'k1').map((one) => one.n));
      expect(got.filter((one) => one.key === 'k0').every((one) => one.n === 1)).toBe(true);
      h.clock.now += 11_000;
    }
    expect(k1).toEqual([1, 2, 3]);
    expect(h.deadLetters).toHaveLength(1);
    expect(JSON.parse(h.deadLetters[0]!.events[0]!)).toMatchObject({
      partitionkey: 'k0',
      n: 1,
      sequence: '0000000001',
    });
    expect(h.queue).toEqual([]);
    // A redrive (as the dead-letter API sends it: the stored event, a new delivery id, redriveOf).
    const dead = h.deadLetters[0]!;
    const redriven: DeliveryMessage = {
      version: 1,
      deliveryId: 'redriven-1',
      subscriptionId: SUB,
      events: dead.events,
      createdAt: h.clock.now,
      redriveOf: dead.deliveryId,
    };
    await h.outbox.enqueue(h.subscription, [redriven]);
    const order: number[] = [];
    for (let round = 0; round < 6; round++) {
      const got = await h.receive();
      expect(got.length).toBeLessThanOrEqual(1);
      await h.settleTokens(
        'acknowledge',
        got.map((one) => one.token),
      );
      order.push(...got.map((one) => one.n));
    }
    expect(order).toEqual([1, 2, 3]);
  });

  it('ORD-5: a second copy of a head (both writers queued it) is dropped while the first is locked', async () => {
    const h = harness();
    await h.publish(1, 1);
    h.clock.now += WINDOW_MS + 1000;
    await h.receive();
    // A copy of the head's message, as when the settler and an advancing acknowledgement both queue it.
    h.queue.push({ ...h.queue[0]!, messageId: 'copy', visibleAt: h.clock.now, receiveCount: 0 });
    const got = await h.receive();
    expect(got).toHaveLength(1);
    // The other copy left the queue: only the locked one is there.
    expect(h.queue).toHaveLength(1);
    expect(h.queue[0]!.visibleAt).toBeGreaterThan(h.clock.now);
  });

  it('ORD-7: a replay of an ordered pull subscription: each key handed out one locked event at a time, in acceptance order, sequence from 1 in the replay, each lock naming the replay', async () => {
    const h = harness();
    const world = workerWorld({
      subscription: replayed({ id: SUB, delivery: 'pull', ordering: h.subscription.ordering! }),
    });
    const KEYS = 4;
    const EVENTS = 6;
    const events: ArchivedEvent[] = [];
    for (let n = 1; n <= EVENTS; n++)
      for (let k = 0; k < KEYS; k++) {
        const id = `k${k}-${n}`;
        const json = JSON.stringify({ specversion: '1.0', id, source: SOURCE, type: 't', partitionkey: `k${k}`, n });
        events.push({ acceptedAt: NOW - 5 * HOUR + events.length * 1000, source: SOURCE, id, type: 't', json });
      }
    // Router batches that overlap in time, each in its own order: the worker reads them merged, in acceptance order.
    for (let start = 0; start < events.length; start += 5)
      for (const object of archiveObjects(events.slice(start, start + 7).reverse()))
        await world.archive.put(object.key, object.body);
    await world.store.start(runningReplay({ subscriptionId: SUB }), NOW + HOUR);
    await runReplayChunk(
      { subscriptionId: SUB, replayId: 'replay-1' },
      { lastAttempt: false },
      {
        ...world.deps,
        outbox: h.outbox,
      },
    );
    expect(h.queue).toHaveLength(KEYS);
    const acked: Got[] = [];
    for (let round = 0; round < 100 && acked.length < KEYS * EVENTS; round++) {
      const got = await h.receive(10);
      expect(new Set(got.map((one) => one.key)).size).toBe(got.length);
      expect(
        (
          await h.settleTokens(
            'acknowledge',
            got.map((one) => one.token),
          )
        ).failed,
      ).toEqual([]);
      acked.push(...got);
    }
    for (let k = 0; k < KEYS; k++)
      expect(acked.filter((one) => one.key === `k${k}`).map((one) => [one.n, one.sequence])).toEqual(
        Array.from({ length: EVENTS }, (_, i) => [i + 1, String(i + 1).padStart(10, '0')]),
      );
    expect(new Set(acked.map((one) => one.replayId))).toEqual(new Set(['replay-1']));
    expect(h.queue).toEqual([]);
  });
});
