/**
 * The deliveries queue beyond plain sending (`SqsMessageQueue` does that): putting received
 * messages back for a while — a retry's backoff is its message's visibility timeout — and moving
 * what the redrive policy caught in the dead-letter queue back for another run.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

const MAX_BATCH_ENTRIES = 10;

export interface Postponement {
  readonly receiptHandle: string;
  readonly delaySeconds: number;
}

/**
 * Sets each message's visibility timeout. Returns how many could not be changed: those come
 * back after the queue's default visibility timeout instead, earlier than planned but not lost.
 */
export async function postponeMessages(
  client: SQSClient,
  queueUrl: string,
  postponements: readonly Postponement[],
): Promise<number> {
  let failed = 0;
  for (let offset = 0; offset < postponements.length; offset += MAX_BATCH_ENTRIES) {
    const chunk = postponements.slice(offset, offset + MAX_BATCH_ENTRIES);
    const result = await client.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: chunk.map((entry, index) => ({
          Id: String(index),
          ReceiptHandle: entry.receiptHandle,
          VisibilityTimeout: entry.delaySeconds,
        })),
      }),
    );
    failed += result.Failed?.length ?? 0;
  }
  return failed;
}

/**
 * Moves up to `limit` messages from the dead-letter queue back to the queue, unchanged (same
 * delivery, same Idempotency-Key). Each message is deleted from the dead-letter queue only after
 * it is stored in the queue again, so a failure in between duplicates, never loses.
 */
export async function moveDeadLetterQueueBack(
  client: SQSClient,
  deadLetterQueueUrl: string,
  queueUrl: string,
  limit: number,
): Promise<number> {
  let moved = 0;
  while (moved < limit) {
    const { Messages: messages = [] } = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: deadLetterQueueUrl,
        MaxNumberOfMessages: Math.min(MAX_BATCH_ENTRIES, limit - moved),
        WaitTimeSeconds: 0,
        VisibilityTimeout: 60,
        MessageAttributeNames: ['All'],
      }),
    );
    if (messages.length === 0) return moved;
    const sent = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((message, index) => ({
          Id: String(index),
          MessageBody: message.Body ?? '',
          MessageAttributes: message.MessageAttributes,
        })),
      }),
    );
    const stored = (sent.Successful ?? []).map((entry) => messages[Number(entry.Id)]!);
    if (stored.length > 0) {
      await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: deadLetterQueueUrl,
          Entries: stored.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle ?? '' })),
        }),
      );
    }
    moved += stored.length;
    if (stored.length < messages.length)
      throw new Error(
        `${messages.length - stored.length} messages could not be moved back; they stay in the dead-letter queue`,
      );
  }
  return moved;
}
