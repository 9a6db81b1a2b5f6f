/**
 * What a stage of Koerier costs in AWS, recorded while a benchmark runs on the laptop host:
 * per stage (the function that sent it, or a name the benchmark gives), every AWS request by
 * service and operation, the items in each (a batch request of 10 entries is 1 request, 10 items),
 * the billing units (SQS: one per 64 KiB chunk of payload; DynamoDB: the read and write request
 * units the table reports; S3: PUT-class and GET-class requests and the bytes), and per
 * invocation its records and handler time.
 *
 * Any bench module can feed it: `recordAwsUsage(host.awsClients)`, run the work inside
 * `usage.invocation(...)` (the host's `aroundInvocation` hook does that for every function), then
 * `usage.snapshot()` per scenario. bench/cost/model.ts reads the `costScenarios` a result file
 * holds and turns them into docs/COST.md.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { observeAttempts, observeCalls } from '../../functions/aws/aws-request-observer.js';
import type { AwsClients } from '../../functions/aws/clients.js';

/** The clients a host's functions send with (`KoerierHost['awsClients']`), watched through the SDK middleware of functions/aws/aws-request-observer.ts. */
type Clients = AwsClients;

export interface StageUsage {
  invocations: number;
  /** SQS records (queue-triggered functions) or 1 per HTTP request. */
  records: number;
  /** Sum of handler wall time, ms. */
  handlerMs: number;
  /** `<service>:<operation>` → HTTP requests sent (every attempt: what AWS bills). */
  requests: Record<string, number>;
  /** `<service>:<operation>` → items (entries of a batch, keys of a batch read; 1 for a single call). */
  items: Record<string, number>;
  units: {
    sqs64KiBChunks: number;
    dynamodbReadUnits: number;
    dynamodbWriteUnits: number;
    s3PutClass: number;
    s3GetClass: number;
    s3BytesWritten: number;
  };
}

/** One scenario's usage, per stage, over `events` published events. */
export interface CostScenario {
  readonly events: number;
  readonly description: string;
  /** Bytes of event data per event. */
  readonly dataBytes: number;
  readonly stages: Record<string, StageUsage>;
}

const DYNAMODB_CAPACITY_OPERATIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);
const S3_GET_CLASS = new Set(['GetObject', 'HeadObject']);

const emptyStage = (): StageUsage => ({
  invocations: 0,
  records: 0,
  handlerMs: 0,
  requests: {},
  items: {},
  units: {
    sqs64KiBChunks: 0,
    dynamodbReadUnits: 0,
    dynamodbWriteUnits: 0,
    s3PutClass: 0,
    s3GetClass: 0,
    s3BytesWritten: 0,
  },
});

function itemsIn(service: string, operation: string, input: Record<string, unknown>): number {
  if (service === 'sqs' && Array.isArray(input['Entries'])) return input['Entries'].length;
  if (service === 'dynamodb' && operation === 'BatchWriteItem') {
    return Object.values((input['RequestItems'] ?? {}) as Record<string, unknown[]>).reduce(
      (sum, list) => sum + list.length,
      0,
    );
  }
  if (service === 'dynamodb' && operation === 'BatchGetItem') {
    return Object.values((input['RequestItems'] ?? {}) as Record<string, { Keys?: unknown[] }>).reduce(
      (sum, table) => sum + (table.Keys?.length ?? 0),
      0,
    );
  }
  if (service === 'dynamodb' && operation.startsWith('Transact') && Array.isArray(input['TransactItems']))
    return input['TransactItems'].length;
  return 1;
}

const DYNAMODB_READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

function capacityOf(operation: string, output: Record<string, unknown>): { read: number; write: number } {
  const consumed = output['ConsumedCapacity'];
  const list = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) as {
    ReadCapacityUnits?: number;
    WriteCapacityUnits?: number;
    CapacityUnits?: number;
  }[];
  let read = 0;
  let write = 0;
  for (const entry of list) {
    read += entry.ReadCapacityUnits ?? 0;
    write += entry.WriteCapacityUnits ?? 0;
    // Most answers carry only the total, in the units of the operation's kind.
    if (entry.ReadCapacityUnits === undefined && entry.WriteCapacityUnits === undefined) {
      if (DYNAMODB_READS.has(operation)) read += entry.CapacityUnits ?? 0;
      else write += entry.CapacityUnits ?? 0;
    }
  }
  return { read, write };
}

