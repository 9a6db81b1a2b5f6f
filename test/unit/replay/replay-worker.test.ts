/**
 * One replay chunk at a time over memory adapters (functions/core/replay/replay-worker.ts): what
 * is queued for the subscription, how it is marked and numbered, what is held back (entitlement,
 * conditions, narrowing, retention), the pace, and how a replay ends.
 */
import { describe, expect, it } from 'vitest';
import { chunkBudget, replayDeliveryId, runReplayChunk, RATE_CHUNK_SECONDS } from '../../../functions/core/replay/replay-worker.js';
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
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'finished', scanned: 3, matched: 3, sent: 3, failed: 0 });
    expect(world.store.slots.has('sub-1')).toBe(false);
    expect(world.finished.map((r) => r.state)).toEqual(['finished']);
  });

  it('EDU-7: an event the owner is no longer entitled to, or that the subscription does not match now, is not replayed', async () => {
    const world = workerWorld({
      subscription: subscription({ types: ['nl.example.a.v1', 'nl.example.secret.v1'] }),
      entitlements: new Map([['client-a', [{ typePrefix: 'nl.example.a.' }]]]),
    });
    await world.store.start(runningReplay(), NOW + HOUR);
    await archiveAll(world.archive, [
      [archived('a', NOW - HOUR), archived('secret', NOW - HOUR + 1, 'nl.example.secret.v1'), archived('b', NOW - HOUR + 2, 'nl.example.b.v1')],
    ]);
    await runToEnd(world);
    expect(world.sent.map((m) => JSON.parse(m.events[0]!).id)).toEqual(['a']);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ scanned: 3, matched: 1, sent: 1 });
  });

  it('EDU-18: the narrowing (types, filters) applies on top of the subscription', async () => {
    const world = workerWorld();
    await world.store.start(runningReplay({ types: ['nl.example.a.v1'], filters: [{ prefix: { id: 'keep' } }] }), NOW + HOUR);
    await archiveAll(world.archive, [[archived('keep-1', NOW - 3), archived('drop', NOW - 2), archived('keep-2', NOW - 1, 'nl.example.b.v1')]]);
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
    await archiveAll(world.archive, [Array.from({ length: 12 }, (_, i) => archived(`e${String(i).padStart(2, '0')}`, NOW - HOUR + i))]);
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
    const send = world.deps.send;
    const cancelling = {
      ...world.deps,
      send: async (s: never, bodies: readonly string[]) => {
        const record = (await world.store.get('sub-1', 'replay-1'))!;
        await world.store.update({ ...record, state: 'cancelled', version: record.version + 1 }, record.version, NOW);
        await send(s, bodies);
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
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'failed', matched: 2, sent: 0, failed: 2 });
    expect(world.store.slots.has('sub-1')).toBe(false);
    expect(world.finished.map((r) => r.state)).toEqual(['failed']);
  });

  it('EDU-18: a replay of a deleted subscription ends as failed', async () => {
    const world = workerWorld();
    await world.store.start(runningReplay({ subscriptionId: 'sub-1' }), NOW + HOUR);
    world.current.subscription = subscription({ id: 'other' });
    await runReplayChunk(message, once, world.deps);
    expect(await world.store.get('sub-1', 'replay-1')).toMatchObject({ state: 'failed', reason: 'the subscription was deleted' });
  });
});
