/**
 * The replays' DynamoDB store on dynalite (functions/aws/dynamodb-replay-store.ts): one running
 * replay per subscription by a conditional write, a slot whose lease ran out taken over (and its
 * replay marked failed), progress stored only over the version it was read at, and the list.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbReplayStore } from '../../functions/aws/dynamodb-replay-store.js';
import { ReplayRunningError, type ReplayRecord } from '../../functions/core/replay/ports.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';

const NOW = Date.UTC(2026, 10, 23, 12);
let emulators: Emulators;
let dynamodb: DynamoDBClient;
let clock = NOW;
let store: DynamoDbReplayStore;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  store = new DynamoDbReplayStore(
    dynamodb,
    emulators.resourceEnvironment[resourceEnv.table('deliveries')]!,
    () => clock,
  );
});

afterAll(async () => {
  dynamodb?.destroy();
  await emulators?.stop();
});

const record = (subscriptionId: string, replayId: string): ReplayRecord => ({
  subscriptionId,
  replayId,
  state: 'running',
  from: NOW - 3_600_000,
  to: NOW,
  requestedBy: 'client-a',
  createdAt: clock,
  updatedAt: clock,
  scanned: 0,
  matched: 0,
  sent: 0,
  failed: 0,
  version: 1,
});

describe('replay store on DynamoDB (issue 13, item 2)', () => {
  it('EDU-18: two starts at once: exactly one takes the slot, the other learns which replay runs', async () => {
    const results = await Promise.allSettled([
      store.start(record('sub-a', 'r1'), NOW + 60_000),
      store.start(record('sub-a', 'r2'), NOW + 60_000),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(ReplayRunningError);
    const winner = results[0]!.status === 'fulfilled' ? 'r1' : 'r2';
    expect((refused.reason as ReplayRunningError).runningReplayId).toBe(winner);
    // Another subscription has its own slot.
    await store.start(record('sub-b', 'r3'), NOW + 60_000);
  });

  it('EDU-18: progress is stored only over the version it was read at, and only while running; release frees the slot', async () => {
    await store.start(record('sub-c', 'r1'), NOW + 60_000);
    const first = (await store.get('sub-c', 'r1'))!;
    expect(await store.update({ ...first, sent: 5, version: 2 }, 1, NOW + 60_000)).toBe(true);
    expect(await store.update({ ...first, sent: 9, version: 2 }, 1, NOW + 60_000)).toBe(false);
    expect(await store.update({ ...first, state: 'cancelled', version: 3 }, 2, NOW)).toBe(true);
    expect(await store.update({ ...first, sent: 7, version: 4 }, 3, NOW)).toBe(false);
    expect(await store.update({ ...first, state: 'cancelled', sent: 7, version: 4 }, 3, NOW, 'cancelled')).toBe(true);
    expect(await store.get('sub-c', 'r1')).toMatchObject({ state: 'cancelled', sent: 7, version: 4 });
    await expect(store.start(record('sub-c', 'r2'), NOW + 60_000)).rejects.toBeInstanceOf(ReplayRunningError);
    await store.release('sub-c', 'r1');
    await store.start(record('sub-c', 'r2'), NOW + 60_000);
    expect((await store.list('sub-c')).map((r) => r.replayId).sort()).toEqual(['r1', 'r2']);
  });

  it('EDU-18: a slot whose lease ran out is taken over, and the replay that held it is marked failed', async () => {
    await store.start(record('sub-d', 'stuck'), NOW + 60_000);
    clock = NOW + 120_000;
    await store.start(record('sub-d', 'next'), clock + 60_000);
    expect(await store.get('sub-d', 'stuck')).toMatchObject({
      state: 'failed',
      reason: expect.stringContaining('stopped making progress'),
    });
    expect(await store.get('sub-d', 'next')).toMatchObject({ state: 'running' });
    clock = NOW;
  });
});
