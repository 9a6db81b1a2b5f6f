/**
 * The runs of ordered batch delivery on DynamoDB (dynalite): functions/aws/dynamodb-lane-runs.ts,
 * issue 33 "Push" (ORD-6). The events behind a head stop at the first number not stored, a run's end
 * is fixed once per head, and one conditional write moves or parks the lane over the whole run.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbOrderedLanesWithRuns } from '../../functions/aws/dynamodb-lane-runs.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { countRequests } from '../support/request-counter.js';

const NOW = Date.UTC(2026, 10, 29, 20);
let emulators: Emulators;
let dynamodb: DynamoDBClient;
let lanes: DynamoDbOrderedLanesWithRuns;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  lanes = new DynamoDbOrderedLanesWithRuns(
    dynamodb,
    emulators.resourceEnvironment[resourceEnv.table('deliveries')]!,
    () => NOW,
  );
});

afterAll(async () => {
  dynamodb?.destroy();
  await emulators?.stop();
});

const hold = (holder: string, redrive = false) => ({ holder, until: NOW + 60_000, now: NOW, redrive });
const bodies = (events: readonly { sequence: number; body: string }[]) => events.map((one) => one.body);

async function laneOf(key: string, events: number) {
  const lane = { subscriptionId: 'sub-runs', key };
  for (let i = 1; i <= events; i++) await lanes.append(lane, `${key}-d${i}`, (sequence) => `body ${sequence}`);
  return lane;
}

describe('ordered lane runs on DynamoDB (issue 33, batch delivery)', () => {
  it('ORD-6: the events behind the head, at most the limit; the run fixed once per head, and again for any copy', async () => {
    const lane = await laneOf('runs-1', 6);
    expect(await lanes.take(lane, 1, hold('m1'))).toBe('mine');
    expect(bodies((await lanes.behind(lane, 1, 3)).events)).toEqual(['body 2', 'body 3', 'body 4']);
    // Only the holder of the head fixes its run; once fixed, another end is not taken.
    expect(await lanes.fixRun(lane, 1, 4, 'someone-else')).toBeUndefined();
    expect(await lanes.fixRun(lane, 1, 4, 'm1')).toBe(4);
    expect(await lanes.fixRun(lane, 1, 6, 'm1')).toBe(4);
    expect(await lanes.behind(lane, 1, 9)).toEqual({
      through: 4,
      events: [2, 3, 4].map((sequence) => ({ sequence, body: `body ${sequence}` })),
    });
    // Settled as one: the lane moves past 4 and hands back 5; the run's items are gone.
    expect(await lanes.advanceThrough(lane, 1, 4)).toBe('body 5');
    expect(await lanes.head(lane)).toEqual({ next: 5, parked: false });
    expect(await lanes.take(lane, 3, hold('copy'))).toBe('settled');
    expect((await lanes.behind(lane, 0, 4)).events).toEqual([]);
    // A second advance of the same run (a copy) moves nothing; like `advance`, it may hand back the
    // next head again, whose hold lets one copy through.
    expect(await lanes.advanceThrough(lane, 1, 4)).toBe('body 5');
    expect(await lanes.head(lane)).toEqual({ next: 5, parked: false });
  });

  it('ORD-3: a delivered head moves its lane on in three requests (the move, the forgetting, the next event), without reading the state first', async () => {
    const lane = await laneOf('runs-cost', 2);
    expect(await lanes.take(lane, 1, hold('m1'))).toBe('mine');
    const counter = countRequests(dynamodb);
    expect(await lanes.advanceThrough(lane, 1, 1)).toBe('body 2');
    expect(counter.byOperation).toEqual({ UpdateItemCommand: 1, DeleteItemCommand: 1, GetItemCommand: 1 });
    expect(await lanes.head(lane)).toEqual({ next: 2, parked: false });
  });

  it('ORD-6: a run stops before a number not stored yet (numbered by a settler that has not stored it)', async () => {
    const lane = { subscriptionId: 'sub-runs', key: 'runs-gap' };
    await lanes.append(lane, 'g1', (sequence) => `body ${sequence}`);
    await lanes.append(lane, 'g2', (sequence) => `body ${sequence}`);
    // Number 3 taken (as the settler's numbering update does) but its event not stored; 4 stored.
    await lanes.append(lane, 'g3', () => 'body 3');
    await lanes.append(lane, 'g4', (sequence) => `body ${sequence}`);
    const { DeleteItemCommand } = await import('@aws-sdk/client-dynamodb');
    const table = emulators.resourceEnvironment[resourceEnv.table('deliveries')]!;
    const key = (lanes as unknown as { key: (l: typeof lane, sk: string) => Record<string, unknown> }).key(
      lane,
      'e#0000000003',
    );
    await dynamodb.send(new DeleteItemCommand({ TableName: table, Key: key as never }));
    expect(bodies((await lanes.behind(lane, 1, 9)).events)).toEqual(['body 2']);
  });

  it('ORD-6, ORD-4: a run parked as a whole waits for the redrive of each of its events in turn, then goes on', async () => {
    const lane = await laneOf('runs-park', 5);
    expect(await lanes.take(lane, 1, hold('m1'))).toBe('mine');
    await lanes.parkThrough(lane, 1, 3);
    expect(await lanes.take(lane, 1, hold('m1'))).toBe('parked');
    expect(await lanes.take(lane, 2, hold('redrive-2', true))).toBe('early');
    expect(await lanes.take(lane, 1, hold('redrive-1', true))).toBe('mine');
    // Delivered: the lane parks again at 2, whose dead letter's redrive comes in its turn.
    expect(await lanes.advanceThrough(lane, 1, 1)).toBeUndefined();
    expect(await lanes.head(lane)).toEqual({ next: 2, parked: true });
    expect(await lanes.take(lane, 2, hold('stored-copy'))).toBe('parked');
    expect(await lanes.take(lane, 2, hold('redrive-2', true))).toBe('mine');
    // A redrive failing again parks it alone: the run's end stays.
    await lanes.parkThrough(lane, 2, 2);
    expect(await lanes.take(lane, 2, hold('redrive-2b', true))).toBe('mine');
    expect(await lanes.advanceThrough(lane, 2, 2)).toBeUndefined();
    expect(await lanes.take(lane, 3, hold('redrive-3', true))).toBe('mine');
    // Past the parked run: the lane is free, and hands back 4.
    expect(await lanes.advanceThrough(lane, 3, 3)).toBe('body 4');
    expect(await lanes.head(lane)).toEqual({ next: 4, parked: false });
  });
});
