/**
 * The lanes of ordered delivery in DynamoDB on dynalite (functions/aws/dynamodb-ordered-lanes.ts,
 * issue 33): appends side by side never share a sequence, a retried append finds its place, only
 * the head is handed out, one hold per head, and settling, parking and a redrive move the lane on.
 */
import { DynamoDBClient, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { observeAttempts } from '../../functions/aws/aws-request-observer.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLaneErasure } from '../../functions/aws/dynamodb-lane-erasure.js';
import { DynamoDbOrderedLanes } from '../../functions/aws/dynamodb-ordered-lanes.js';
import type { WaitingLaneEvent } from '../../functions/core/erasure/ports.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import type { LaneAddress, StagedEvent } from '../../functions/core/ordering/ordered-lanes.js';
import { countRequests } from '../support/request-counter.js';
import { settleLane } from '../../functions/core/ordering/lane-settling.js';

const NOW = Date.UTC(2026, 10, 29, 12);
let emulators: Emulators;
let dynamodb: DynamoDBClient;
let lanes: DynamoDbOrderedLanes;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  lanes = new DynamoDbOrderedLanes(
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

describe('ordered lanes on DynamoDB (issue 33)', () => {
  it('ORD-2: twenty appends at once get 1..20 without a gap or a repeat; a retried append gets its first place; only 1 is the head', async () => {
    const lane = { subscriptionId: 'sub-a', key: 'leerling-1' };
    const appended = await Promise.all(
      Array.from({ length: 20 }, (_, i) => lanes.append(lane, `d${i}`, (sequence) => `body ${sequence}`)),
    );
    expect(appended.map((a) => a.sequence).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (const a of appended) expect(a.body).toBe(`body ${a.sequence}`);
    expect(appended.filter((a) => a.head).map((a) => a.sequence)).toEqual([1]);
    const again = await lanes.append(lane, 'd7', (sequence) => `body ${sequence}`);
    expect(again.sequence).toBe(appended[7]!.sequence);
  });

  it('ORD-3: numbers follow acceptance positions: a lower position after a higher one is numbered at the end, late; a retry of the last numbered gets its number back', async () => {
    const lane = { subscriptionId: 'sub-p', key: 'leerling-7' };
    const first = await lanes.append(lane, 'p1', (sequence) => `body ${sequence}`, 1_000);
    const third = await lanes.append(lane, 'p3', (sequence) => `body ${sequence}`, 3_000);
    // A router retry of p3 finds its number again, not late.
    const retried = await lanes.append(lane, 'p3', (sequence) => `body ${sequence}`, 3_000);
    const second = await lanes.append(lane, 'p2', (sequence) => `body ${sequence}`, 2_000);
    expect([first, third, retried, second].map((a) => [a.sequence, a.late === true])).toEqual([
      [1, false],
      [2, false],
      [2, false],
      [3, true],
    ]);
  });

  it('ORD-3: one hold per head; settling it hands out the next; a settled or early sequence is told apart', async () => {
    const lane = { subscriptionId: 'sub-b', key: 'zaak-9' };
    for (let i = 1; i <= 3; i++) await lanes.append(lane, `e${i}`, (sequence) => `body ${sequence}`);
    expect(await lanes.take(lane, 1, hold('m1'))).toBe('mine');
    expect(await lanes.take(lane, 1, hold('copy'))).toBe('held');
    expect(await lanes.take(lane, 1, hold('m1'))).toBe('mine');
    expect(await lanes.take(lane, 2, hold('m2'))).toBe('early');
    expect(await lanes.advance(lane, 1)).toBe('body 2');
    expect(await lanes.take(lane, 1, hold('copy'))).toBe('settled');
    expect(await lanes.take(lane, 2, hold('m2'))).toBe('mine');
  });

  it('ORD-4: a parked lane hands out nothing until a redrive of its head, which unparks it', async () => {
    const lane = { subscriptionId: 'sub-c', key: 'dossier-3' };
    for (let i = 1; i <= 2; i++) await lanes.append(lane, `p${i}`, (sequence) => `body ${sequence}`);
    expect(await lanes.take(lane, 1, hold('m1'))).toBe('mine');
    await lanes.park(lane, 1);
    expect(await lanes.take(lane, 1, hold('m1'))).toBe('parked');
    expect((await lanes.append(lane, 'p3', (sequence) => `body ${sequence}`)).head).toBe(false);
    expect(await lanes.take(lane, 1, hold('redrive', true))).toBe('mine');
    expect(await lanes.advance(lane, 1)).toBe('body 2');
  });

  it('ORD-3: staged events come back by acceptance position up to a bound, however they were staged; settling them numbers each once, two settlers at once never both', async () => {
    const lane = { subscriptionId: 'sub-s', key: 'leerling-9' };
    const positions = [1_800_000_000_030_000, 1_800_000_000_010_000, 1_800_000_000_020_001, 1_800_000_000_020_000];
    await Promise.all(
      positions.map((position, i) =>
        lanes.stage([{ lane, event: { deliveryId: `s${i}`, position, body: `staged ${i}` } }]),
      ),
    );
    // Up to 20.000 ms: the two below it, lowest first; the one at 20.001 ms and above wait.
    expect((await lanes.staged(lane, 1_800_000_000_020_000, 10)).map((one) => one.deliveryId)).toEqual(['s1', 's3']);
    expect((await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 2)).map((one) => one.position)).toEqual([
      1_800_000_000_010_000, 1_800_000_000_020_000,
    ]);
    expect(await lanes.claimSettling(lane, { holder: 'm1', until: NOW + 60_000, now: NOW })).toBe(true);
    expect(await lanes.claimSettling(lane, { holder: 'm2', until: NOW + 60_000, now: NOW })).toBe(false);
    // A lease that ran out is taken over; the first holder's release then leaves the new one's alone.
    expect(await lanes.claimSettling(lane, { holder: 'm2', until: NOW + 120_000, now: NOW + 61_000 })).toBe(true);
    await lanes.releaseSettling(lane, 'm1');
    expect(await lanes.claimSettling(lane, { holder: 'm3', until: NOW + 60_000, now: NOW + 62_000 })).toBe(false);
    await lanes.releaseSettling(lane, 'm2');
    expect(await lanes.claimSettling(lane, { holder: 'm3', until: NOW + 60_000, now: NOW })).toBe(true);
    await lanes.unstage(lane, { deliveryId: 's1', position: 1_800_000_000_010_000 });
    expect((await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 10)).map((one) => one.deliveryId)).toEqual([
      's3',
      's2',
      's0',
    ]);
    expect(await lanes.head(lane)).toEqual({ next: 1, parked: false });
  });

  it('ORD-3: a router batch stages the events of all its lanes in one BatchWriteItem per 25, a delivery named twice once; each lane reads back only its own, by position', async () => {
    const laneOf = (k: number) => ({ subscriptionId: 'sub-batch', key: `leerling-${k}` });
    // 30 events over 3 lanes, and the first one again (SQS handed its message over twice).
    const entries = Array.from({ length: 30 }, (_, i) => ({
      lane: laneOf(i % 3),
      event: { deliveryId: `b${i}`, position: 1_800_000_000_000_000 + (30 - i) * 1_000, body: `staged ${i}` },
    }));
    const counter = countRequests(dynamodb);
    const keysPerRequest: string[][] = [];
    let observing = true;
    observeAttempts(dynamodb, ({ operation, input }) => {
      if (!observing || operation !== 'BatchWriteItem') return;
      const requests = Object.values(input['RequestItems'] as Record<string, WriteRequest[]>).flat();
      keysPerRequest.push(
        requests.map(({ PutRequest }) => `${PutRequest?.Item?.['pk']?.S} ${PutRequest?.Item?.['sk']?.S}`),
      );
    });
    await lanes.stage([...entries, entries[0]!]);
    observing = false;
    expect(counter.byOperation).toEqual({ BatchWriteItemCommand: 2 });
    // DynamoDB refuses a batch that names a key twice (dynalite does not): each key once, 30 in all.
    for (const keys of keysPerRequest) expect(new Set(keys).size).toBe(keys.length);
    expect(keysPerRequest.flat()).toHaveLength(30);
    for (const k of [0, 1, 2]) {
      const own = entries.filter((entry) => entry.lane.key === laneOf(k).key).map((entry) => entry.event);
      const read = await lanes.staged(laneOf(k), Number.MAX_SAFE_INTEGER, 100);
      expect(read).toEqual([...own].sort((a, b) => a.position - b.position));
    }
  });

  it('PRIV-2, ORD-3: the erasure finds every lane’s waiting events, staged and numbered, rewrites one in place and removes a staged one; nothing else is touched', async () => {
    const erasure = new DynamoDbLaneErasure(dynamodb, emulators.resourceEnvironment[resourceEnv.table('deliveries')]!);
    const lane = { subscriptionId: 'sub-erase', key: 'leerling-3' };
    await lanes.stage([{ lane, event: { deliveryId: 'x1', position: 1_800_000_000_001_000, body: 'staged body' } }]);
    await lanes.append(lane, 'x0', () => 'numbered body');
    const found: WaitingLaneEvent[] = [];
    let cursor: string | undefined;
    do {
      const page = await erasure.waiting(cursor);
      found.push(...page.items);
      cursor = page.cursor;
    } while (cursor !== undefined);
    const mine = found.filter((one) => one.body === 'staged body' || one.body === 'numbered body');
    expect(mine.map((one) => [one.state, one.body]).sort()).toEqual([
      ['numbered', 'numbered body'],
      ['staged', 'staged body'],
    ]);
    // Only lane events: no lane state, no place (`d#`), nothing of other items in the table.
    expect(found.every((one) => one.state === 'staged' || one.state === 'numbered')).toBe(true);
    await erasure.rewrite(
      mine.find((one) => one.state === 'numbered')!,
      'erased body',
    );
    await erasure.remove(mine.find((one) => one.state === 'staged')!);
    expect(await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
    const again = await lanes.append(lane, 'x0', () => 'never built');
    expect(again).toMatchObject({ sequence: 1, body: 'erased body' });
    // A rewrite of an event that has left the lane does not bring it back.
    await lanes.advance(lane, 1);
    await erasure.rewrite(
      mine.find((one) => one.state === 'numbered')!,
      'late rewrite',
    );
    const after: WaitingLaneEvent[] = [];
    cursor = undefined;
    do {
      const page = await erasure.waiting(cursor);
      after.push(...page.items);
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(after.filter((one) => one.body === 'late rewrite')).toEqual([]);
  });
  describe('a settle pass (appendStaged)', () => {
    const position = (n: number) => 1_800_000_000_000_000 + n * 1_000;
    const stageIds = async (lane: LaneAddress, ids: readonly string[], from = 1) => {
      const events = ids.map((deliveryId, i) => ({
        deliveryId,
        position: position(from + i),
        body: `staged ${deliveryId}`,
      }));
      await lanes.stage(events.map((event) => ({ lane, event })));
      return events;
    };
    const build = (staged: StagedEvent, sequence: number) => `${staged.deliveryId} at ${sequence}`;
    const claim = (lane: LaneAddress, holder: string, now = NOW) =>
      lanes.claimSettling(lane, { holder, until: now + 60_000, now });

    it('ORD-3: a settle message whose events an earlier pass appended costs one read: no lease taken, nothing numbered again', async () => {
      const lane = { subscriptionId: 'sub-pass', key: 'leerling-after' };
      await stageIds(lane, ['a1', 'a2', 'a3']);
      // Well past the staged events' window (their positions are 1.8e12 ms and a few).
      const options = { now: 1_800_000_010_000, settlingWindowMs: 1_000, build };
      const first = await settleLane(lanes, lane, { ...options, holder: 'message-1' });
      expect(first).toMatchObject({ kind: 'settled', appended: 3, heads: ['a1 at 1'] });
      const counter = countRequests(dynamodb);
      const later = await settleLane(lanes, lane, { ...options, holder: 'message-3' });
      expect(later).toEqual({ kind: 'settled', heads: [], late: [], appended: 0 });
      expect(counter.byOperation).toEqual({ QueryCommand: 1 });
      // With an event staged again, the next message takes the lease and appends it after the three.
      await stageIds(lane, ['a4'], 4);
      expect(await settleLane(lanes, lane, { ...options, holder: 'message-4' })).toMatchObject({
        appended: 1,
        heads: [],
      });
      expect(await lanes.stored(lane, 4)).toBe('a4 at 4');
    });

    it('ORD-2: thirty staged events numbered 1..30 in acceptance order, stored and unstaged in a few requests, not several per event', async () => {
      const lane = { subscriptionId: 'sub-pass', key: 'leerling-30' };
      const ids = Array.from({ length: 30 }, (_, i) => `s${i}`);
      await stageIds(lane, ids);
      expect(await claim(lane, 'settler-1')).toBe(true);
      const counter = countRequests(dynamodb);
      const staged = await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 100);
      const pass = await lanes.appendStaged(lane, staged, build, 'settler-1');
      const requests = counter.total();
      expect(pass.leaseLost).toBe(false);
      expect(pass.appended.map((one) => [one.deliveryId, one.sequence])).toEqual(ids.map((id, i) => [id, i + 1]));
      expect(await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 100)).toEqual([]);
      expect(await lanes.stored(lane, 30)).toBe('s29 at 30');
      // Read, staged query, two groups (25 + 5) of one update and three batch writes: 10, not 5 × 30.
      expect(requests).toBeLessThanOrEqual(10);
      // Staged again by a router retry, a settled event keeps its place; one accepted earlier but staged late goes at the end.
      await lanes.stage([{ lane, event: { deliveryId: 's3', position: position(4), body: 'again' } }]);
      await lanes.stage([{ lane, event: { deliveryId: 'late', position: position(2) + 1, body: 'late' } }]);
      const again = await lanes.appendStaged(
        lane,
        await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 100),
        build,
        'settler-1',
      );
      expect(again.appended.map((one) => [one.deliveryId, one.sequence, one.late ?? false])).toEqual([
        ['s3', 4, false],
        ['late', 31, true],
      ]);
      expect(await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 100)).toEqual([]);
    });

    it('ORD-3: a settler killed after numbering a group, before storing it: the settler taking over gives the same numbers, none twice, none skipped', async () => {
      const lane = { subscriptionId: 'sub-pass-crash', key: 'leerling-kill' };
      class KilledBeforeStoring extends DynamoDbOrderedLanes {
        protected override async storeNumbered(): Promise<void> {
          throw new Error('killed');
        }
      }
      const dying = new KilledBeforeStoring(
        dynamodb,
        emulators.resourceEnvironment[resourceEnv.table('deliveries')]!,
        () => NOW,
      );
      await stageIds(lane, ['k1', 'k2', 'k3']);
      expect(await claim(lane, 'settler-dies')).toBe(true);
      await expect(
        dying.appendStaged(lane, await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 100), build, 'settler-dies'),
      ).rejects.toThrow('killed');
      // Numbered, not stored: still staged. Two more staged meanwhile.
      await stageIds(lane, ['k4', 'k5'], 4);
      expect(await claim(lane, 'settler-next', NOW + 61_000)).toBe(true);
      const pass = await lanes.appendStaged(
        lane,
        await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 100),
        build,
        'settler-next',
      );
      expect(pass.appended.map((one) => [one.deliveryId, one.sequence])).toEqual([
        ['k1', 1],
        ['k2', 2],
        ['k3', 3],
        ['k4', 4],
        ['k5', 5],
      ]);
      expect(await Promise.all([1, 2, 3, 4, 5].map((n) => lanes.stored(lane, n)))).toEqual([
        'k1 at 1',
        'k2 at 2',
        'k3 at 3',
        'k4 at 4',
        'k5 at 5',
      ]);
    });

    it('ORD-3: a settler whose lease ran out and was taken numbers nothing more (the fence); the new holder numbers it all once', async () => {
      const lane = { subscriptionId: 'sub-pass-fence', key: 'leerling-slow' };
      await stageIds(lane, ['f1', 'f2']);
      expect(await claim(lane, 'settler-slow')).toBe(true);
      const staged = await lanes.staged(lane, Number.MAX_SAFE_INTEGER, 100);
      expect(await claim(lane, 'settler-new', NOW + 61_000)).toBe(true);
      expect(await lanes.appendStaged(lane, staged, build, 'settler-slow')).toEqual({ appended: [], leaseLost: true });
      const pass = await lanes.appendStaged(lane, staged, build, 'settler-new');
      expect(pass.appended.map((one) => [one.deliveryId, one.sequence])).toEqual([
        ['f1', 1],
        ['f2', 2],
      ]);
      expect(await lanes.head(lane)).toEqual({ next: 1, parked: false });
    });
  });
});
