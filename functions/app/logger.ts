/**
 * Structured JSON log lines, written by Powertools for AWS Lambda's Logger (so a line carries the
 * X-Ray trace id and Lambda's request id where there is one). Callers pass context attributes and
 * identifiers; never event `data` (CE-16), never tokens or credentials — `redact` below is the last
 * line of defence, not the first.
 *
 * Each set of dependencies gets its own `Logger` at the level of its configuration
 * (`createLogger(config.logLevel)`); every logger writes to the process's standard output, the
 * one sink a process has, which tests can capture with `logger.captureTo` and watch with
 * `logger.observe` (the log scan of the whole test suite, test/support/log-scan.ts).
 *
 * A line is `{"level":"info","time":"…","message":"…","service":"koerier",…fields}` on both hosts:
 * level and time as the laptop gateway writes its own lines, not Powertools' upper-case default.
 */
import { Logger as PowertoolsLogger, LogFormatter, LogItem } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';

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
/** Watchers of every line written, whatever the sink (the test suite's log scan). */
const observers = new Set<(line: string) => void>();

class KoerierLogFormatter extends LogFormatter {
  public formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const context = attributes.lambdaContext;
    return new LogItem({
      attributes: {
        level: attributes.logLevel.toLowerCase(),
        time: attributes.timestamp.toISOString(),
        message: attributes.message,
        service: attributes.serviceName,
        ...(attributes.xRayTraceId ? { xray_trace_id: attributes.xRayTraceId } : {}),
        ...(context ? { function_request_id: context.awsRequestId, cold_start: context.coldStart } : {}),
      },
    }).addAttributes(additional);
  }
}

/** Powertools' Logger with the one sink of this module instead of its own console. */
class SinkLogger extends PowertoolsLogger {
  protected override printLog(_level: number, log: LogItem): void {
    log.prepareForPrint();
    const line = JSON.stringify(log.getAttributes(), this.getJsonReplacer());
    for (const observe of observers) observe(line);
    sink(line);
  }
}

/** Lambda's invocation context, as Powertools takes it (the app layer names no Lambda types itself). */
type LambdaContext = Parameters<PowertoolsLogger['addContext']>[0];

/**
 * Every logger of this process, so that each invocation's Lambda context reaches all of them: a
 * container has the last-resort `logger` and its dependencies' own. Held weakly, as tests make many.
 */
const liveLoggers = new Set<WeakRef<SinkLogger>>();

function powertools(): SinkLogger {
  // Its own level lets everything through: the level check is ours (`write`), so a test's capture can lower it.
  const made = new SinkLogger({ serviceName: 'koerier', logLevel: 'DEBUG', logFormatter: new KoerierLogFormatter() });
  liveLoggers.add(new WeakRef(made));
  return made;
}

/**
 * Called by the handler edges (functions/handlers/shared/) as an invocation starts: from then on
 * every line names Lambda's request id and whether this is the container's first invocation
 * (`function_request_id`, `cold_start`, as docs/OPERATIONS.md promises). Powertools' `addContext`
 * keeps the cold start per logger; each logger made before the first invocation says so once.
 * Without a context (a test calling a handler directly) nothing changes.
 */
export function startInvocation(context: Partial<LambdaContext> | undefined): void {
  if (typeof context?.awsRequestId !== 'string') return;
  for (const reference of liveLoggers) {
    const live = reference.deref();
    if (live) live.addContext(context as LambdaContext);
    else liveLoggers.delete(reference);
  }
}

function write(target: SinkLogger, minimum: number, level: LogLevel, message: string, fields: LogFields): void {
  if (order[level] < (capturedFrom ?? minimum)) return;
  target[level](message, redact(fields));
}

/** Replaces the value of every field whose name says it holds a secret or event data, at any depth (arrays too). */
export function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    if (SECRET_FIELD.test(key)) out[key] = '[redacted]';
    else out[key] = redactValue(value);
  }
  return out;
}

function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue);
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
    return redact(value as LogFields);
  return value;
}

/** A logger that writes the lines from `level` up. */
export function createLogger(level: LogLevel): Logger {
  const minimum = order[level] ?? order.info;
  const target = powertools();
  return {
    debug: (message, fields = {}) => write(target, minimum, 'debug', message, fields),
    info: (message, fields = {}) => write(target, minimum, 'info', message, fields),
    warn: (message, fields = {}) => write(target, minimum, 'warn', message, fields),
    error: (message, fields = {}) => write(target, minimum, 'error', message, fields),
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
  /** Sees every line any logger of this process writes, captured or not, until the returned function is called. */
  observe(watcher: (line: string) => void): () => void {
    observers.add(watcher);
    return () => observers.delete(watcher);
  },
};

export { describeError } from '../core/errors/describe-error.js';
