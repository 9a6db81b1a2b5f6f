/**
 * The laptop's SQS arrival notice (local/sqs-emulator-shims.ts), which wakes the host's pollers
 * the moment a message is added to their queue, as SQS's long poll answers at once (issue 15).
 */
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { eventually, staysQuiet } from '../support/waiting.js';

let emulators: Emulators;
let sqs: SQSClient;
let inbound: string;
let deliveries: string;

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
  sqs = new SQSClient(emulators.clientSettings('sqs'));
  inbound = emulators.resourceEnvironment[resourceEnv.queueUrl('inbound')]!;
  deliveries = emulators.resourceEnvironment[resourceEnv.queueUrl('deliveries')]!;
});

afterAll(async () => {
  sqs?.destroy();
  await emulators?.stop();
});

describe('SQS arrivals on the laptop', () => {
  it('every message sent names its queue once, a batch once per message, and an unsubscribed listener hears nothing', async () => {
    const heard: string[] = [];
    const unsubscribe = emulators.onSqsArrival((queue) => heard.push(queue));
    await sqs.send(new SendMessageCommand({ QueueUrl: inbound, MessageBody: 'one' }));
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: deliveries,
        Entries: [0, 1, 2].map((i) => ({ Id: String(i), MessageBody: `m${i}` })),
      }),
    );
    const name = (url: string) => url.split('/').at(-1)!;
    await eventually('four arrivals', () => heard.length === 4 || undefined);
    expect(heard).toEqual([name(inbound), name(deliveries), name(deliveries), name(deliveries)]);

    unsubscribe();
    await sqs.send(new SendMessageCommand({ QueueUrl: inbound, MessageBody: 'two' }));
    await staysQuiet('no arrival after unsubscribing', () => heard.length > 4 || undefined, 200);
  });

  // The emulator on its own ends a receive only at MaxNumberOfMessages or after its whole wait
  // (plus 40 ms for a short poll), which made every queue hop on the laptop 40 ms or more. SQS
  // answers as soon as there is a message; this test's own timeout is shorter than the wait.
  it(
    'a long poll for ten answers with the one message there, as SQS does, not after its 20 s wait; the receive still counts',
    { timeout: 10_000 },
    async () => {
      const { QueueUrl } = await sqs.send(
        new CreateQueueCommand({ QueueName: `koerier-test-long-poll-${Date.now()}` }),
      );
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'alone' }));
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 20, AttributeNames: ['All'] }),
      );
      expect(Messages?.map((message) => [message.Body, message.Attributes?.ApproximateReceiveCount])).toEqual([
        ['alone', '1'],
      ]);
      const { Messages: none } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      expect(none ?? []).toEqual([]);
    },
  );

  // The host's pollers pause a second between empty receives (local/event-source-poller.ts): a
  // retry whose delay a ChangeMessageVisibility set must wake them when it is due, not a second later.
  it(
    'issue 15: a message ChangeMessageVisibility hides is told as it becomes visible again, and not before',
    { timeout: 10_000 },
    async () => {
      const { QueueUrl } = await sqs.send(
        new CreateQueueCommand({ QueueName: `koerier-test-visibility-${Date.now()}` }),
      );
      const name = QueueUrl!.split('/').at(-1)!;
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'retry me' }));
      // A long poll: the emulator makes even an undelayed message receivable on a 0 ms timer.
      const [received] =
        (
          await sqs.send(
            new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 5, VisibilityTimeout: 30 }),
          )
        ).Messages ?? [];
      const heard: number[] = [];
      const unsubscribe = emulators.onSqsArrival((queue) => queue === name && heard.push(Date.now()));
      try {
        const changedAt = Date.now();
        await sqs.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl,
            ReceiptHandle: received!.ReceiptHandle!,
            VisibilityTimeout: 1,
          }),
        );
        await staysQuiet('no arrival while the message is hidden', () => heard.length > 0 || undefined, 700);
        await eventually('the arrival when the message is visible again', () => heard.length === 1 || undefined);
        expect(heard[0]! - changedAt).toBeGreaterThanOrEqual(950);
        const { Messages } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 0 }),
        );
        expect(Messages?.map((message) => message.Body)).toEqual(['retry me']);
      } finally {
        unsubscribe();
      }
    },
  );

  // SQS makes a message receivable once SendMessage has answered; the emulator only on a 0 ms
  // timer after it, which a receive sent at once could beat (a test draining the queue right after
  // a publish once found it empty under the whole suite).
  it(
    'issue 15: a short poll sent as soon as SendMessage answered receives the message, every time',
    { timeout: 30_000 },
    async () => {
      const { QueueUrl } = await sqs.send(
        new CreateQueueCommand({ QueueName: `koerier-test-send-receive-${Date.now()}` }),
      );
      for (let i = 0; i < 200; i++) {
        await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: `m${i}` }));
        const { Messages } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
        );
        expect(
          Messages?.map((message) => message.Body),
          `message ${i}`,
        ).toEqual([`m${i}`]);
      }
    },
  );
});
