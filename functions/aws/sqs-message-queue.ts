/**
 * Sending to an SQS queue: accepted events to `inbound`, delivery messages to `deliveries`. The
 * only knowledge of SQS's limits lives here: at most 10
 * entries and 256 KiB per SendMessageBatch call, and the characters a message body may hold.
 */
import {
  type MessageAttributeValue,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

export interface QueueMessage {
  /** The message body: an event in the JSON event format, or a delivery message. */
  readonly body: string;
  readonly attributes?: Readonly<Record<string, string>>;
  /** Seconds before the message can be received (0–900). */
  readonly delaySeconds?: number;
}

const MAX_BATCH_ENTRIES = 10;
const MAX_BATCH_BYTES = 256 * 1024;

export class QueueWriteError extends Error {
  override name = 'QueueWriteError';
}

export class SqsMessageQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  /**
   * Writes every message or throws. Batches that fail in part are retried once for the failed
   * entries; what still fails makes the whole call fail, so the caller never acknowledges an
   * event that is not stored. (Entries already written stay: downstream drops duplicates by
   * source+id, EDU-IDEM-15.)
   */
  async send(messages: readonly QueueMessage[]): Promise<void> {
    if (messages.length === 1) {
      const [only] = messages as [QueueMessage];
      await this.client.send(
        new SendMessageCommand({
          QueueUrl: this.queueUrl,
          MessageBody: sqsSafeBody(only.body),
          MessageAttributes: toAttributes(only.attributes),
          ...(only.delaySeconds === undefined ? {} : { DelaySeconds: only.delaySeconds }),
        }),
      );
      return;
    }
    for (const chunk of chunksWithinLimits(messages)) await this.sendBatch(chunk, 1);
  }

  private async sendBatch(chunk: readonly QueueMessage[], retriesLeft: number): Promise<void> {
    const result = await this.client.send(
      new SendMessageBatchCommand({
        QueueUrl: this.queueUrl,
        Entries: chunk.map((message, index) => ({
          Id: String(index),
          MessageBody: sqsSafeBody(message.body),
          MessageAttributes: toAttributes(message.attributes),
          ...(message.delaySeconds === undefined ? {} : { DelaySeconds: message.delaySeconds }),
        })),
      }),
    );
    const failed = result.Failed ?? [];
    if (failed.length === 0) return;
    const retry = failed.map((entry) => chunk[Number(entry.Id)]).filter((m): m is QueueMessage => m !== undefined);
    if (retriesLeft > 0 && failed.every((entry) => !entry.SenderFault)) return this.sendBatch(retry, retriesLeft - 1);
    throw new QueueWriteError(
      `${failed.length} of ${chunk.length} messages were not stored: ${failed.map((f) => f.Code).join(', ')}`,
    );
  }
}

/**
 * SQS refuses U+FFFE and U+FFFF in a message body. Every body Koerier queues is a JSON text, in
 * which these can only stand inside strings, so writing them as \uFFFE / \uFFFF escapes keeps
 * the very same JSON value and makes the message storable.
 */
export function sqsSafeBody(body: string): string {
  return body.replace(/[\uFFFE\uFFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function toAttributes(
  attributes: Readonly<Record<string, string>> | undefined,
): Record<string, MessageAttributeValue> | undefined {
  if (!attributes) return undefined;
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of Object.entries(attributes)) out[name] = { DataType: 'String', StringValue: value };
  return out;
}

function messageBytes(message: QueueMessage): number {
  let bytes = Buffer.byteLength(sqsSafeBody(message.body));
  for (const [name, value] of Object.entries(message.attributes ?? {}))
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value) + 'String'.length;
  return bytes;
}

function* chunksWithinLimits(messages: readonly QueueMessage[]): Generator<QueueMessage[]> {
  let chunk: QueueMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = messageBytes(message);
    if (chunk.length > 0 && (chunk.length === MAX_BATCH_ENTRIES || bytes + size > MAX_BATCH_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(message);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}
