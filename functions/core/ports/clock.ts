/**
 * The time, in milliseconds since the Unix epoch (as `Date.now`). Every piece of core where time
 * decides something takes one, so tests can set the time instead of waiting for it.
 */
export type Clock = () => number;

/** Reads `Date.now` on every call, so fake timers installed later are seen too. */
export const systemClock: Clock = () => Date.now();
