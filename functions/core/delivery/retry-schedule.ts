/**
 * When a failed delivery is tried again (WH-2, EDU-18), and when Koerier stops trying.
 *
 * After failed attempt n the next one follows after initial·2^(n−1), capped at the longest
 * single delay, with ±20% jitter so that deliveries that failed together do not come back
 * together. Retries go on for the retry window (24 hours by default, per subscription
 * overridable), with one last attempt at the window's end, and never past the lifetime of the
 * delivery's Idempotency-Key (EDU-IDEM-12): after that the receiver may have forgotten the key.
 * The resulting default timetable is in docs/OPERATIONS.md.
 */

export interface RetrySchedule {
  readonly initialDelaySeconds: number;
  readonly maxDelaySeconds: number;
  /** How long after the delivery was created attempts go on. */
  readonly windowSeconds: number;
}

export const JITTER_RATIO = 0.2;

/**
 * The last moment any attempt may go under the delivery's key (EDU-IDEM-12): just before the
 * key expires, a minute (or a tenth of a short test lifetime) early, so that an attempt in
 * flight, or a receiver's clock a little ahead, still finds the key remembered.
 */
export function keyDeadline(createdAt: number, keyTtlSeconds: number): number {
  const keyTtl = keyTtlSeconds * 1000;
  return createdAt + keyTtl - Math.min(60_000, keyTtl / 10);
}

/** The last moment to attempt: the window's end or the key deadline, whichever is first. */
export function retryDeadline(
  createdAt: number,
  schedule: RetrySchedule,
  keyTtlSeconds: number,
  windowOverrideSeconds?: number,
): number {
  const window = (windowOverrideSeconds ?? schedule.windowSeconds) * 1000;
  return Math.min(createdAt + window, keyDeadline(createdAt, keyTtlSeconds));
}

/** The nominal delay after failed attempt `attempt` (1-based), before jitter. */
export function nominalDelayMs(attempt: number, schedule: RetrySchedule): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 40);
  return Math.min(schedule.initialDelaySeconds * 2 ** exponent, schedule.maxDelaySeconds) * 1000;
}

/**
 * When to attempt again after failed attempt `attempt`, or undefined when retries are over.
 * `notBefore` is a time the target asked for (Retry-After on a 429 or 503): honoured as a minimum, and a
 * request to wait past the deadline ends the retries rather than being cut short.
 */
export function nextAttemptAt(options: {
  readonly attempt: number;
  readonly now: number;
  readonly deadline: number;
  readonly schedule: RetrySchedule;
  readonly notBefore?: number;
  readonly random?: () => number;
}): number | undefined {
  const { now, deadline, notBefore } = options;
  const random = options.random ?? Math.random;
  if (notBefore !== undefined) {
    // "At least" the Retry-After: up to 10% more, so that many waiting deliveries spread out.
    const at = notBefore + Math.floor((notBefore - now) * 0.1 * random());
    return at <= deadline ? at : notBefore <= deadline ? deadline : undefined;
  }
  const nominal = nominalDelayMs(options.attempt, options.schedule);
  const at = now + Math.round(nominal * (1 - JITTER_RATIO + 2 * JITTER_RATIO * random()));
  if (at <= deadline) return at;
  // One last attempt at the end of the window, unless that is (all but) now.
  return deadline - now >= 1000 ? deadline : undefined;
}

/** Offsets (seconds after the first attempt) of every attempt without jitter: the documented timetable. */
export function nominalTimetable(schedule: RetrySchedule, keyTtlSeconds: number): number[] {
  const deadline = retryDeadline(0, schedule, keyTtlSeconds) / 1000;
  const offsets = [0];
  for (let attempt = 1; ; attempt++) {
    const previous = offsets[offsets.length - 1]!;
    const next = previous + nominalDelayMs(attempt, schedule) / 1000;
    if (next <= deadline) offsets.push(next);
    else {
      if (deadline - previous >= 1) offsets.push(deadline);
      return offsets;
    }
  }
}
