/**
 * `PullQueues` on SQS: each pull subscription's queue `<prefix>-pull-<id>` and dead-letter queue
 * `<prefix>-pull-<id>-dlq`, created when the subscription is created and deleted with it. One
 * prefix, so the functions' IAM grants name `<prefix>-pull-*` and nothing else (lib/). Encrypted
 * with SQS-managed keys. The queue's redrive policy is only the backstop for a crash: Koerier moves
 * an event past `maxdeliverycount` to its dead letters itself, on the receive after the last one
 * (so SQS's count is one above, and 1,000, SQS's maximum, at most).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  PullQueueGone,
  type PulledMessage,
  type PullQueues,
  type QueueEntry,
  type QueueEntryOutcome,
} from '../core/pull/pull-queues.js';
import type { PullSettings } from '../core/subscriptions/subscription.js';
import { SqsMessageQueue } from './sqs-message-queue.js';

const MAX_BATCH_ENTRIES = 10;
/** SQS's answers for a receipt handle whose message is no longer locked by it. */
const LOCK_LOST_CODES = new Set([
  'ReceiptHandleIsInvalid',
  'MessageNotInflight',
  'AWS.SimpleQueueService.MessageNotInflight',
]);
const SQS_MAX_RECEIVE_COUNT = 1000;
/** A queue's own visibility timeout; every receive sets its own lock. */
const DEFAULT_VISIBILITY_SECONDS = 60;

export function pullQueueName(prefix: string, subscriptionId: string): string {
  return `${prefix}-pull-${subscriptionId}`;
}

export class SqsPullQueues implements PullQueues {
  private readonly urls = new Map<string, string>();

  constructor(
    private readonly client: SQSClient,
    private readonly prefix: string,
  ) {}

