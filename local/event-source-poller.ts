/**
 * An SQS event source mapping, as Lambda runs one: long-poll the queue, hand the function an
 * `SQSEvent`, delete what succeeded, and leave the rest to SQS — failed messages come back after
 * their visibility timeout and the queue's redrive policy moves them to the dead-letter queue.
 * Partial batch responses (`ReportBatchItemFailures`) are always on, as Koerier's stack sets them.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { createSqsClient } from '../functions/aws/clients.js';
import type { SQSEvent, SQSMessageAttribute, SQSRecord, SQSRecordAttributes } from 'aws-lambda';
import { LOCAL_REGION } from './emulators.js';
import { invokeWithTimeout, type LambdaHandler } from './lambda-runtime.js';

/** Pause between empty receives of the client-side long poll (see `receive`). */
const EMPTY_RECEIVE_PAUSE_MS = 50;
/**
 * The same pause where the emulator tells the poller of its queue's arrivals (`onArrival`): a new
 * message, a delayed one come due and one a ChangeMessageVisibility set visible again each wake it
 * at once (local/sqs-emulator-shims.ts), so the pause only bounds how late a message whose
 * visibility timed out untouched (its function failed or timed out) is seen again. At 50 ms the
 * idle laptop host spent about 9 % of a core receiving nothing.
 */
const EMPTY_RECEIVE_PAUSE_WITH_ARRIVALS_MS = 1000;

export interface PollerOptions {
  readonly queueUrl: string;
  readonly handler: LambdaHandler;
  /** Names the function in logs and in its Lambda context. */
  readonly functionName?: string;
  /** 1–10 per receive; larger batches are gathered over several receives within the window. */
  readonly batchSize?: number;
  readonly maxBatchingWindowSeconds?: number;
  /** The function's timeout: a batch still running past it counts as failed, as in Lambda. */
  readonly timeoutSeconds?: number;
  readonly memoryMb?: number;
  /** Long-poll wait per receive, at most 20 (SQS's limit). */
  readonly waitTimeSeconds?: number;
  /** Parallel receive-and-invoke loops. */
  readonly concurrency?: number;
  /**
   * Batches each loop may have in the function at once (default 1): with more, a loop receives
   * the next batch while earlier ones run, as Lambda's event source mapping invokes several
   * batches of one queue at a time. A loop at its limit receives nothing until a batch ends, so
   * no message waits received and unprocessed.
   */
  readonly batchesInFlight?: number;
  /**
   * Subscribes to arrivals in this queue (the laptop's emulator tells them, local/sqs-emulator-shims.ts)
   * and returns the unsubscribe: an empty poll then waits for the next arrival or the pause,
   * whichever comes first, as SQS's long poll answers as soon as a message is there.
   */
  readonly onArrival?: (listener: () => void) => () => void;
  /** Defaults to an SDK client configured from the environment (AWS_ENDPOINT_URL_SQS on the laptop). */
  readonly client?: SQSClient;
  readonly log?: (line: string) => void;
}

export interface Poller {
  /** Stops receiving, waits for the batches in flight to finish and be deleted. */
  stop(): Promise<void>;
}

