/**
 * Issue 33, "the order is the order in which Koerier accepted the events" (ORD-3): the ordered
 * outbox appends a lane's events by their acceptance position after the settling window, and the
 * lane numbers only ascending positions; a later arrival is numbered at the end and reported.
 */
import { describe, expect, it } from 'vitest';
import type { DeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import type { Outbox, OutboxEntry } from '../../../functions/core/delivery-message/outbox.js';
import { orderedOutbox } from '../../../functions/core/delivery-message/ordered-outbox.js';
import { nextAcceptancePosition } from '../../../functions/core/ordering/acceptance-position.js';
import { InMemoryOrderedLanes } from '../../support/memory/memory-ordered-lanes.js';

const T0 = 1_800_000_000_000;

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
  const slept: number[] = [];
  const late: number[] = [];
  let clock = T0;
  const inner: Outbox = { enqueueAll: async () => undefined, enqueue: async () => undefined };
  const outbox = orderedOutbox(inner, () => lanes, {
    settlingWindowMs: 1000,
    now: () => clock,
    sleep: async (ms) => {
      slept.push(ms);
      clock += ms;
    },
    onLate: (_message, sequence) => late.push(sequence),
  });
  /** The n of each stored event, by sequence. */
  const order = () =>
    [...lanes.lanes.values()][0]!.bodies.size === 0
      ? []
      : [...[...lanes.lanes.values()][0]!.bodies.entries()]
          .sort(([a], [b]) => a - b)
          .map(([, body]) => (JSON.parse(body) as { events: { n: number }[] }).events[0]!.n);
  return { outbox, slept, late, order, advance: (ms: number) => (clock += ms) };
}

describe('acceptance order of ordered lanes (issue 33)', () => {
  it('ORD-3: events of one key routed out of order in one batch are numbered in acceptance order, after the settling window', async () => {
    const h = harness();
    const at = (ms: number) => (T0 + ms) * 1000;
    await h.outbox.enqueueAll([marked(3, at(30)), marked(1, at(10)), marked(2, at(20))]);
    expect(h.order()).toEqual([1, 2, 3]);
    // Held until the newest one's acceptance (30 ms) plus the window.
    expect(h.slept).toEqual([1030]);
    expect(h.late).toEqual([]);
  });

  it('ORD-3: two batches side by side: the later event waits the window, the earlier one reaches the lane first', async () => {
    const h = harness();
    const at = (ms: number) => (T0 + ms) * 1000;
    // The batch with event 2 starts first, the one with event 1 a moment later; both are routed at once.
    await Promise.all([h.outbox.enqueueAll([marked(2, at(20))]), h.outbox.enqueueAll([marked(1, at(10))])]);
    expect(h.order()).toEqual([1, 2]);
    expect(h.late).toEqual([]);
  });

  it('ORD-3: an event reaching its lane after a later-accepted one was numbered is appended at the end and reported late', async () => {
    const h = harness();
    const at = (ms: number) => (T0 + ms) * 1000;
    await h.outbox.enqueueAll([marked(2, at(20))]);
    await h.outbox.enqueueAll([marked(1, at(10))]);
    expect(h.order()).toEqual([2, 1]);
    expect(h.late).toEqual([2]);
  });

  it('ORD-3: acceptance positions strictly increase within a process, even in the same millisecond', () => {
    const a = nextAcceptancePosition(T0 * 1000);
    const b = nextAcceptancePosition(T0 * 1000);
    const c = nextAcceptancePosition(T0 * 1000 - 5_000);
    expect(b).toBeGreaterThan(a);
    expect(c).toBeGreaterThan(b);
  });
});
