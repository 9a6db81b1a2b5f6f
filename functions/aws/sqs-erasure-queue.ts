/**
 * The erasures queue (issue 31 item 4): one message per running erasure, its next chunk. The
 * message holds the selector, personal data, so it lives only here: SQS encrypts the queue, and
 * the worker deletes the message once the chunk is done.
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { ErasureMessage, ErasureQueue } from '../core/erasure/ports.js';

export class SqsErasureQueue implements ErasureQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  async send(message: ErasureMessage): Promise<void> {
    await this.client.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message) }));
  }
}
