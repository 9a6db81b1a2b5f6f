import { createHash } from 'node:crypto';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { startPoller, type Poller } from '../../local/event-source-poller.js';
import { eventually, staysQuiet } from '../support/waiting.js';

let emulators: Emulators;
let sqs: SQSClient;
let queueCounter = 0;

beforeAll(async () => {
  emulators = await startEmulators();
  sqs = new SQSClient({
    region: emulators.region,
    endpoint: emulators.endpoints.sqs,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
});
afterAll(async () => {
  sqs?.destroy();
  await emulators?.stop();
});

/** A fresh queue with a DLQ, a short visibility timeout (1 s unless given) and the given receive limit. */
async function queueWithDeadLetterQueue(
  maxReceiveCount: number,
  visibilityTimeoutSeconds = 1,
): Promise<{ queueUrl: string; deadLetterQueueUrl: string; queueArn: string }> {
  const name = `poller-test-${++queueCounter}`;
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const dlqArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes?.QueueArn;
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount }),
      },
    }),
  );
  const queueArn =
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl, AttributeNames: ['QueueArn'] })))
      .Attributes?.QueueArn ?? '';
  return { queueUrl: queue.QueueUrl ?? '', deadLetterQueueUrl: dlq.QueueUrl ?? '', queueArn };
}

async function messageCounts(queueUrl: string): Promise<{ visible: number; inFlight: number }> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes?.ApproximateNumberOfMessages),
    inFlight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible),
  };
}

