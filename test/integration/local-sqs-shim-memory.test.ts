/**
 * The laptop's SQS shim (local/sqs-emulator-shims.ts) knows a message only while the emulator
 * holds it. The soak (bench/soak.ts) found it kept every message ever sent, so the host's memory
 * grew with every event (issue 15 item 7; docs/PERFORMANCE.md, "Soak").
 */
import {
  DeleteMessageBatchCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { eventually } from '../support/waiting.js';

let emulators: Emulators;
let sqs: SQSClient;
let inbound: string;
let inboundDeadLetters: string;
let deliveries: string;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  sqs = new SQSClient(emulators.clientSettings('sqs'));
  inbound = emulators.resourceEnvironment[resourceEnv.queueUrl('inbound')]!;
  inboundDeadLetters = emulators.resourceEnvironment[resourceEnv.deadLetterQueueUrl('inbound')]!;
  deliveries = emulators.resourceEnvironment[resourceEnv.queueUrl('deliveries')]!;
});

afterAll(async () => {
  sqs?.destroy();
  await emulators?.stop();
});

async function send(queueUrl: string, count: number): Promise<void> {
  for (let offset = 0; offset < count; offset += 10) {
    const ids = Array.from({ length: Math.min(10, count - offset) }, (_, index) => String(offset + index));
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: ids.map((id) => ({ Id: id, MessageBody: `message ${id}` })),
      }),
    );
  }
}

async function receiveAll(queueUrl: string, count: number, visibilityTimeout = 60): Promise<Message[]> {
  const received = new Map<string, Message>();
  await eventually(`${count} messages received`, async () => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: visibilityTimeout }),
    );
    for (const message of Messages) received.set(message.MessageId!, message);
    return received.size >= count || undefined;
  });
  return [...received.values()];
}

describe('the SQS shim on the laptop keeps no deleted message (issue 15 item 7)', () => {
  it('review #23, issue 15 soak: 120 messages sent, received and deleted leave the shim tracking none of them', async () => {
    const before = emulators.trackedSqsMessages();
    await send(deliveries, 120);
    expect(emulators.trackedSqsMessages()).toBe(before + 120);
    const received = await receiveAll(deliveries, 120);
    for (let offset = 0; offset < received.length; offset += 10) {
      const entries = received
        .slice(offset, offset + 10)
        .map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle! }));
      await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: deliveries, Entries: entries }));
    }
    expect(emulators.trackedSqsMessages()).toBe(before);
  });

  it('review #23, issue 15 soak: a message moved to the dead-letter queue is tracked once: its source queue forgets it', async () => {
    const before = emulators.trackedSqsMessages();
    await send(inbound, 1);
    // inbound's redrive moves a message past 5 receives; a visibility of 0 makes each receive count at once.
    const dead = await eventually('the message dead-lettered', async () => {
      await sqs.send(new ReceiveMessageCommand({ QueueUrl: inbound, VisibilityTimeout: 0 }));
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: inboundDeadLetters, VisibilityTimeout: 60 }),
      );
      return Messages.length > 0 ? Messages : undefined;
    });
    expect(dead[0]?.Body).toBe('message 0');
    expect(emulators.trackedSqsMessages()).toBe(before + 1);
    await sqs.send(new PurgeQueueCommand({ QueueUrl: inboundDeadLetters }));
  });
});
