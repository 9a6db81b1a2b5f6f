/**
 * The operator's log, as core sees it. Fields hold identifiers and the precise failure: never
 * event `data` (CE-16), never a token, secret or credential. The handlers pass their structured
 * JSON logger, which satisfies this port as it is.
 */
export type LogFields = Record<string, unknown>;

export interface Log {
  info(message: string, fields: LogFields): void;
  warn(message: string, fields: LogFields): void;
  error(message: string, fields: LogFields): void;
}

/** `log` with `fields` on every line (a correlation id, a subscription); a line's own fields come first. */
export function withFields(log: Log, fields: LogFields): Log {
  return {
    info: (message, own) => log.info(message, { ...own, ...fields }),
    warn: (message, own) => log.warn(message, { ...own, ...fields }),
    error: (message, own) => log.error(message, { ...own, ...fields }),
  };
}

/** For callers and tests that keep no log. */
export const silentLog: Log = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
