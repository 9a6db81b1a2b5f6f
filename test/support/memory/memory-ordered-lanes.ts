/** The lanes of ordered delivery (core/ordering/ordered-lanes.ts) in memory, for unit tests and benches. */
import type {
  Appended,
  LaneAddress,
  LaneHead,
  LaneTake,
  OrderedLanes,
  SettledAppend,
  StagedEvent,
} from '../../../functions/core/ordering/ordered-lanes.js';
import type { LaneRuns, RunBehind } from '../../../functions/core/ordering/lane-runs.js';

interface Lane {
  next: number;
  last: number;
  lastPosition?: number | undefined;
  holder?: string | undefined;
  holdUntil?: number | undefined;
  parked: boolean;
  settler?: string | undefined;
  settleUntil?: number | undefined;
  /** The sweeper's mark (functions/aws/dynamodb-lane-sweep-index.ts): when its head was last released. */
  mark?: number | undefined;
  /** Staged events the sweeper took out of its index. */
  readonly unmarked: Set<string>;
  readonly staging: Map<string, StagedEvent>;
  readonly bodies: Map<number, string>;
  readonly byDelivery: Map<string, number>;
  /** The head whose run is fixed, and its end (lane-runs.ts). */
  runOf?: number | undefined;
  runThrough?: number | undefined;
  /** A run parked as a whole reaches to here: each of its events waits for its redrive in turn. */
  parkedThrough?: number | undefined;
}

export class InMemoryOrderedLanes implements OrderedLanes, LaneRuns {
  readonly lanes = new Map<string, Lane>();

  /** `now`: the clock of the sweeper's marks (epoch ms). */
  constructor(private readonly now: () => number = Date.now) {}

  private lane({ subscriptionId, key }: LaneAddress): Lane {
    const id = JSON.stringify([subscriptionId, key]);
    let lane = this.lanes.get(id);
    if (!lane)
      this.lanes.set(
        id,
        (lane = {
          next: 1,
          last: 0,
          parked: false,
          unmarked: new Set(),
          staging: new Map(),
          bodies: new Map(),
          byDelivery: new Map(),
        }),
      );
    return lane;
  }

  async stage(entries: readonly { lane: LaneAddress; event: StagedEvent }[]): Promise<void> {
    for (const { lane, event } of entries) this.lane(lane).staging.set(event.deliveryId, event);
  }

  async staged(address: LaneAddress, upTo: number, limit: number): Promise<StagedEvent[]> {
    return [...this.lane(address).staging.values()]
      .filter((event) => event.position <= upTo)
      .sort((a, b) => a.position - b.position)
      .slice(0, limit);
  }

  async unstage(address: LaneAddress, event: Pick<StagedEvent, 'deliveryId'>): Promise<void> {
    this.lane(address).staging.delete(event.deliveryId);
  }

  async claimSettling(address: LaneAddress, lease: { holder: string; until: number; now: number }): Promise<boolean> {
    const lane = this.lane(address);
    if (lane.settler !== undefined && lane.settler !== lease.holder && (lane.settleUntil ?? 0) >= lease.now)
      return false;
    lane.settler = lease.holder;
    lane.settleUntil = lease.until;
    return true;
  }

  async releaseSettling(address: LaneAddress, holder: string): Promise<LaneHead | undefined> {
    const lane = this.lane(address);
    if (lane.settler !== holder) return undefined;
    lane.settler = lane.settleUntil = undefined;
    return { next: lane.next, parked: lane.parked };
  }

  async head(address: LaneAddress): Promise<{ next: number; parked: boolean }> {
    const lane = this.lane(address);
    return { next: lane.next, parked: lane.parked };
  }

