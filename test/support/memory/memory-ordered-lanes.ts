/** The lanes of ordered delivery (core/ordering/ordered-lanes.ts) in memory, for unit tests and benches. */
import type { Appended, LaneAddress, LaneTake, OrderedLanes } from '../../../functions/core/ordering/ordered-lanes.js';

interface Lane {
  next: number;
  last: number;
  lastPosition?: number | undefined;
  holder?: string | undefined;
  holdUntil?: number | undefined;
  parked: boolean;
  readonly bodies: Map<number, string>;
  readonly byDelivery: Map<string, number>;
}

export class InMemoryOrderedLanes implements OrderedLanes {
  readonly lanes = new Map<string, Lane>();

  private lane({ subscriptionId, key }: LaneAddress): Lane {
    const id = JSON.stringify([subscriptionId, key]);
    let lane = this.lanes.get(id);
    if (!lane)
      this.lanes.set(id, (lane = { next: 1, last: 0, parked: false, bodies: new Map(), byDelivery: new Map() }));
    return lane;
  }

  async append(
    address: LaneAddress,
    deliveryId: string,
    build: (sequence: number) => string,
    position?: number,
  ): Promise<Appended> {
    const lane = this.lane(address);
    const known = lane.byDelivery.get(deliveryId);
    if (known !== undefined) {
      const body = lane.bodies.get(known) ?? build(known);
      return { sequence: known, body, head: lane.next === known && !lane.parked };
    }
    const late = position !== undefined && lane.lastPosition !== undefined && position <= lane.lastPosition;
    if (position !== undefined && !late) lane.lastPosition = position;
    const sequence = ++lane.last;
    lane.byDelivery.set(deliveryId, sequence);
    const body = build(sequence);
    lane.bodies.set(sequence, body);
    return { sequence, body, head: lane.next === sequence && !lane.parked, ...(late ? { late } : {}) };
  }

  async take(
    address: LaneAddress,
    sequence: number,
    hold: { holder: string; until: number; now: number; redrive: boolean },
  ): Promise<LaneTake> {
    const lane = this.lane(address);
    if (sequence < lane.next) return 'settled';
    if (sequence > lane.next) return 'early';
    if (lane.parked && !hold.redrive) return 'parked';
    if (lane.holder !== undefined && lane.holder !== hold.holder && (lane.holdUntil ?? 0) >= hold.now) return 'held';
    lane.holder = hold.holder;
    lane.holdUntil = hold.until;
    lane.parked = false;
    return 'mine';
  }

  async advance(address: LaneAddress, sequence: number): Promise<string | undefined> {
    const lane = this.lane(address);
    if (lane.next === sequence) {
      lane.next = sequence + 1;
      lane.holder = undefined;
      lane.holdUntil = undefined;
    }
    lane.bodies.delete(sequence);
    return lane.parked ? undefined : lane.bodies.get(sequence + 1);
  }

  async park(address: LaneAddress, sequence: number): Promise<void> {
    const lane = this.lane(address);
    if (lane.next !== sequence) return;
    lane.parked = true;
    lane.holder = undefined;
  }
}