export async function startPoller(options: PollerOptions): Promise<Poller> {
  const batchSize = options.batchSize ?? 10;
  const waitTimeSeconds = Math.min(20, Math.max(0, options.waitTimeSeconds ?? 20));
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const batchesInFlight = Math.max(1, options.batchesInFlight ?? 1);
  const windowMs = (options.maxBatchingWindowSeconds ?? 0) * 1000;
  const fn = {
    name: options.functionName ?? 'queueConsumer',
    spec: { entry: '', memoryMb: options.memoryMb ?? 128, timeoutSeconds: options.timeoutSeconds ?? 30 },
    handler: options.handler,
  };
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const ownClient = !options.client;
  const client = options.client ?? createSqsClient();
  const queueName = options.queueUrl.split('/').at(-1) ?? options.queueUrl;
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: options.queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const queueArn = Attributes?.QueueArn ?? `arn:aws:sqs:${LOCAL_REGION}:000000000000:${queueName}`;

  const stopping = new AbortController();
  // Arrivals counted, so a message that arrives while a receive is under way is not slept past.
  let arrivals = 0;
  const waiting = new Set<() => void>();
  const unsubscribe = options.onArrival?.(() => {
    arrivals++;
    for (const wake of waiting) wake();
    waiting.clear();
  });
  const emptyReceivePauseMs = unsubscribe ? EMPTY_RECEIVE_PAUSE_WITH_ARRIVALS_MS : EMPTY_RECEIVE_PAUSE_MS;
  const pauseUnlessArrived = (seen: number): Promise<void> => {
    if (arrivals !== seen || stopping.signal.aborted) return Promise.resolve();
    // Whichever ends the pause (an arrival, the timer, stop) takes the others away: a pause an
    // arrival ends must not leave its timer and abort listener behind, or they pile up on the one
    // signal when arrivals come faster than the pause.
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        waiting.delete(end);
        stopping.signal.removeEventListener('abort', end);
        resolve();
      };
      const timer = setTimeout(end, emptyReceivePauseMs);
      waiting.add(end);
      stopping.signal.addEventListener('abort', end, { once: true });
    });
  };
  const write = (level: string, message: string, fields: Record<string, unknown>) =>
    log(
      JSON.stringify({
        level,
        time: new Date().toISOString(),
        message,
        function: fn.name,
        queue: queueName,
        ...fields,
      }),
    );

  /**
   * A long poll of up to `waitSeconds`, made on this side: local-aws-sqs ends a long poll only when
   * MaxNumberOfMessages is reached or the wait is over (AWS answers as soon as any message is
   * there), and can even return a message twice when its visibility timeout ends during the wait.
   * Short receives in a loop give AWS's latency on the emulator and stay correct against AWS.
   */
  const receive = async (maxMessages: number, waitSeconds: number): Promise<Message[]> => {
    const deadline = Date.now() + waitSeconds * 1000;
    for (;;) {
      const seen = arrivals;
      const result = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: Math.min(10, maxMessages),
          WaitTimeSeconds: 0,
          // local-aws-sqs only returns system attributes for the older AttributeNames; AWS wants the newer name.
          AttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
        // Never aborted: once the emulator has answered, its messages are in flight, and an
        // aborted call would hide them for a whole visibility timeout. A short receive ends soon.
      );
      const messages = result.Messages ?? [];
      if (messages.length > 0 || Date.now() >= deadline || stopping.signal.aborted) return messages;
      await pauseUnlessArrived(seen);
    }
  };

  const receiveBatch = async (): Promise<Message[]> => {
    const messages = await receive(batchSize, waitTimeSeconds);
    const windowEnds = Date.now() + windowMs;
    while (messages.length > 0 && messages.length < batchSize && Date.now() < windowEnds && !stopping.signal.aborted) {
      const remainingSeconds = Math.floor((windowEnds - Date.now()) / 1000);
      let more: Message[];
      try {
        more = await receive(batchSize - messages.length, Math.min(20, remainingSeconds));
      } catch (error) {
        if (stopping.signal.aborted) break; // keep what was gathered: it is processed before stop returns
        throw error;
      }
      messages.push(...more);
      if (more.length === 0 && remainingSeconds === 0)
        await sleep(Math.min(100, windowEnds - Date.now()), stopping.signal);
    }
    return messages;
  };

  const processBatch = async (messages: Message[]): Promise<void> => {
    const started = Date.now();
    const event: SQSEvent = { Records: messages.map((message) => toSqsRecord(message, queueArn)) };
    let failedIds: Set<string>;
    try {
      failedIds = failedItems(await invokeWithTimeout(fn, event), event);
    } catch (error) {
      write('error', 'function failed; the whole batch returns to the queue', {
        received: messages.length,
        error:
          error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
      });
      return;
    }
    const succeeded = messages.filter((message) => !failedIds.has(message.MessageId ?? ''));
    for (let offset = 0; offset < succeeded.length; offset += 10) {
      const chunk = succeeded.slice(offset, offset + 10);
      const result = await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: chunk.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
        }),
      );
      if (result.Failed && result.Failed.length > 0)
        write('warn', 'some processed messages could not be deleted', { failedDeletes: result.Failed.length });
    }
    write('info', 'batch', { received: messages.length, failed: failedIds.size, ms: Date.now() - started });
  };

  const loop = async (): Promise<void> => {
    const running = new Set<Promise<void>>();
    const start = (messages: Message[]) => {
      const batch: Promise<void> = processBatch(messages)
        .catch((error: unknown) =>
          write('error', 'processed messages not deleted; they come back after their visibility timeout', {
            received: messages.length,
            error: error instanceof Error ? error.message : String(error),
          }),
        )
        .finally(() => running.delete(batch));
      running.add(batch);
    };
    while (!stopping.signal.aborted) {
      if (running.size >= batchesInFlight) {
        await Promise.race(running);
        continue;
      }
      let messages: Message[];
      try {
        messages = await receiveBatch();
      } catch (error) {
        if (stopping.signal.aborted) return;
        write('error', 'receive failed; retrying in 1 s', {
          error: error instanceof Error ? error.message : String(error),
        });
        await sleep(1000, stopping.signal);
        continue;
      }
      // A batch received just before stop is still processed: stop waits for it.
      if (messages.length > 0) start(messages);
    }
    await Promise.all(running);
  };

  const loops = Array.from({ length: concurrency }, () => loop());
  return {
    async stop() {
      stopping.abort();
      unsubscribe?.();
      await Promise.all(loops);
      if (ownClient) client.destroy();
    },
  };
}

/**
 * The ids to keep in the queue. Like Lambda, a response naming an id that is not in the batch (or
 * none at all) fails the whole batch.
 */
function failedItems(response: unknown, event: SQSEvent): Set<string> {
  const failures = (response as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures;
  if (failures === undefined || failures === null) return new Set();
  const all = new Set(event.Records.map((record) => record.messageId));
  if (!Array.isArray(failures)) return all;
  const ids = failures.map((failure) => (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier);
  if (!ids.every((id): id is string => typeof id === 'string' && all.has(id))) return all;
  return new Set(ids);
}

/** The record Lambda builds from an SQS message. */
export function toSqsRecord(message: Message, queueArn: string): SQSRecord {
  const messageAttributes: Record<string, SQSMessageAttribute> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = toLambdaAttribute(value);
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: (message.Attributes ?? {}) as unknown as SQSRecordAttributes,
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: queueArn.split(':')[3] ?? LOCAL_REGION,
  };
}

function toLambdaAttribute(value: MessageAttributeValue): SQSMessageAttribute {
  return {
    ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
    ...(value.BinaryValue !== undefined ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') } : {}),
    stringListValues: value.StringListValues ?? [],
    binaryListValues: (value.BinaryListValues ?? []).map((binary) => Buffer.from(binary).toString('base64')),
    dataType: value.DataType ?? 'String',
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    // The poller sleeps every 50 ms while a queue is empty: the abort listener must go when the
    // timer fires, or listeners pile up on the one signal for as long as the host runs.
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
