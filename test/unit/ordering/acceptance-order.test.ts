/**
 * Issue 33, "the order is the order in which Koerier accepted the events" (ORD-3): the router
 * stages a lane's events by acceptance position and queues one settle message, delayed past the
 * settling window, without waiting itself; settling appends the staged events in position order,
 * only those whose window has passed, one settler at a time; a later arrival is numbered at the
 * end and reported.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import type { Outbox, OutboxEntry } from '../../../functions/core/delivery-message/outbox.js';
import {
  isSettleMessage,
  orderedOutbox,
  sequencedBody,
} from '../../../functions/core/delivery-message/ordered-outbox.js';
import { nextAcceptancePosition } from '../../../functions/core/ordering/acceptance-position.js';
import { settleLane } from '../../../functions/core/ordering/lane-settling.js';
import { InMemoryOrderedLanes } from '../../support/memory/memory-ordered-lanes.js';

const T0 = 1_800_000_000_000;
const WINDOW_MS = 1000;
const LANE = { subscriptionId: 'sub-1', key: 'k' };
/** The acceptance position of an event accepted `ms` after T0. */
const at = (ms: number) => (T0 + ms) * 1000;

function marked(n: number, position: number): OutboxEntry {
  const message = {
    deliveryId: `d${n}`,
    subscriptionId: 'sub-1',
    events: [JSON.stringify({ specversion: '1.0', id: `e${n}`, source: 's', type: 't', partitionkey: 'k', n })],
    version: 1,
    createdAt: T0,
    ordering: { key: 'k', position },
  } as unknown as DeliveryMessage;
  return { subscription: { id: 'sub-1', delivery: 'push' }, message };
}

function harness() {
  const lanes = new InMemoryOrderedLanes();
  const queued: OutboxEntry[] = [];
  let clock = T0;
  const inner: Outbox = {
    enqueueAll: async (entries) => void queued.push(...entries),
    enqueue: async () => undefined,
  };
  const outbox = orderedOutbox(inner, () => lanes, { settlingWindowMs: WINDOW_MS, now: () => clock });
  const settle = (holder = 'settler') =>
    settleLane(lanes, LANE, { holder, now: clock, settlingWindowMs: WINDOW_MS, build: sequencedBody });
  /** The n of each numbered event, by sequence. */
  const order = () =>
    [...([...lanes.lanes.values()][0]?.bodies.entries() ?? [])]
      .sort(([a], [b]) => a - b)
      .map(([, body]) => (JSON.parse(decodeDeliveryMessage(body).events[0]!) as { n: number }).n);
  const staged = () => [...([...lanes.lanes.values()][0]?.staging.values() ?? [])].map((one) => one.deliveryId);
  return { lanes, outbox, queued, settle, order, staged, advance: (ms: number) => (clock += ms) };
}

describe('acceptance order of ordered lanes (issue 33)', () => {
  it('ORD-3: the router stages a lane’s events and queues one settle message, delayed past the newest one’s window, without waiting itself', async () => {
    const h = harness();
    await h.outbox.enqueueAll([marked(3, at(30)), marked(1, at(10)), marked(2, at(20))]);
    expect(h.staged().sort()).toEqual(['d1', 'd2', 'd3']);
    expect(h.order()).toEqual([]);
    expect(h.queued).toHaveLength(1);
    expect(isSettleMessage(h.queued[0]!.message)).toBe(true);
    expect(h.queued[0]!.message.deliveryId).toBe('d3');
    // 30 ms + the 1,000 ms window after T0, in whole seconds.
    expect(h.queued[0]!.delaySeconds).toBe(2);
  });

  it('ORD-3: settling appends the staged events in acceptance order, whatever order the routers staged them in, and hands back the head', async () => {
    const h = harness();
    await h.outbox.enqueueAll([marked(3, at(30))]);
    await h.outbox.enqueueAll([marked(1, at(10))]);
    await h.outbox.enqueueAll([marked(2, at(20))]);
    h.advance(1_100);
    const outcome = await h.settle();
    expect(h.order()).toEqual([1, 2, 3]);
    expect(h.staged()).toEqual([]);
    expect(outcome).toMatchObject({ kind: 'settled', appended: 3, late: [] });
    expect(outcome.kind === 'settled' && outcome.heads.map((body) => decodeDeliveryMessage(body).ordering)).toEqual([
      { key: 'k', sequence: 1 },
    ]);
  });

  it('ORD-3: an event whose settling window has not passed stays staged, so an earlier one staged after it still comes first', async () => {
    const h = harness();
    await h.outbox.enqueueAll([marked(2, at(900))]);
    h.advance(1_500);
    await h.settle();
    // 1.5 s after T0 only positions up to 0.5 s have settled: event 2 (0.9 s) waits.
    expect(h.order()).toEqual([]);
    await h.outbox.enqueueAll([marked(1, at(400))]);
    h.advance(500);
    await h.settle();
    expect(h.order()).toEqual([1, 2]);
  });

  it('ORD-3: an event staged after a later-accepted one was numbered is appended at the end and reported late', async () => {
    const h = harness();
    await h.outbox.enqueueAll([marked(2, at(20))]);
    h.advance(1_100);
    await h.settle();
    await h.outbox.enqueueAll([marked(1, at(10))]);
    const outcome = await h.settle();
    expect(h.order()).toEqual([2, 1]);
    expect(outcome).toMatchObject({ kind: 'settled', late: [{ deliveryId: 'd1', sequence: 2 }], heads: [] });
  });

  it('ORD-3: one settler at a time per lane: a second finds the lease taken, and the lease ends', async () => {
    const h = harness();
    await h.outbox.enqueueAll([marked(1, at(10))]);
    h.advance(1_100);
    expect(await h.lanes.claimSettling(LANE, { holder: 'first', until: T0 + 60_000, now: T0 + 1_100 })).toBe(true);
    expect(await h.settle('second')).toEqual({ kind: 'busy' });
    expect(h.order()).toEqual([]);
    h.advance(60_000);
    expect(await h.settle('second')).toMatchObject({ kind: 'settled', appended: 1 });
  });

  it('ORD-3: acceptance positions strictly increase within a process, even in the same millisecond', () => {
    const a = nextAcceptancePosition(T0 * 1000);
    const b = nextAcceptancePosition(T0 * 1000);
    const c = nextAcceptancePosition(T0 * 1000 - 5_000);
    expect(b).toBeGreaterThan(a);
    expect(c).toBeGreaterThan(b);
  });
});