export interface AwsUsageRecorder {
  /** Runs `work` as one invocation of `stage` with `records` records: its requests and time count there. */
  invocation<T>(stage: string, records: number, work: () => Promise<T>): Promise<T>;
  /** The usage since the last reset, per stage. */
  snapshot(): Record<string, StageUsage>;
  reset(): void;
}

export function recordAwsUsage(clients: Clients): AwsUsageRecorder {
  const current = new AsyncLocalStorage<string>();
  let stages: Record<string, StageUsage> = {};
  const stage = () => (stages[current.getStore() ?? 'outside an invocation'] ??= emptyStage());

  // DynamoDB: every attempt is a billed request; items and capacity once per operation, from its
  // input and its answer (no retries happen against dynalite, so the items per request are as before).
  observeAttempts(clients.dynamodb, ({ operation }) => {
    const usage = stage();
    const key = `dynamodb:${operation}`;
    usage.requests[key] = (usage.requests[key] ?? 0) + 1;
  });
  observeCalls(clients.dynamodb, {
    beforeCall: (operation, input) => {
      const usage = stage();
      const key = `dynamodb:${operation}`;
      usage.items[key] = (usage.items[key] ?? 0) + itemsIn('dynamodb', operation, input);
      // Ask DynamoDB for the capacity it bills (the adapters never ask for it themselves).
      return DYNAMODB_CAPACITY_OPERATIONS.has(operation) && input['ReturnConsumedCapacity'] === undefined
        ? { ...input, ReturnConsumedCapacity: 'TOTAL' }
        : (input as Record<string, unknown>);
    },
    afterCall: (operation, _input, output) => {
      if (!DYNAMODB_CAPACITY_OPERATIONS.has(operation)) return;
      const usage = stage();
      const { read, write } = capacityOf(operation, output);
      usage.units.dynamodbReadUnits += read;
      usage.units.dynamodbWriteUnits += write;
    },
  });
  // Items from each call's input, before it is sent (as the SDK middleware counted them, from the input);
  // requests and 64 KiB chunks from each attempt, retries included, by the bytes of its JSON body.
  observeCalls(clients.sqs, {
    beforeCall: (operation, input) => {
      const usage = stage();
      const key = `sqs:${operation}`;
      usage.items[key] = (usage.items[key] ?? 0) + itemsIn('sqs', operation, input);
      return input;
    },
  });
  observeAttempts(clients.sqs, ({ operation, requestBytes }) => {
    const usage = stage();
    const key = `sqs:${operation}`;
    usage.requests[key] = (usage.requests[key] ?? 0) + 1;
    usage.units.sqs64KiBChunks += Math.max(1, Math.ceil(requestBytes / 65_536));
  });
  observeAttempts(clients.s3, ({ operation, requestBytes }) => {
    const usage = stage();
    const key = `s3:${operation}`;
    usage.requests[key] = (usage.requests[key] ?? 0) + 1;
    usage.items[key] = (usage.items[key] ?? 0) + 1;
    if (S3_GET_CLASS.has(operation)) usage.units.s3GetClass += 1;
    else usage.units.s3PutClass += 1;
    if (operation === 'PutObject') usage.units.s3BytesWritten += requestBytes;
  });

  return {
    async invocation(name, records, work) {
      const started = performance.now();
      try {
        return await current.run(name, work);
      } finally {
        const usage = (stages[name] ??= emptyStage());
        usage.invocations += 1;
        usage.records += records;
        usage.handlerMs += performance.now() - started;
      }
    },
    snapshot: () => structuredClone(stages),
    reset: () => {
      stages = {};
    },
  };
}

/** How many records a Lambda event carries: an SQS batch's records, else one request. */
export function recordsIn(event: unknown): number {
  const records = (event as { Records?: unknown[] } | undefined)?.Records;
  return Array.isArray(records) ? records.length : 1;
}
