/**
 * The two ways a test waits for something asynchronous (a queue consumer, a host in another
 * process, a log line), so that no test file grows its own loop:
 *
 * - `eventually`: until something has happened. The probe returns what the test wants once it is
 *   there, and `undefined` or `false` until then; the first check is immediate.
 * - `staysQuiet`: that something does NOT happen for a while, such as a second delivery. The probe
 *   returns `undefined` or `false` while all is quiet and what it saw otherwise; it is checked over
 *   the whole period and once more at its end, and fails the moment it sees something.
 *
 * A probe that throws (a failed `expect`, a child process that died) fails the wait at once.
 */

type Probe<T> = () => T | undefined | false | Promise<T | undefined | false>;

export interface WaitOptions {
  /** How long to wait before failing (default 10 s). */
  readonly timeoutMs?: number;
  /** How long between two checks (default 100 ms). */
  readonly intervalMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` until it returns a value; fails with "timed out after … waiting for `what`".
 * `what` may be a function, read when the wait fails, to tell what was there instead.
 */
export async function eventually<T>(
  what: string | (() => string),
  probe: Probe<T>,
  options: WaitOptions = {},
): Promise<T> {
  const { timeoutMs = 10_000, intervalMs = 100 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(intervalMs);
  }
}

/**
 * Checks for `forMs` that `probe` sees nothing; `what` names what must not happen ("a second
 * delivery"). How long is enough is the caller's judgement: long enough for the thing to have
 * happened had the code been wrong, as short as that allows.
 */
export async function staysQuiet(
  what: string,
  probe: Probe<unknown>,
  forMs: number,
  options: Pick<WaitOptions, 'intervalMs'> = {},
): Promise<void> {
  const { intervalMs = 50 } = options;
  const end = Date.now() + forMs;
  for (;;) {
    const seen = await probe();
    if (seen !== undefined && seen !== false)
      throw new Error(`expected no ${what} within ${forMs} ms, but saw ${describe(seen)}`);
    const left = end - Date.now();
    if (left < 0) return;
    await sleep(Math.min(intervalMs, left));
  }
}

function describe(seen: unknown): string {
  if (seen === true) return 'it';
  const text = typeof seen === 'string' ? seen : JSON.stringify(seen);
  return text === undefined ? String(seen) : text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