  async append(
    address: LaneAddress,
    deliveryId: string,
    build: (sequence: number) => string,
    position?: number,
    readHead = true,
  ): Promise<Appended> {
    const lane = this.lane(address);
    const headOf = (sequence: number) => readHead && lane.next === sequence && !lane.parked;
    const known = lane.byDelivery.get(deliveryId);
    if (known !== undefined) {
      const body = lane.bodies.get(known) ?? build(known);
      return { sequence: known, body, head: headOf(known) };
    }
    const late = position !== undefined && lane.lastPosition !== undefined && position <= lane.lastPosition;
    if (position !== undefined && !late) lane.lastPosition = position;
    const sequence = ++lane.last;
    lane.mark = this.now();
    lane.byDelivery.set(deliveryId, sequence);
    const body = build(sequence);
    lane.bodies.set(sequence, body);
    return { sequence, body, head: headOf(sequence), ...(late ? { late } : {}) };
  }

  async appendStaged(
    address: LaneAddress,
    events: readonly StagedEvent[],
    build: (staged: StagedEvent, sequence: number) => string,
    settler: string,
  ): Promise<{ appended: SettledAppend[]; leaseLost: boolean }> {
    const lane = this.lane(address);
    const appended: SettledAppend[] = [];
    for (const event of events) {
      // The fence: a settler whose lease another took numbers nothing more.
      if (lane.settler !== settler) return { appended, leaseLost: true };
      const one = await this.append(
        address,
        event.deliveryId,
        (sequence) => build(event, sequence),
        event.position,
        false,
      );
      lane.staging.delete(event.deliveryId);
      appended.push({
        deliveryId: event.deliveryId,
        sequence: one.sequence,
        body: one.body,
        ...(one.late ? { late: true } : {}),
      });
    }
    return { appended, leaseLost: false };
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
      lane.mark = this.now();
      lane.holder = undefined;
      lane.holdUntil = undefined;
    }
    lane.bodies.delete(sequence);
    return lane.parked ? undefined : lane.bodies.get(sequence + 1);
  }

  async stored(address: LaneAddress, sequence: number): Promise<string | undefined> {
    return this.lane(address).bodies.get(sequence);
  }

  async park(address: LaneAddress, sequence: number): Promise<void> {
    const lane = this.lane(address);
    if (lane.next !== sequence) return;
    lane.parked = true;
    lane.holder = undefined;
  }

  async behind(address: LaneAddress, head: number, limit: number): Promise<RunBehind> {
    const lane = this.lane(address);
    const through = lane.runOf === head ? lane.runThrough : undefined;
    const events = [];
    for (let sequence = head + 1; sequence <= (through ?? head + limit); sequence++) {
      const body = lane.bodies.get(sequence);
      if (body === undefined) break;
      events.push({ sequence, body });
    }
    return { ...(through === undefined ? {} : { through }), events };
  }

  async fixRun(address: LaneAddress, head: number, through: number, holder: string): Promise<number | undefined> {
    const lane = this.lane(address);
    if (lane.runOf === head) return lane.runThrough;
    if (lane.next !== head || lane.holder !== holder) return undefined;
    lane.runOf = head;
    lane.runThrough = through;
    return through;
  }

  async advanceThrough(address: LaneAddress, first: number, last: number): Promise<string | undefined> {
    const lane = this.lane(address);
    if (lane.next === first) {
      lane.next = last + 1;
      lane.holder = lane.holdUntil = lane.runOf = lane.runThrough = undefined;
      if ((lane.parkedThrough ?? 0) > last) lane.parked = true;
      else lane.parkedThrough = undefined;
    }
    for (let sequence = first; sequence <= last; sequence++) lane.bodies.delete(sequence);
    return lane.parked || lane.next !== last + 1 ? undefined : lane.bodies.get(last + 1);
  }

  async parkThrough(address: LaneAddress, first: number, last: number): Promise<void> {
    const lane = this.lane(address);
    if (lane.next !== first) return;
    lane.parked = true;
    lane.holder = lane.runOf = lane.runThrough = undefined;
    if (last > first) lane.parkedThrough = last;
  }
}
