/**
 * One replay chunk at a time over memory adapters (functions/core/replay/replay-worker.ts): what
 * is queued for the subscription, how it is marked and numbered, what is held back (entitlement,
 * conditions, narrowing, retention), the pace, and how a replay ends.
 */
import { describe, expect, it } from 'vitest';
import { replayDeliveryId } from '../../../functions/core/delivery-message/delivery-rules.js';
import type { DeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import { chunkBudget, runReplayChunk, RATE_CHUNK_SECONDS } from '../../../functions/core/replay/replay-worker.js';
import { ReplayRunningError } from '../../../functions/core/replay/ports.js';
import { archiveAll, archived, HOUR, NOW, runningReplay, SOURCE, subscription, workerWorld } from './replay-fakes.js';

const message = { subscriptionId: 'sub-1', replayId: 'replay-1' };
const once = { lastAttempt: false };

/** Runs chunks as the queue would, until the replay is no longer running. */
async function runToEnd(world: ReturnType<typeof workerWorld>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    await runReplayChunk(message, once, world.deps);
    if ((await world.store.get('sub-1', 'replay-1'))?.state !== 'running') return;
  }
  throw new Error('replay did not end');
}

describe('replay worker (issue 13, item 2)', () => {
  it('EDU-18: every matching event of the window is queued once, marked with the replay and its place in acceptance order, with a new key per event', async () => {
    const world = workerWorld();
    await world.store.start(runningReplay({ from: NOW - 5 * HOUR, to: NOW - HOUR }), NOW + HOUR);
    await archiveAll(world.archive, [
      [archived('before', NOW - 6 * HOUR), archived('e1', NOW - 5 * HOUR)],
      [archived('e3', NOW - 3 * HOUR), archived('e2', NOW - 4 * HOUR)],
      [archived('at-to', NOW - HOUR)],
    ]);
    await runToEnd(world);
    expect(world.sent.map((m) => JSON.parse(m.events[0]!).id)).toEqual(['e1', 'e2', 'e3']);
    expect(world.sent.map((m) => m.replay)).toEqual([1, 2, 3].map((sequence) => ({ id: 'replay-1', sequence })));
    expect(new Set(world.sent.map((m) => m.deliveryId)).size).toBe(3);
    expect(world.sent[0]!.deliveryId).toBe(replayDeliveryId('replay-1', { source: SOURCE, id: 'e1' }));
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({
      state: 'finished',
      scanned: 3,
      matched: 3,
      sent: 3,
      failed: 0,
    });
    expect(world.store.slots.has('sub-1')).toBe(false);
    expect(world.finished.map((r) => r.state)).toEqual(['finished']);
  });

  it('EDU-18: each stored chunk reports its own figures as replay progress, adding up to the replay totals', async () => {
    const world = workerWorld();
    const steps: { scanned: number; matched: number; sent: number; failed: number }[] = [];
    const deps = {
      ...world.deps,
      onProgress: (subscriptionId: string, step: (typeof steps)[number]) => {
        if (subscriptionId === 'sub-1') steps.push(step);
      },
    };
    await world.store.start(runningReplay({ types: ['nl.example.a.v1'] }), NOW + HOUR);
    await archiveAll(world.archive, [
      [archived('a1', NOW - 3), archived('b', NOW - 2, 'nl.example.b.v1'), archived('a2', NOW - 1)],
    ]);
    for (let i = 0; i < 100 && (await world.store.get('sub-1', 'replay-1'))?.state === 'running'; i++)
      await runReplayChunk(message, once, deps);
    const total = (key: keyof (typeof steps)[number]) => steps.reduce((sum, step) => sum + step[key], 0);
    expect(steps.length).toBeGreaterThan(0);
    expect({
      scanned: total('scanned'),
      matched: total('matched'),
      sent: total('sent'),
      failed: total('failed'),
    }).toEqual({
      scanned: 3,
      matched: 2,
      sent: 2,
      failed: 0,
    });
  });

  it('EDU-7: an event the owner is no longer entitled to, or that the subscription does not match now, is not replayed', async () => {
    const world = workerWorld({
      subscription: subscription({ types: ['nl.example.a.v1', 'nl.example.secret.v1'] }),
      entitlements: new Map([['client-a', [{ typePrefix: 'nl.example.a.' }]]]),
    });
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [
      [
        archived('a', NOW - HOUR),
        archived('secret', NOW - HOUR + 1, 'nl.example.secret.v1'),
        archived('b', NOW - HOUR + 2, 'nl.example.b.v1'),
      ],
    ]);
    await runToEnd(world);
    expect(world.sent.map((m) => JSON.parse(m.events[0]!).id)).toEqual(['a']);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ scanned: 3, matched: 1, sent: 1 });
  });

  it('EDU-18: the narrowing (types, filters) applies on top of the subscription', async () => {
    const world = workerWorld();
    await world.store.start(
      runningReplay({ types: ['nl.example.a.v1'], filters: [{ prefix: { id: 'keep' } }] }),
      NOW + HOUR,
    );
    await archiveAll(world.archive, [
      [archived('keep-1', NOW - 3), archived('drop', NOW - 2), archived('keep-2', NOW - 1, 'nl.example.b.v1')],
    ]);
    await runToEnd(world);
    expect(world.sent.map((m) => JSON.parse(m.events[0]!).id)).toEqual(['keep-1']);
  });

  it('EDU-18: events past the archive retention are never replayed, even while their object is still there', async () => {
    const world = workerWorld({ retentionMs: 24 * HOUR });
    await world.store.start(runningReplay({ from: NOW - 48 * HOUR }), NOW + HOUR);
    await archiveAll(world.archive, [[archived('old', NOW - 25 * HOUR)], [archived('kept', NOW - 23 * HOUR)]]);
    await runToEnd(world);
    expect(world.sent.map((m) => JSON.parse(m.events[0]!).id)).toEqual(['kept']);
  });

  it('WH-6, EDU-10: a push replay to a target with an allowed rate queues a rate’s worth per chunk and pauses between chunks', async () => {
    const world = workerWorld({ subscription: subscription({ allowedRatePerMinute: 30 }) });
    expect(chunkBudget(world.current.subscription)).toBe(5);
    expect(chunkBudget(subscription({ delivery: 'pull', allowedRatePerMinute: 30 }))).toBe(500);
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [
      Array.from({ length: 12 }, (_, i) => archived(`e${String(i).padStart(2, '0')}`, NOW - HOUR + i)),
    ]);
    await runReplayChunk(message, once, world.deps);
    expect(world.sent).toHaveLength(5);
    expect(world.queue.messages).toEqual([{ message, delaySeconds: RATE_CHUNK_SECONDS }]);
    await runToEnd(world);
    expect(world.sent).toHaveLength(12);
    expect(world.sent.map((m) => m.replay!.sequence)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  it('EDU-IDEM-9: a chunk run twice (SQS delivered its message twice) queues the same keys and stores its progress once', async () => {
    const world = workerWorld({ subscription: subscription({ allowedRatePerMinute: 30 }) });
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [Array.from({ length: 8 }, (_, i) => archived(`e${i}`, NOW - HOUR + i))]);
    const start = (await world.store.get('sub-1', 'replay-1'))!;
    const get = world.store.get.bind(world.store);
    world.store.get = async () => start;
    await Promise.all([runReplayChunk(message, once, world.deps), runReplayChunk(message, once, world.deps)]);
    world.store.get = get;
    expect(world.sent).toHaveLength(10);
    expect(new Set(world.sent.map((m) => m.deliveryId)).size).toBe(5);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ sent: 5, version: 2 });
    expect(world.queue.messages).toHaveLength(1);
  });

  it('EDU-18: a cancelled replay queues nothing more; a chunk queued during the cancel is counted on it', async () => {
    const world = workerWorld({ subscription: subscription({ allowedRatePerMinute: 30 }) });
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [Array.from({ length: 8 }, (_, i) => archived(`e${i}`, NOW - HOUR + i))]);
    // The cancel lands while the chunk is queueing its events.
    const { outbox } = world.deps;
    const cancelling = {
      ...world.deps,
      outbox: {
        enqueue: async (s: never, messages: readonly DeliveryMessage[]) => {
          const record = (await world.store.get('sub-1', 'replay-1'))!;
          await world.store.update({ ...record, state: 'cancelled', version: record.version + 1 }, record.version, NOW);
          await outbox.enqueue(s, messages);
        },
      },
    };
    await runReplayChunk(message, once, cancelling);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'cancelled', sent: 5, matched: 5 });
    expect(world.queue.messages).toHaveLength(0);
    await runReplayChunk(message, once, world.deps);
    expect(world.sent).toHaveLength(5);
  });

  it('EDU-18: a chunk the delivery path refuses is retried; on its last attempt the replay fails, counting those events as failed', async () => {
    const world = workerWorld({ failSends: 10 });
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [[archived('a', NOW - 2), archived('b', NOW - 1)]]);
    await expect(runReplayChunk(message, once, world.deps)).rejects.toThrow('SQS refused');
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'running', sent: 0 });
    await runReplayChunk(message, { lastAttempt: true }, world.deps);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({
      state: 'failed',
      matched: 2,
      sent: 0,
      failed: 2,
    });
    expect(world.store.slots.has('sub-1')).toBe(false);
    expect(world.finished.map((r) => r.state)).toEqual(['failed']);
  });

  it('EDU-18: a replay of a deleted subscription ends as failed', async () => {
    const world = workerWorld();
    await world.store.start(runningReplay({ subscriptionId: 'sub-1' }), NOW + HOUR);
    world.current.subscription = subscription({ id: 'other' });
    await runReplayChunk(message, once, world.deps);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({
      state: 'failed',
      reason: 'the subscription was deleted',
    });
  });
});

