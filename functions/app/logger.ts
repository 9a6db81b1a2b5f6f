/**
 * Structured JSON log lines. Callers pass context attributes and identifiers; never event `data`
 * (CE-16), never tokens or credentials — `redact` below is the last line of defence, not the first.
 *
 * Each set of dependencies gets its own `Logger` at the level of its configuration
 * (`createLogger(config.logLevel)`); every logger writes to the process's standard output, the
 * one sink a process has, which tests can capture with `logger.captureTo`.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const SECRET_FIELD = /authorization|token|secret|password|credential|data_base64|^data$/i;

let sink: (line: string) => void = (line) => process.stdout.write(`${line}\n`);
/** While a test captures the lines: the level it asked for, in place of every logger's own. */
let capturedFrom: number | undefined;

function write(minimum: number, level: LogLevel, message: string, fields: LogFields): void {
  if (order[level] < (capturedFrom ?? minimum)) return;
  sink(JSON.stringify({ level, time: new Date().toISOString(), message, ...redact(fields) }));
}

function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    if (SECRET_FIELD.test(key)) out[key] = '[redacted]';
    else if (value && typeof value === 'object' && !Array.isArray(value)) out[key] = redact(value as LogFields);
    else out[key] = value;
  }
  return out;
}

/** A logger that writes the lines from `level` up. */
export function createLogger(level: LogLevel): Logger {
  const minimum = order[level] ?? order.info;
  return {
    debug: (message, fields = {}) => write(minimum, 'debug', message, fields),
    info: (message, fields = {}) => write(minimum, 'info', message, fields),
    warn: (message, fields = {}) => write(minimum, 'warn', message, fields),
    error: (message, fields = {}) => write(minimum, 'error', message, fields),
  };
}

/**
 * The logger of last resort, at `info`: for what fails before a configuration exists (an invalid
 * configuration is itself logged through it).
 */
export const logger = {
  ...createLogger('info'),
  /** Tests capture every line of every logger, from `level` up, to assert what is (not) logged. */
  captureTo(next: (line: string) => void, level: LogLevel = 'debug'): () => void {
    const previous = sink;
    sink = next;
    capturedFrom = order[level];
    return () => {
      sink = previous;
      capturedFrom = undefined;
    };
  },
};

export { describeError } from '../core/errors/describe-error.js';