  async create(subscriptionId: string, settings: PullSettings): Promise<void> {
    const name = pullQueueName(this.prefix, subscriptionId);
    const deadLetter = await this.client.send(
      new CreateQueueCommand({
        QueueName: `${name}-dlq`,
        Attributes: { MessageRetentionPeriod: String(settings.retentionSeconds), SqsManagedSseEnabled: 'true' },
      }),
    );
    const deadLetterArn = await this.arnOf(deadLetter.QueueUrl!);
    const queue = await this.client.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: { ...queueAttributes(settings, deadLetterArn), SqsManagedSseEnabled: 'true' },
      }),
    );
    // TLS only, as the stack's own queues (cdk-nag AwsSolutions-SQS4): the ARN is known once the queue exists.
    for (const [url, arn] of [
      [deadLetter.QueueUrl!, deadLetterArn],
      [queue.QueueUrl!, await this.arnOf(queue.QueueUrl!)],
    ] as const) {
      await this.client.send(
        new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { Policy: tlsOnlyPolicy(arn) } }),
      );
    }
    this.urls.set(subscriptionId, queue.QueueUrl!);
  }

  async update(subscriptionId: string, settings: PullSettings): Promise<void> {
    const url = await this.urlOf(subscriptionId);
    const deadLetterUrl = await this.deadLetterUrlOf(subscriptionId);
    await this.client.send(
      new SetQueueAttributesCommand({
        QueueUrl: deadLetterUrl,
        Attributes: { MessageRetentionPeriod: String(settings.retentionSeconds) },
      }),
    );
    await this.client.send(
      new SetQueueAttributesCommand({
        QueueUrl: url,
        Attributes: queueAttributes(settings, await this.arnOf(deadLetterUrl)),
      }),
    );
  }

  /** Whether the subscription's queue exists in this stack's Region (a standby's are made at take-over: pull-queue-provisioning.ts). */
  async exists(subscriptionId: string): Promise<boolean> {
    try {
      await this.urlOf(subscriptionId);
      return true;
    } catch (error) {
      if (error instanceof PullQueueGone) return false;
      throw error;
    }
  }

  async remove(subscriptionId: string): Promise<void> {
    for (const name of [
      pullQueueName(this.prefix, subscriptionId),
      `${pullQueueName(this.prefix, subscriptionId)}-dlq`,
    ]) {
      try {
        const { QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: name }));
        await this.client.send(new DeleteQueueCommand({ QueueUrl }));
      } catch (error) {
        if (!isMissingQueue(error)) throw error;
      }
    }
    this.urls.delete(subscriptionId);
  }

  async send(subscriptionId: string, bodies: readonly string[], delaySeconds?: number): Promise<void> {
    await new SqsMessageQueue(this.client, await this.urlOf(subscriptionId)).send(
      bodies.map((body) => (delaySeconds === undefined ? { body } : { body, delaySeconds })),
    );
  }

  async receive(
    subscriptionId: string,
    options: { max: number; waitSeconds: number; visibilitySeconds: number },
  ): Promise<PulledMessage[]> {
    const queueUrl = await this.urlOf(subscriptionId);
    const { Messages: messages = [] } = await this.gone(
      subscriptionId,
      this.client.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: options.max,
          WaitTimeSeconds: options.waitSeconds,
          VisibilityTimeout: options.visibilitySeconds,
          // Both: the laptop's emulator knows only the older AttributeNames.
          AttributeNames: ['All'],
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      ),
    );
    return messages.map((message) => ({
      messageId: message.MessageId ?? '',
      receiptHandle: message.ReceiptHandle ?? '',
      body: message.Body ?? '',
      receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
    }));
  }

  /** Messages received and not yet settled (SQS's approximate count): what an erasure cannot read (issue 31 item 4). */
  async inFlight(subscriptionId: string): Promise<number> {
    const url = await this.urlOf(subscriptionId);
    const { Attributes } = await this.gone(
      subscriptionId,
      this.client.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessagesNotVisible'] }),
      ),
    );
    return Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
  }

  async delete(
    subscriptionId: string,
    entries: readonly QueueEntry[],
  ): Promise<ReadonlyMap<string, QueueEntryOutcome>> {
    const url = await this.urlOf(subscriptionId);
    return this.inBatches(subscriptionId, entries, async (chunk) => {
      const result = await this.client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: chunk.map((entry) => ({ Id: entry.entryId, ReceiptHandle: entry.receiptHandle })),
        }),
      );
      return {
        successful: (result.Successful ?? []).map((s) => s.Id ?? ''),
        failed: (result.Failed ?? []).map((f) => ({ id: f.Id ?? '', code: f.Code ?? '' })),
      };
    });
  }

  async changeVisibility(
    subscriptionId: string,
    entries: readonly (QueueEntry & { seconds: number })[],
  ): Promise<ReadonlyMap<string, QueueEntryOutcome>> {
    if (entries.length === 0) return new Map();
    const url = await this.urlOf(subscriptionId);
    return this.inBatches(subscriptionId, entries, async (chunk) => {
      const result = await this.client.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: url,
          Entries: chunk.map((entry) => ({
            Id: entry.entryId,
            ReceiptHandle: entry.receiptHandle,
            VisibilityTimeout: entry.seconds,
          })),
        }),
      );
      return {
        successful: (result.Successful ?? []).map((s) => s.Id ?? ''),
        failed: (result.Failed ?? []).map((f) => ({ id: f.Id ?? '', code: f.Code ?? '' })),
      };
    });
  }

  private async inBatches<E extends QueueEntry>(
    subscriptionId: string,
    entries: readonly E[],
    call: (chunk: readonly E[]) => Promise<{ successful: string[]; failed: { id: string; code: string }[] }>,
  ): Promise<Map<string, QueueEntryOutcome>> {
    const outcomes = new Map<string, QueueEntryOutcome>();
    const chunks: E[][] = [];
    for (let offset = 0; offset < entries.length; offset += MAX_BATCH_ENTRIES)
      chunks.push(entries.slice(offset, offset + MAX_BATCH_ENTRIES));
    await Promise.all(
      chunks.map(async (chunk) => {
        try {
          const { successful, failed } = await call(chunk);
          for (const id of successful) outcomes.set(id, 'done');
          for (const { id, code } of failed) outcomes.set(id, LOCK_LOST_CODES.has(code) ? 'lock-lost' : 'failed');
        } catch (error) {
          if (isMissingQueue(error)) throw this.forget(subscriptionId);
          // A receipt handle SQS cannot even parse fails the whole call; the token opened, so it was ours and is stale.
          const lost = error instanceof Error && LOCK_LOST_CODES.has(error.name);
          for (const entry of chunk) outcomes.set(entry.entryId, lost ? 'lock-lost' : 'failed');
        }
      }),
    );
    return outcomes;
  }

  /** A queue that no longer exists is a deleted subscription's: forget its URL and say so. */
  private async gone<T>(subscriptionId: string, call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      throw isMissingQueue(error) ? this.forget(subscriptionId) : error;
    }
  }

  private forget(subscriptionId: string): PullQueueGone {
    this.urls.delete(subscriptionId);
    return new PullQueueGone(subscriptionId);
  }

  private async urlOf(subscriptionId: string): Promise<string> {
    const known = this.urls.get(subscriptionId);
    if (known) return known;
    const { QueueUrl } = await this.gone(
      subscriptionId,
      this.client.send(new GetQueueUrlCommand({ QueueName: pullQueueName(this.prefix, subscriptionId) })),
    );
    this.urls.set(subscriptionId, QueueUrl!);
    return QueueUrl!;
  }

  private async deadLetterUrlOf(subscriptionId: string): Promise<string> {
    const { QueueUrl } = await this.client.send(
      new GetQueueUrlCommand({ QueueName: `${pullQueueName(this.prefix, subscriptionId)}-dlq` }),
    );
    return QueueUrl!;
  }

  private async arnOf(queueUrl: string): Promise<string> {
    const { Attributes } = await this.client.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    return Attributes?.QueueArn ?? '';
  }
}

function queueAttributes(settings: PullSettings, deadLetterArn: string): Record<string, string> {
  return {
    MessageRetentionPeriod: String(settings.retentionSeconds),
    VisibilityTimeout: String(DEFAULT_VISIBILITY_SECONDS),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: deadLetterArn,
      maxReceiveCount: Math.min(settings.maxDeliveryCount + 1, SQS_MAX_RECEIVE_COUNT),
    }),
  };
}

function tlsOnlyPolicy(queueArn: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'TlsOnly',
        Effect: 'Deny',
        Principal: '*',
        Action: 'sqs:*',
        Resource: queueArn,
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
    ],
  });
}

export function isMissingQueue(error: unknown): boolean {
  const name = error instanceof Error ? error.name : '';
  return name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue';
}