describe('SQS event source mapping emulation', () => {
  const pollers: Poller[] = [];
  const logs: string[] = [];
  const poll = async (
    queueUrl: string,
    handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>,
    batchSize = 10,
    extra = {},
  ) => {
    const poller = await startPoller({
      queueUrl,
      handler,
      batchSize,
      waitTimeSeconds: 1,
      client: sqs,
      functionName: 'testConsumer',
      log: (line) => logs.push(line),
      ...extra,
    });
    pollers.push(poller);
    return poller;
  };
  afterAll(async () => {
    await Promise.all(pollers.map((poller) => poller.stop()));
  });

  it('hands the function a faithful SQSEvent', async () => {
    const { queueUrl, queueArn } = await queueWithDeadLetterQueue(3);
    const body = '{"specversion":"1.0","id":"1"}';
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        MessageAttributes: {
          subscription: { DataType: 'String', StringValue: 'sub-1' },
          blob: { DataType: 'Binary', BinaryValue: Buffer.from([1, 2, 3]) },
        },
      }),
    );
    const events: { event: SQSEvent; context: Context }[] = [];
    const poller = await poll(queueUrl, async (event, context) => {
      events.push({ event, context });
    });
    await eventually('the event', () => events.length > 0);
    await poller.stop();

    const [{ event, context }] = events as [{ event: SQSEvent; context: Context }];
    expect(event.Records).toHaveLength(1);
    const record = event.Records[0];
    expect(record).toMatchObject({
      body,
      md5OfBody: createHash('md5').update(body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: emulators.region,
      messageAttributes: {
        subscription: { stringValue: 'sub-1', stringListValues: [], binaryListValues: [], dataType: 'String' },
        blob: {
          binaryValue: Buffer.from([1, 2, 3]).toString('base64'),
          stringListValues: [],
          binaryListValues: [],
          dataType: 'Binary',
        },
      },
    });
    expect(record?.messageId).toMatch(/.+/);
    expect(record?.receiptHandle).toMatch(/.+/);
    expect(record?.attributes.ApproximateReceiveCount).toBe('1');
    expect(Number(record?.attributes.SentTimestamp)).toBeGreaterThan(Date.now() - 60_000);
    expect(Number(record?.attributes.ApproximateFirstReceiveTimestamp)).toBeGreaterThanOrEqual(
      Number(record?.attributes.SentTimestamp),
    );
    expect(context.functionName).toBe('koerier-test-consumer');
    expect(await messageCounts(queueUrl)).toEqual({ visible: 0, inFlight: 0 }); // a success is deleted
  });

  it('delivers at most batchSize messages per invocation', async () => {
    const { queueUrl } = await queueWithDeadLetterQueue(3);
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Array.from({ length: 5 }, (_, i) => ({ Id: String(i), MessageBody: `m${i}` })),
      }),
    );
    const sizes: number[] = [];
    await poll(
      queueUrl,
      async (event) => {
        sizes.push(event.Records.length);
      },
      2,
    );
    await eventually('all five messages', () => sizes.reduce((a, b) => a + b, 0) === 5);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2);
    expect(await messageCounts(queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('gathers a batch larger than one receive (10) within the batching window', async () => {
    // The visibility timeout must outlast the window, or the first messages come back while the batch is gathered.
    const { queueUrl } = await queueWithDeadLetterQueue(3, 30);
    for (const offset of [0, 10]) {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Array.from({ length: 10 }, (_, i) => ({ Id: String(i), MessageBody: `m${offset + i}` })),
        }),
      );
    }
    const sizes: number[] = [];
    await poll(
      queueUrl,
      async (event) => {
        sizes.push(event.Records.length);
      },
      15,
      { maxBatchingWindowSeconds: 1 },
    );
    await eventually('all twenty messages', () => sizes.reduce((a, b) => a + b, 0) === 20);
    expect(sizes).toEqual([15, 5]);
  });

  it('CARD-5: batchItemFailures keep only the failed message; it comes back after its visibility timeout and the redrive policy moves it to the DLQ', async () => {
    const { queueUrl, deadLetterQueueUrl } = await queueWithDeadLetterQueue(2);
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: ['ok-1', 'poison', 'ok-2'].map((body, i) => ({ Id: String(i), MessageBody: body })),
      }),
    );
    const deliveries: { body: string; receiveCount: string }[] = [];
    await poll(queueUrl, async (event) => {
      for (const record of event.Records)
        deliveries.push({ body: record.body, receiveCount: record.attributes.ApproximateReceiveCount });
      return {
        batchItemFailures: event.Records.filter((record) => record.body === 'poison').map((record) => ({
          itemIdentifier: record.messageId,
        })),
      };
    });

    const dead = await eventually('the poison message in the DLQ', async () => {
      const received = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: deadLetterQueueUrl, WaitTimeSeconds: 1, AttributeNames: ['All'] }),
      );
      return received.Messages?.[0];
    });
    expect(dead.Body).toBe('poison');
    expect(deliveries.filter((d) => d.body === 'poison').map((d) => d.receiveCount)).toEqual(['1', '2']);
    expect(
      deliveries
        .filter((d) => d.body !== 'poison')
        .map((d) => d.body)
        .sort(),
    ).toEqual(['ok-1', 'ok-2']); // deleted after one success
    expect(await messageCounts(queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('EDU-18: a function that throws deletes nothing: the whole batch comes back', async () => {
    const { queueUrl } = await queueWithDeadLetterQueue(5);
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: ['a', 'b'].map((body, i) => ({ Id: String(i), MessageBody: body })),
      }),
    );
    const seen: string[][] = [];
    await poll(queueUrl, async (event) => {
      seen.push(event.Records.map((record) => `${record.body}#${record.attributes.ApproximateReceiveCount}`).sort());
      if (seen.flat().length <= 2) throw new Error('downstream unavailable');
    });
    await eventually('the retried batch', () => seen.flat().length >= 4);
    expect(seen.flat().sort()).toEqual(['a#1', 'a#2', 'b#1', 'b#2']);
    expect(logs.some((line) => line.includes('function failed') && line.includes('downstream unavailable'))).toBe(true);
    await eventually(
      'the queue to drain',
      async () => (await messageCounts(queueUrl)).visible + (await messageCounts(queueUrl)).inFlight === 0,
    );
  });

  it('EDU-18: a response naming a message outside the batch fails the whole batch, as in Lambda', async () => {
    const { queueUrl } = await queueWithDeadLetterQueue(5);
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' }));
    const counts: string[] = [];
    await poll(queueUrl, async (event) => {
      counts.push(event.Records[0]?.attributes.ApproximateReceiveCount ?? '');
      return counts.length === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] } : undefined;
    });
    await eventually('the second delivery', () => counts.length >= 2);
    expect(counts.slice(0, 2)).toEqual(['1', '2']);
  });

  it('stop waits for the batch in flight and deletes it', async () => {
    const { queueUrl } = await queueWithDeadLetterQueue(5);
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'slow' }));
    let release: () => void = () => undefined;
    let started = false;
    let finished = false;
    const poller = await poll(queueUrl, async () => {
      started = true;
      await new Promise<void>((resolve) => (release = resolve));
      finished = true;
    });
    await eventually('the handler to start', () => started);
    const stopped = poller.stop();
    await staysQuiet('end of the handler before its release', () => finished, 100);
    release();
    await stopped;
    expect(finished).toBe(true);
    expect(await messageCounts(queueUrl)).toEqual({ visible: 0, inFlight: 0 });
  });

  it('runs several batches at once with concurrency > 1', async () => {
    const { queueUrl } = await queueWithDeadLetterQueue(5);
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: ['1', '2'].map((body, i) => ({ Id: String(i), MessageBody: body })),
      }),
    );
    let inFlight = 0;
    let most = 0;
    let releaseAll: () => void = () => undefined;
    const bothIn = new Promise<void>((resolve) => (releaseAll = resolve));
    await poll(
      queueUrl,
      async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        if (inFlight === 2) releaseAll();
        await Promise.race([bothIn, new Promise((resolve) => setTimeout(resolve, 3000))]);
        inFlight -= 1;
      },
      1,
      { concurrency: 2 },
    );
    await eventually('both messages handled', async () => {
      const counts = await messageCounts(queueUrl);
      return counts.visible + counts.inFlight === 0;
    });
    expect(most).toBe(2);
  });

  it('CARD-5: one loop runs up to batchesInFlight batches at once, as the event source mapping does, and receives no more until one ends', async () => {
    const { queueUrl } = await queueWithDeadLetterQueue(5, 30);
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: ['1', '2', '3'].map((body, i) => ({ Id: String(i), MessageBody: body })),
      }),
    );
    let running = 0;
    let most = 0;
    let handled = 0;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    await poll(
      queueUrl,
      async () => {
        running += 1;
        most = Math.max(most, running);
        await released;
        running -= 1;
        handled += 1;
      },
      1,
      { concurrency: 1, batchesInFlight: 2 },
    );
    await eventually('two batches in the function at once', () => running === 2 || undefined);
    await staysQuiet('no third batch while two run', () => running > 2 || undefined, 300);
    // Two received, the third still in the queue for whoever receives next.
    expect((await messageCounts(queueUrl)).inFlight).toBe(2);
    release();
    await eventually('all three handled and deleted', async () =>
      handled === 3 && (await messageCounts(queueUrl)).inFlight === 0 ? true : undefined,
    );
    expect(most).toBe(2);
  });
});
