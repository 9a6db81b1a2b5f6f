/**
 * The delivery function reads its targets' shared state (WH-6, EDU-10, EDU-12) once per batch: at
 * a busy target that is one DynamoDB read for every batch, and almost every time it says what it
 * said before — no failures, no throttle, no rate slot. This keeps such *quiet* states for a short
 * while per container (issue 15, item 2).
 *
 * Only a quiet state is kept: one with a failure, a probe, a throttle or a `nextSendAt` (a rate
 * slot or a 429 pause) is read every batch, as before, so the breaker's cool-down, the probe lease
 * and the rate's conditional reservations always start from the stored state. Every write this
 * container makes for a target (a failure, a 429, a probe, a reserved slot, a success) forgets
 * what it kept for it. The price: a target another container found failing or throttled is seen
 * here up to `ttlMs` later. Until then this container may send it one more batch; if that fails,
 * the failures it records return the shared state, and the next batch reads it.
 */
import { systemClock, type Clock } from '../ports/clock.js';
import type { DispatchTargets } from './dispatch-ports.js';
import type { TargetState } from './target-health.js';

const MAX_ENTRIES = 10_000;

/** Nothing in it that a batch could decide on differently than on a healthy target. */
export function isQuiet(state: TargetState): boolean {
  return (
    state.consecutiveFailures === 0 &&
    state.nextSendAt === undefined &&
    state.lastFailureAt === undefined &&
    state.failingSince === undefined &&
    state.probeUntil === undefined &&
    (state.failedProbes ?? 0) === 0 &&
    state.throttle === undefined
  );
}

export function cachedTargetStates(store: DispatchTargets, ttlMs: number, clock: Clock = systemClock): DispatchTargets {
  /** `state` undefined: the store holds nothing for the target (healthy), as its `getTargets` leaves it out. */
  const quiet = new Map<string, { readonly at: number; readonly state: TargetState | undefined }>();
  const fresh = (id: string) => {
    const entry = quiet.get(id);
    return entry && clock() - entry.at < ttlMs ? entry : undefined;
  };
  /**
   * Writes under way or done since a read began: a read that began before a write may have seen
   * the state before it, so it keeps nothing (whatever target the write was for).
   */
  let writes = 0;
  const keep = (id: string, state: TargetState | undefined, at: number, writesBefore: number) => {
    if ((state && !isQuiet(state)) || writes !== writesBefore) return void quiet.delete(id);
    if (quiet.size >= MAX_ENTRIES) quiet.clear();
    quiet.set(id, { at, state });
  };
  const writing = async <T>(id: string, write: () => Promise<T>): Promise<T> => {
    writes++;
    quiet.delete(id);
    try {
      return await write();
    } finally {
      writes++;
      quiet.delete(id);
    }
  };
  return {
    async getTarget(id) {
      const kept = fresh(id);
      if (kept?.state) return kept.state;
      const [at, writesBefore] = [clock(), writes];
      const state = await store.getTarget(id);
      keep(id, state, at, writesBefore);
      return state;
    },
    async getTargets(ids) {
      const states = new Map<string, TargetState>();
      const missing: string[] = [];
      for (const id of ids) {
        const kept = fresh(id);
        if (!kept) missing.push(id);
        else if (kept.state) states.set(id, kept.state);
      }
      if (missing.length === 0) return states;
      const [at, writesBefore] = [clock(), writes];
      const read = await store.getTargets(missing);
      for (const id of missing) {
        const state = read.get(id);
        if (state) states.set(id, state);
        keep(id, state, at, writesBefore);
      }
      return states;
    },
    reserveSendSlots: (id, expected, next) => writing(id, () => store.reserveSendSlots(id, expected, next)),
    takeProbe: (id, now, until) => writing(id, () => store.takeProbe(id, now, until)),
    recordTargetSuccess: (id) => writing(id, () => store.recordTargetSuccess(id)),
    recordTargetFailures: (id, count, now, probe) => writing(id, () => store.recordTargetFailures(id, count, now, probe)),
    recordThrottle: (id, pauseUntil, throttle) => writing(id, () => store.recordThrottle(id, pauseUntil, throttle)),
  };
}
