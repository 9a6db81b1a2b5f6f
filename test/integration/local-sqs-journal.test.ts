/**
 * review #22: the SQS emulator's messages survive a restart of the laptop emulators on the same
 * state directory — after a clean stop and after SIGKILL — each in the state it was in.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { queues, resourceEnv } from '../../functions/config/resources.js';
import { eventually } from '../support/waiting.js';

const WORKER = fileURLToPath(new URL('./local-sqs-journal-worker.ts', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));

let stateDir: string;
const running: Emulators[] = [];
const clients: SQSClient[] = [];

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'koerier-sqs-journal-'));
});
afterEach(async () => {
  clients.splice(0).forEach((client) => client.destroy());
  for (const emulators of running.splice(0)) await emulators.stop();
  await rm(stateDir, { recursive: true, force: true });
});

async function start(): Promise<{
  emulators: Emulators;
  sqs: SQSClient;
  url: (name: 'inbound' | 'deliveries') => string;
  dlq: (name: 'inbound' | 'deliveries') => string;
}> {
  const emulators = await startEmulators({ stateDir });
  running.push(emulators);
  const sqs = new SQSClient({
    region: emulators.region,
    endpoint: emulators.endpoints.sqs,
    credentials: {
      accessKeyId: emulators.awsEnvironment.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: emulators.awsEnvironment.AWS_SECRET_ACCESS_KEY ?? '',
    },
  });
  clients.push(sqs);
  return {
    emulators,
    sqs,
    url: (name) => emulators.resourceEnvironment[resourceEnv.queueUrl(name)] ?? '',
    dlq: (name) => emulators.resourceEnvironment[resourceEnv.deadLetterQueueUrl(name)] ?? '',
  };
}

async function stop(emulators: Emulators): Promise<void> {
  running.splice(running.indexOf(emulators), 1);
  await emulators.stop();
}

/**
 * One short receive. local-aws-sqs returns a message twice within one receive when its visibility
 * timeout (0 here) ends while the receive still gathers, so tests that use 0 take one message.
 */
async function receiveAll(
  sqs: SQSClient,
  queueUrl: string,
  options: { visibilityTimeout?: number; max?: number } = {},
): Promise<Message[]> {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: options.max ?? 10,
      WaitTimeSeconds: 0,
      AttributeNames: ['All'],
      MessageAttributeNames: ['All'],
      VisibilityTimeout: options.visibilityTimeout,
    }),
  );
  return Messages;
}

async function counts(
  sqs: SQSClient,
  queueUrl: string,
): Promise<{ visible: number; invisible: number; delayed: number }> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages) - Number(Attributes.ApproximateNumberOfMessagesNotVisible),
    invisible: Number(Attributes.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed),
  };
}

/** Receives until `count` messages came back, or fails after `timeoutMs`. */
async function receiveEventually(
  sqs: SQSClient,
  queueUrl: string,
  count: number,
  timeoutMs = 10_000,
): Promise<Message[]> {
  const messages: Message[] = [];
  return eventually(
    () => `${count} messages (${messages.length} came back)`,
    async () => {
      messages.push(...(await receiveAll(sqs, queueUrl)));
      return messages.length >= count && messages;
    },
    { timeoutMs },
  );
}

