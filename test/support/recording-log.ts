import type { Log, LogFields } from '../../functions/core/ports/log.js';

export interface LoggedLine {
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: LogFields;
}

/** A `Log` that keeps every line, for tests that assert what reaches the operator log. */
export function recordingLog(): Log & { readonly lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  return {
    lines,
    info: (message, fields) => void lines.push({ level: 'info', message, fields }),
    warn: (message, fields) => void lines.push({ level: 'warn', message, fields }),
    error: (message, fields) => void lines.push({ level: 'error', message, fields }),
  };
}
