/**
 * The lane sweeper's index on dynalite (functions/aws/dynamodb-lane-sweep-index.ts, issue 33,
 * ORD-8): the sparse global index `laneSweep` as the laptop host creates it from the resource
 * description, written only by what the lanes write anyway, and the sweeper's queries over it.
 */
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLaneSweepIndex, LANE_SWEEP_INDEX } from '../../functions/aws/dynamodb-lane-sweep-index.js';
import { DynamoDbOrderedLanes } from '../../functions/aws/dynamodb-ordered-lanes.js';
import { resourceEnv } from '../../functions/config/resources.js';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
  type DeliveryMessage,
} from '../../functions/core/delivery-message/delivery-message.js';
import { sweepLanes } from '../../functions/core/delivery-message/lane-sweep.js';
import { sequencedBody } from '../../functions/core/delivery-message/ordered-outbox.js';
import { settleLane } from '../../functions/core/ordering/lane-settling.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';

const T0 = Date.UTC(2026, 10, 29, 12);
const clock = { now: T0 };
let emulators: Emulators;
let dynamodb: DynamoDBClient;
let table: string;
let lanes: DynamoDbOrderedLanes;
let index: DynamoDbLaneSweepIndex;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  table = emulators.resourceEnvironment[resourceEnv.table('deliveries')]!;
  lanes = new DynamoDbOrderedLanes(dynamodb, table, () => clock.now);
  index = new DynamoDbLaneSweepIndex(dynamodb, table);
});

afterAll(async () => {
  dynamodb?.destroy();
  await emulators?.stop();
});

function staged(subscriptionId: string, key: string, n: number, acceptedAt: number) {
  const message: DeliveryMessage = {
    version: 1,
    deliveryId: `${key}-${n}`,
    subscriptionId,
    events: [
      JSON.stringify({ specversion: '1.0', id: `${key}-${n}`, source: 'urn:s', type: 't', partitionkey: key, n }),
    ],
    createdAt: acceptedAt,
    ordering: { key, position: acceptedAt * 1000 + n },
  };
  return {
    deliveryId: message.deliveryId,
    position: message.ordering!.position!,
    body: encodeDeliveryMessage(message),
  };
}

describe('the lane sweeper on DynamoDB (issue 33, ORD-8)', () => {
  it('ORD-8: the index holds only lanes that wait on a message — staged events by acceptance time, lane states by their head’s release — and the sweeper queues what was lost', async () => {
    const stranded = { subscriptionId: 'sub-sweep', key: 'leerling-1' };
    const delivered = { subscriptionId: 'sub-sweep', key: 'leerling-2' };
    const lostHead = { subscriptionId: 'sub-sweep', key: 'zaak#3' };
    await lanes.stage([{ lane: stranded, event: staged('sub-sweep', 'leerling-1', 1, T0) }]);
    await lanes.stage([{ lane: stranded, event: staged('sub-sweep', 'leerling-1', 2, T0) }]);
    for (const lane of [delivered, lostHead]) {
      await lanes.stage([{ lane, event: staged('sub-sweep', lane.key, 1, T0) }]);
      await lanes.stage([{ lane, event: staged('sub-sweep', lane.key, 2, T0) }]);
    }
    clock.now = T0 + 2000;
    for (const lane of [delivered, lostHead])
      await settleLane(lanes, lane, { holder: 'm1', now: clock.now, settlingWindowMs: 1000, build: sequencedBody });
    await lanes.advance(delivered, 1);
    await lanes.advance(delivered, 2);
    // Only ordered lanes' items carry the index attributes: a sparse index.
    const all = await dynamodb.send(new ScanCommand({ TableName: table, IndexName: LANE_SWEEP_INDEX }));
    // Two staged events of the stranded lane, the two lane states.
    expect(all.Items).toHaveLength(4);
    expect(all.Items!.every((item) => item['pk']!.S!.startsWith('lane#'))).toBe(true);

    expect((await index.staged(T0, 100)).map((entry) => entry.lane)).toEqual([stranded, stranded]);
    expect(await index.staged(T0 - 1, 100)).toEqual([]);
    const marked = await index.marked(clock.now, 100);
    expect(marked.map((entry) => entry.lane.key).sort()).toEqual(['leerling-2', 'zaak#3']);
    expect(await index.state(lostHead)).toMatchObject({ next: 1, last: 2, parked: false, holdUntil: undefined });

    clock.now = T0 + 60 * 60_000;
    const queued: DeliveryMessage[] = [];
    const report = await sweepLanes(
      {
        index,
        lanes,
        subscription: async (id) => ({ id, delivery: 'push' }),
        outbox: { enqueue: async (_subscription, messages) => void queued.push(...messages) },
      },
      { now: clock.now, settlingWindowMs: 1000, stagedMarginMs: 60_000, headBoundMs: 30 * 60_000, limit: 100 },
    );
    expect(report).toMatchObject({ settles: 1, heads: 1 });
    const byKey = Object.fromEntries(queued.map((message) => [message.ordering!.key, message.ordering]));
    // The stranded lane's oldest staged event as its settle message; the lost head with its sequence.
    expect(byKey['leerling-1']).toEqual({ key: 'leerling-1', position: T0 * 1000 + 1 });
    expect(byKey['zaak#3']).toEqual({ key: 'zaak#3', sequence: 1 });
    expect(decodeDeliveryMessage(encodeDeliveryMessage(queued[0]!)).events).toHaveLength(1);
    // The stranded lane's staged events left the index for its mark; the caught-up lane left it.
    expect(await index.staged(clock.now, 100)).toEqual([]);
    const after = await index.marked(clock.now + 365 * 24 * 3600_000, 100);
    expect(after.map((entry) => entry.lane.key).sort()).toEqual(['leerling-1', 'zaak#3']);
    // A remark on a mark that moved meanwhile changes nothing.
    await index.remark(lostHead, 1, undefined);
    expect((await index.marked(clock.now + 365 * 24 * 3600_000, 100)).length).toBe(2);
  });
});