describe('review #22: SQS messages across a restart of the laptop emulators', () => {
  it('review #22: after a clean stop every message comes back with its id, body, attributes and receive count; invisible and delayed ones for the rest of their time', async () => {
    const first = await start();
    const sent = await first.sqs.send(
      new SendMessageCommand({
        QueueUrl: first.url('inbound'),
        MessageBody: 'visible',
        MessageAttributes: {
          kind: { DataType: 'String', StringValue: 'plain' },
          blob: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 254, 255]) },
        },
      }),
    );
    await first.sqs.send(
      new SendMessageCommand({ QueueUrl: first.url('deliveries'), MessageBody: 'waits for its retry' }),
    );
    // A delivery's retry: received once, then hidden for its backoff with ChangeMessageVisibility.
    const [retrying] = await receiveAll(first.sqs, first.url('deliveries'));
    await first.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: first.url('deliveries'),
        ReceiptHandle: retrying!.ReceiptHandle,
        VisibilityTimeout: 3,
      }),
    );
    await first.sqs.send(
      new SendMessageCommand({ QueueUrl: first.url('deliveries'), MessageBody: 'delayed', DelaySeconds: 3 }),
    );
    await first.sqs.send(new SendMessageCommand({ QueueUrl: first.url('inbound'), MessageBody: 'deleted' }));
    const received = await receiveAll(first.sqs, first.url('inbound'), { visibilityTimeout: 1 });
    expect(received).toHaveLength(2);
    const deleted = received.find((message) => message.Body === 'deleted');
    await first.sqs.send(
      new DeleteMessageCommand({ QueueUrl: first.url('inbound'), ReceiptHandle: deleted!.ReceiptHandle }),
    );
    const stoppedAt = Date.now();
    await stop(first.emulators);

    const second = await start();
    expect(await counts(second.sqs, second.url('deliveries'))).toMatchObject({ invisible: 1, delayed: 1 });
    expect(await counts(second.sqs, second.url('inbound'))).toMatchObject({ invisible: 1 });
    const [visible, ...others] = await receiveEventually(second.sqs, second.url('inbound'), 1);
    expect(others).toEqual([]);
    expect(visible).toMatchObject({
      MessageId: sent.MessageId,
      Body: 'visible',
      MD5OfBody: sent.MD5OfMessageBody,
      MD5OfMessageAttributes: sent.MD5OfMessageAttributes,
    });
    expect(visible!.MessageAttributes?.['kind']?.StringValue).toBe('plain');
    expect(
      Buffer.from(visible!.MessageAttributes?.['blob']?.BinaryValue ?? []).equals(Buffer.from([0, 1, 254, 255])),
    ).toBe(true);
    // Received once before the stop, once now.
    expect(visible!.Attributes?.ApproximateReceiveCount).toBe('2');

    expect(await receiveAll(second.sqs, second.url('deliveries'))).toEqual([]);
    const back = await receiveEventually(second.sqs, second.url('deliveries'), 2);
    // Neither came back before the rest of its 3 s had passed.
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(2_500);
    const byBody = Object.fromEntries(back.map((message) => [message.Body, message]));
    expect(byBody['waits for its retry']?.MessageId).toBe(retrying!.MessageId);
    // As on SQS, ChangeMessageVisibility is no receive (local/sqs-emulator-shims.ts): 1 before the stop, 1 now.
    expect(byBody['waits for its retry']?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(byBody['delayed']?.Attributes?.ApproximateReceiveCount).toBe('1');
  });

  it('review #22: a message the redrive policy moved to the dead-letter queue stays there, once', async () => {
    const first = await start();
    await first.sqs.send(new SendMessageCommand({ QueueUrl: first.url('inbound'), MessageBody: 'poison' }));
    for (let receive = 0; receive < queues.inbound.maxReceiveCount; receive++) {
      const messages = await eventually(
        `receive ${receive + 1} of the poison message`,
        async () => {
          const received = await receiveAll(first.sqs, first.url('inbound'), { visibilityTimeout: 0, max: 1 });
          return received.length > 0 && received;
        },
        { timeoutMs: 5000, intervalMs: 20 },
      );
      expect(messages).toHaveLength(1);
    }
    await eventually(
      'the poison message in the dead-letter queue',
      async () => (await counts(first.sqs, first.dlq('inbound'))).visible === 1,
      {
        intervalMs: 20,
      },
    );
    await stop(first.emulators);

    const second = await start();
    expect(await receiveAll(second.sqs, second.url('inbound'))).toEqual([]);
    const dead = await receiveAll(second.sqs, second.dlq('inbound'));
    expect(dead.map((message) => message.Body)).toEqual(['poison']);
  });

  it('review #22: after SIGKILL (no clean stop) every message whose SendMessage was answered is there', async () => {
    const bodies = Array.from({ length: 25 }, (_, index) => `acknowledged ${index}`);
    const worker = spawn(process.execPath, ['--import', 'tsx', WORKER, stateDir, JSON.stringify(bodies)], {
      cwd: REPOSITORY,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      worker.once('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve, reject) => {
      worker.once('exit', (code) => reject(new Error(`the worker exited early (${code})`)));
      worker.stdout!.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('sent')) resolve();
      });
    });
    worker.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    const second = await start();
    const restored: string[] = [];
    for (
      let messages = await receiveAll(second.sqs, second.url('inbound'));
      messages.length > 0;
      messages = await receiveAll(second.sqs, second.url('inbound'))
    ) {
      restored.push(...messages.map((message) => message.Body ?? ''));
    }
    expect(restored.sort()).toEqual([...bodies].sort());
  });
});
