/**
 * Structured JSON log lines. Callers pass context attributes and identifiers; never event `data`
 * (CE-16), never tokens or credentials — `redact` below is the last line of defence, not the first.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

const SECRET_FIELD = /authorization|token|secret|password|credential|data_base64|^data$/i;

function threshold(): number {
  const level = (process.env['KOERIER_LOG_LEVEL'] ?? 'info') as Level;
  return order[level] ?? order.info;
}

/** Read on the first line, not at import, so a host can set the level before handlers log. */
let minimum: number | undefined;
let sink: (line: string) => void = (line) => process.stdout.write(`${line}\n`);

function write(level: Level, message: string, fields: Record<string, unknown>): void {
  minimum ??= threshold();
  if (order[level] < minimum) return;
  sink(JSON.stringify({ level, time: new Date().toISOString(), message, ...redact(fields) }));
}

function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (SECRET_FIELD.test(key)) out[key] = '[redacted]';
    else if (value && typeof value === 'object' && !Array.isArray(value)) out[key] = redact(value as Record<string, unknown>);
    else out[key] = value;
  }
  return out;
}

export const logger = {
  debug: (message: string, fields: Record<string, unknown> = {}) => write('debug', message, fields),
  info: (message: string, fields: Record<string, unknown> = {}) => write('info', message, fields),
  warn: (message: string, fields: Record<string, unknown> = {}) => write('warn', message, fields),
  error: (message: string, fields: Record<string, unknown> = {}) => write('error', message, fields),
  /** Tests capture every line, from `level` up, to assert what is (not) logged. */
  captureTo(next: (line: string) => void, level: Level = 'debug'): () => void {
    const previous = sink;
    sink = next;
    minimum = order[level];
    return () => {
      sink = previous;
      minimum = undefined;
    };
  },
};
