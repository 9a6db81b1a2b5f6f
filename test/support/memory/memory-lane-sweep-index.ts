/** The lane sweeper's index (core/delivery-message/lane-sweep.ts) over in-memory lanes, for unit tests. */
import type {
  LaneSweepIndex,
  SweepEntry,
  SweptLaneState,
} from '../../../functions/core/delivery-message/lane-sweep.js';
import type { LaneAddress } from '../../../functions/core/ordering/ordered-lanes.js';
import type { InMemoryOrderedLanes } from './memory-ordered-lanes.js';

type Lane = InMemoryOrderedLanes['lanes'] extends Map<string, infer L> ? L : never;

export class InMemoryLaneSweepIndex implements LaneSweepIndex {
  constructor(private readonly lanes: InMemoryOrderedLanes) {}

  async staged(before: number, limit: number): Promise<SweepEntry[]> {
    return this.all()
      .flatMap(({ lane, state }) =>
        [...state.staging.values()]
          .filter((event) => !state.unmarked.has(event.deliveryId))
          .map((event) => ({ lane, since: Math.floor(event.position / 1000) })),
      )
      .filter((entry) => entry.since <= before)
      .sort((a, b) => a.since - b.since)
      .slice(0, limit);
  }

  async marked(before: number, limit: number): Promise<SweepEntry[]> {
    return this.all()
      .flatMap(({ lane, state }) => (state.mark === undefined ? [] : [{ lane, since: state.mark }]))
      .filter((entry) => entry.since <= before)
      .sort((a, b) => a.since - b.since)
      .slice(0, limit);
  }

  async state(lane: LaneAddress): Promise<SweptLaneState | undefined> {
    const state = this.find(lane);
    if (state === undefined) return undefined;
    return {
      next: state.next,
      last: state.last,
      parked: state.parked,
      holdUntil: state.holder === undefined ? undefined : state.holdUntil,
      settleUntil: state.settler === undefined ? undefined : state.settleUntil,
    };
  }

  async stored(lane: LaneAddress, sequence: number): Promise<string | undefined> {
    return this.find(lane)?.bodies.get(sequence);
  }

  async unmarkStaged(lane: LaneAddress, before: number): Promise<void> {
    const state = this.find(lane);
    for (const event of state?.staging.values() ?? [])
      if (Math.floor(event.position / 1000) <= before) state!.unmarked.add(event.deliveryId);
  }

  async remark(lane: LaneAddress, seen: number | undefined, at: number | undefined): Promise<void> {
    const state = this.find(lane);
    if (state === undefined || (seen !== undefined && state.mark !== seen)) return;
    state.mark = at;
  }

  private find({ subscriptionId, key }: LaneAddress): Lane | undefined {
    return this.lanes.lanes.get(JSON.stringify([subscriptionId, key]));
  }

  private all(): { lane: LaneAddress; state: Lane }[] {
    return [...this.lanes.lanes.entries()].map(([id, state]) => {
      const [subscriptionId, key] = JSON.parse(id) as [string, string];
      return { lane: { subscriptionId, key }, state };
    });
  }
}