describe('replay worker: how a replay ends and what it holds (issue 13, item 2)', () => {
  it('EDU-18: a chunk that keeps failing before it queues anything ends the replay as failed on its last attempt, and is retried before that', async () => {
    const world = workerWorld();
    await world.store.start(runningReplay(), NOW + HOUR);
    world.archive.list = async () => Promise.reject(new Error('S3 down'));
    const broken = world.deps;
    await expect(runReplayChunk(message, once, broken)).rejects.toThrow('S3 down');
    await runReplayChunk(message, { lastAttempt: true }, broken);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({
      state: 'failed',
      reason: 'the archive or the delivery path kept failing',
      finishedAt: NOW,
      version: 2,
    });
    expect(world.finished.map((r) => r.state)).toEqual(['failed']);
  });

  it('EDU-18: a suspended subscription is still replayed to (its deliveries wait); a retired one ends the replay as failed', async () => {
    const world = workerWorld({ subscription: subscription({ status: 'suspended' }) });
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [[archived('a', NOW - 1)]]);
    await runToEnd(world);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'finished', sent: 1 });

    const retired = workerWorld({ subscription: subscription({ status: 'retired' }) });
    await retired.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(retired.archive, [[archived('a', NOW - 1)]]);
    await runReplayChunk(message, once, retired.deps);
    expect(retired.sent).toEqual([]);
    expect(await retired.store.get('sub-1', 'replay-1')).toMatchObject({
      state: 'failed',
      reason: 'the subscription is retired',
    });
  });

  it('EDU-18: a window wholly past the archive retention finishes at once with nothing scanned, without asking the archive', async () => {
    // Retention starts the window exactly at its end: an empty window, inside an hour that has an object.
    const world = workerWorld({ retentionMs: 23 * HOUR + 30 * 60_000 });
    await world.store.start(runningReplay({ from: NOW - 48 * HOUR, to: NOW - 23 * HOUR - 30 * 60_000 }), NOW + HOUR);
    await archiveAll(world.archive, [[archived('old', NOW - 23 * HOUR - 45 * 60_000)]]);
    const before = world.archive.requests;
    await runReplayChunk(message, once, world.deps);
    expect(world.archive.requests).toBe(before);
    expect(world.sent).toEqual([]);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({
      state: 'finished',
      scanned: 0,
      matched: 0,
      sent: 0,
    });
  });

  it('EDU-18: a chunk that matches nothing puts nothing on the delivery path (SQS refuses an empty batch)', async () => {
    const world = workerWorld({ entitlements: new Map([['client-a', [{ typePrefix: 'nl.example.b.' }]]]) });
    const calls: number[] = [];
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [[archived('a', NOW - 2), archived('a2', NOW - 1)]]);
    await runReplayChunk(message, once, {
      ...world.deps,
      outbox: { enqueue: async (_s, messages) => void calls.push(messages.length) },
    });
    expect(calls).toEqual([]);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'finished', scanned: 2, matched: 0 });
  });

  it('EDU-18: a chunk given up on its last attempt counts what it scanned and reports those events as failed progress', async () => {
    const world = workerWorld({ failSends: 10 });
    const steps: unknown[] = [];
    await world.store.start(runningReplay({ scanned: 4, matched: 1, failed: 0, version: 3 }), NOW + HOUR);
    await archiveAll(world.archive, [[archived('a', NOW - 2), archived('b', NOW - 1)]]);
    await runReplayChunk(
      message,
      { lastAttempt: true },
      { ...world.deps, onProgress: (_id, step) => void steps.push(step) },
    );
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({
      state: 'failed',
      reason: 'the delivery path would not take the events',
      scanned: 6,
      matched: 3,
      failed: 2,
      version: 4,
    });
    expect(steps).toEqual([{ scanned: 2, matched: 2, sent: 0, failed: 2 }]);
  });

  it('EDU-18: a running replay keeps its subscription’s slot between chunks: no second replay can start meanwhile', async () => {
    const world = workerWorld({ subscription: subscription({ allowedRatePerMinute: 6 }) });
    await world.store.start(runningReplay(), NOW + 1);
    await archiveAll(world.archive, [[archived('a', NOW - 2), archived('b', NOW - 1)]]);
    await runReplayChunk(message, once, world.deps);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'running', sent: 1 });
    world.setClock(NOW + 60_000);
    await expect(world.store.start(runningReplay({ replayId: 'replay-2' }), NOW + HOUR)).rejects.toBeInstanceOf(
      ReplayRunningError,
    );
  });

  it('WH-6, EDU-10: only a push replay to a target with an allowed rate pauses, and only after queueing something', async () => {
    const many = Array.from({ length: 600 }, (_, i) => archived(`e${String(i).padStart(3, '0')}`, NOW - HOUR + i));
    for (const over of [{ delivery: 'pull' as const, allowedRatePerMinute: 30 }, { delivery: 'push' as const }]) {
      const world = workerWorld({ subscription: subscription(over) });
      await world.store.start(runningReplay(), NOW + HOUR);
      await archiveAll(world.archive, [many]);
      await runReplayChunk(message, once, world.deps);
      expect(world.sent, over.delivery).toHaveLength(500);
      expect(world.queue.messages, over.delivery).toEqual([{ message, delaySeconds: 0 }]);
    }
    expect(chunkBudget(subscription({ delivery: 'push' }))).toBe(500);
  });

  it('WH-6: a chunk that scanned its whole read and queued nothing goes on without a pause', async () => {
    const world = workerWorld({ subscription: subscription({ allowedRatePerMinute: 30, types: ['nl.example.b.v1'] }) });
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [
      Array.from({ length: 5001 }, (_, i) => archived(`e${String(i).padStart(4, '0')}`, NOW - HOUR + i)),
    ]);
    await runReplayChunk(message, once, world.deps);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'running', scanned: 5000, matched: 0 });
    expect(world.queue.messages).toEqual([{ message, delaySeconds: 0 }]);
  });

  it('EDU-18: a chunk whose replay vanished meanwhile (subscription deleted) ends quietly', async () => {
    const world = workerWorld();
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [[archived('a', NOW - 1)]]);
    const vanishing = { ...world.deps, outbox: { enqueue: async () => void world.store.records.clear() } };
    await expect(runReplayChunk(message, once, vanishing)).resolves.toBeUndefined();
  });

  it('EDU-18: a chunk queued during a cancel is counted on it only if nothing but the cancel wrote in between, and moves its version on', async () => {
    /** A cancel lands while the chunk queues its two events; with `alsoWrite`, another write follows it. */
    async function cancelDuringSend(alsoWrite: boolean) {
      const world = workerWorld();
      await world.store.start(runningReplay({ version: 1 }), NOW + HOUR);
      await archiveAll(world.archive, [[archived('a', NOW - 2), archived('b', NOW - 1)]]);
      const send = async () => {
        const record = (await world.store.get('sub-1', 'replay-1'))!;
        await world.store.update({ ...record, state: 'cancelled', version: 2 }, 1, NOW);
        if (alsoWrite)
          await world.store.update(
            { ...record, state: 'cancelled', updatedAt: NOW + 1, version: 3 },
            2,
            NOW,
            'cancelled',
          );
      };
      await runReplayChunk(message, once, { ...world.deps, outbox: { enqueue: send } });
      return world.store.get('sub-1', 'replay-1');
    }
    expect(await cancelDuringSend(false)).toMatchObject({ state: 'cancelled', scanned: 2, sent: 2, version: 3 });
    expect(await cancelDuringSend(true)).toMatchObject({
      state: 'cancelled',
      scanned: 0,
      sent: 0,
      updatedAt: NOW + 1,
      version: 3,
    });
  });

  it('EDU-18: a cancel during a chunk that queued nothing is left as the cancel wrote it', async () => {
    const world = workerWorld({ entitlements: new Map([['client-a', [{ typePrefix: 'nl.example.b.' }]]]) });
    await world.store.start(runningReplay({ version: 1 }), NOW + HOUR);
    await archiveAll(world.archive, [[archived('a', NOW - 2), archived('a2', NOW - 1)]]);
    const list = world.archive.list.bind(world.archive);
    // The cancel lands while the chunk reads the archive.
    world.archive.list = async (prefix) => {
      const record = (await world.store.get('sub-1', 'replay-1'))!;
      await world.store.update({ ...record, state: 'cancelled', version: 2 }, 1, NOW);
      return list(prefix);
    };
    await runReplayChunk(message, once, world.deps);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'cancelled', scanned: 0, version: 2 });
  });

  it('EDU-18: a replay finishes the same with no one listening for its end', async () => {
    const world = workerWorld();
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [[archived('a', NOW - 1)]]);
    const { onReplayFinished: _unused, ...unwired } = world.deps;
    await runReplayChunk(message, once, unwired);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'finished', sent: 1 });
  });
});
