/**
 * The lean SQS client (functions/aws/sqs-requests.ts) against the real @aws-sdk/client-sqs: each
 * operation Koerier sends, with the same fixed clock and credentials, must go out as the same
 * signed request (method, URL, body bytes, every signed header) and read the same answer (issue 15,
 * item 4). Inputs are written with their members in the SDK's model order, the order the SDK
 * writes them in, so that both bodies are the same bytes.
 *
 * Left out of the SDK's signing, and never sent by ours: `x-amz-user-agent`, `amz-sdk-invocation-id`
 * and `amz-sdk-request`, and the unsigned `user-agent` (test/support/sdk-request-capture.ts).
 */
import { createHash } from 'node:crypto';
import * as sdk from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import * as lean from '../../../functions/aws/sqs-requests.js';
import {
  capturingRequestHandler,
  capturingTransport,
  expectSameSignedRequest,
  FIXED_CREDENTIALS,
  jsonAnswer,
  signingAtFixedNow,
  withoutSdkOnlyHeaders,
  type CapturedRequest,
} from '../../support/sdk-request-capture.js';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/koerier-deliveries';
const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** An answer to a request body, as JSON. */
type Answer = (requestBody: Record<string, unknown>) => object;

const answering = (answer: Answer) =>
  jsonAnswer('application/x-amz-json-1.0', (request: CapturedRequest) => answer(JSON.parse(request.body) as Record<string, unknown>));

function sdkClient(sent: CapturedRequest[], answer: Answer, endpoint?: string): sdk.SQSClient {
  const requestHandler = capturingRequestHandler(sent, answering(answer));
  return withoutSdkOnlyHeaders(
    new sdk.SQSClient({ region: 'eu-west-1', credentials: FIXED_CREDENTIALS, logger: quiet, ...(endpoint ? { endpoint } : {}), requestHandler }),
  );
}

function leanClient(sent: CapturedRequest[], answer: Answer, endpoint?: string): lean.SqsRequests {
  return new lean.SqsRequests({
    region: 'eu-west-1',
    credentials: FIXED_CREDENTIALS,
    ...(endpoint ? { endpoint } : {}),
    transport: capturingTransport(sent, answering(answer)),
  });
}

/** Sends `input` as `operation` with both clients; both requests, both answers (the SDK's without its `$metadata`). */
async function both(
  operation: string,
  input: object,
  answer: Answer,
  endpoint?: string,
): Promise<{ ours: CapturedRequest; theirs: CapturedRequest; ourOutput: unknown; sdkOutput: unknown }> {
  const oursSent: CapturedRequest[] = [];
  const sdkSent: CapturedRequest[] = [];
  const LeanCommand = (lean as unknown as Record<string, new (input: object) => lean.SqsCommand<object, object>>)[`${operation}Command`]!;
  const SdkCommand = (sdk as unknown as Record<string, new (input: object) => never>)[`${operation}Command`]!;
  const ourOutput = await leanClient(oursSent, answer, endpoint).send(new LeanCommand(structuredClone(input)));
  const { $metadata, ...sdkOutput } = (await sdkClient(sdkSent, answer, endpoint).send(new SdkCommand(structuredClone(input)))) as { $metadata: unknown };
  expect($metadata).toBeDefined();
  return { ours: oursSent[0]!, theirs: sdkSent[0]!, ourOutput, sdkOutput };
}

const sentMessage = (body: Record<string, unknown>) => ({ MessageId: 'm-1', MD5OfMessageBody: md5(String(body['MessageBody'])) });
const sentBatch = (body: Record<string, unknown>) => ({
  Successful: (body['Entries'] as { Id: string; MessageBody: string }[]).map((entry) => ({
    Id: entry.Id,
    MessageId: `m-${entry.Id}`,
    MD5OfMessageBody: md5(entry.MessageBody),
  })),
  Failed: [],
});

describe('issue 15, item 4: the lean SQS client signs and reads as @aws-sdk/client-sqs does', () => {
  signingAtFixedNow();

  it('issue 15: SendMessage with string attributes (the inbound queue), to the queue URL, and the id it reads', async () => {
    const input = {
      QueueUrl: QUEUE_URL,
      MessageBody: '{"specversion":"1.0","id":"e-1","data":"très \\uFFFE"}',
      MessageAttributes: {
        'koerier-publisher': { DataType: 'String', StringValue: 'partner-a' },
        'koerier-received-at': { DataType: 'String', StringValue: '2026-11-26T12:34:56.789Z' },
      },
    };
    const { ours, theirs, ourOutput, sdkOutput } = await both('SendMessage', input, sentMessage);
    expectSameSignedRequest(ours, theirs, ['x-amz-target', 'x-amzn-query-mode', 'content-type']);
    expect(ours.url).toBe('https://sqs.eu-west-1.amazonaws.com/');
    expect(ours.headers['x-amzn-query-mode']).toBe('true');
    expect(ourOutput).toEqual(sdkOutput);
  });

  it('issue 15: SendMessage with a delay (the replays queue)', async () => {
    const input = { QueueUrl: QUEUE_URL, MessageBody: '{"subscriptionId":"s","replayId":"r"}', DelaySeconds: 900 };
    const { ours, theirs, ourOutput, sdkOutput } = await both('SendMessage', input, sentMessage);
    expectSameSignedRequest(ours, theirs, ['x-amz-target']);
    expect(ourOutput).toEqual(sdkOutput);
  });

  it('issue 15: SendMessage with a binary attribute: base64 in the body as the SDK writes it', async () => {
    const input = {
      QueueUrl: QUEUE_URL,
      MessageBody: 'x',
      MessageAttributes: { blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 2, 250, 255]) } },
    };
    const { ours, theirs } = await both('SendMessage', input, sentMessage);
    expectSameSignedRequest(ours, theirs, ['x-amz-target']);
    expect(ours.body).toContain('"BinaryValue":"AAEC+v8="');
  });

  it('issue 15: SendMessageBatch of several entries with attributes, and the successful and failed entries it reads', async () => {
    const input = {
      QueueUrl: QUEUE_URL,
      Entries: [0, 1, 2].map((i) => ({
        Id: String(i),
        MessageBody: `{"n":${i}}`,
        MessageAttributes: { 'koerier-publisher': { DataType: 'String', StringValue: 'p' } },
      })),
    };
    const answer: Answer = (body) => {
      const sent = sentBatch(body);
      return { Successful: sent.Successful.slice(0, 2), Failed: [{ Id: '2', Code: 'InternalError', SenderFault: false, Message: 'try again' }] };
    };
    const { ours, theirs, ourOutput, sdkOutput } = await both('SendMessageBatch', input, answer);
    expectSameSignedRequest(ours, theirs, ['x-amz-target']);
    expect(ourOutput).toEqual(sdkOutput);
  });

  it('issue 15: ReceiveMessage as the pull queues ask, and the messages, system attributes and a binary attribute it reads', async () => {
    const input = {
      QueueUrl: QUEUE_URL,
      AttributeNames: ['All'],
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      MessageAttributeNames: ['All'],
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 60,
      WaitTimeSeconds: 20,
    };
    const answer: Answer = () => ({
      Messages: [
        {
          MessageId: 'm-1',
          ReceiptHandle: 'AQEB+handle/1==',
          Body: '{"a":"ë"}',
          MD5OfBody: md5('{"a":"ë"}'),
          Attributes: { ApproximateReceiveCount: '3' },
          MessageAttributes: {
            kind: { DataType: 'String', StringValue: 'event' },
            blob: { DataType: 'Binary', BinaryValue: Buffer.from([9, 8, 7]).toString('base64') },
          },
        },
      ],
    });
    const { ours, theirs, ourOutput, sdkOutput } = await both('ReceiveMessage', input, answer);
    expectSameSignedRequest(ours, theirs, ['x-amz-target']);
    const binary = (output: unknown) => (output as sdk.ReceiveMessageResult).Messages![0]!.MessageAttributes!['blob']!.BinaryValue!;
    expect(Buffer.from(binary(ourOutput))).toEqual(Buffer.from([9, 8, 7]));
    expect(Buffer.from(binary(ourOutput))).toEqual(Buffer.from(binary(sdkOutput)));
    // Bytes compared above; the rest member by member (Buffer and Uint8Array are not equal to toEqual).
    for (const output of [ourOutput, sdkOutput]) delete (output as sdk.ReceiveMessageResult).Messages![0]!.MessageAttributes!['blob']!.BinaryValue;
    expect(ourOutput).toEqual(sdkOutput);
  });

  it('issue 15: DeleteMessageBatch and ChangeMessageVisibilityBatch, and the outcomes per entry they read', async () => {
    const answer: Answer = () => ({ Successful: [{ Id: 'a' }], Failed: [{ Id: 'b', Code: 'ReceiptHandleIsInvalid', SenderFault: true, Message: 'stale' }] });
    const deleted = await both(
      'DeleteMessageBatch',
      {
        QueueUrl: QUEUE_URL,
        Entries: [
          { Id: 'a', ReceiptHandle: 'h-a' },
          { Id: 'b', ReceiptHandle: 'h-b' },
        ],
      },
      answer,
    );
    expectSameSignedRequest(deleted.ours, deleted.theirs, ['x-amz-target']);
    expect(deleted.ourOutput).toEqual(deleted.sdkOutput);
    const postponed = await both(
      'ChangeMessageVisibilityBatch',
      {
        QueueUrl: QUEUE_URL,
        Entries: [
          { Id: 'a', ReceiptHandle: 'h-a', VisibilityTimeout: 30 },
          { Id: 'b', ReceiptHandle: 'h-b', VisibilityTimeout: 0 },
        ],
      },
      answer,
    );
    expectSameSignedRequest(postponed.ours, postponed.theirs, ['x-amz-target']);
    expect(postponed.ourOutput).toEqual(postponed.sdkOutput);
  });

  it('issue 15: the pull queues’ life cycle — CreateQueue, GetQueueUrl, GetQueueAttributes, SetQueueAttributes, DeleteQueue', async () => {
    const created = await both(
      'CreateQueue',
      { QueueName: 'koerier-pull-s1', Attributes: { MessageRetentionPeriod: '345600', SqsManagedSseEnabled: 'true' } },
      () => ({ QueueUrl: QUEUE_URL }),
    );
    expectSameSignedRequest(created.ours, created.theirs, ['x-amz-target']);
    expect(created.ourOutput).toEqual(created.sdkOutput);
    const url = await both('GetQueueUrl', { QueueName: 'koerier-pull-s1' }, () => ({ QueueUrl: QUEUE_URL }));
    expectSameSignedRequest(url.ours, url.theirs, ['x-amz-target']);
    expect(url.ourOutput).toEqual(url.sdkOutput);
    const attributes = await both('GetQueueAttributes', { QueueUrl: QUEUE_URL, AttributeNames: ['QueueArn'] }, () => ({
      Attributes: { QueueArn: 'arn:aws:sqs:eu-west-1:123456789012:koerier-pull-s1' },
    }));
    expectSameSignedRequest(attributes.ours, attributes.theirs, ['x-amz-target']);
    expect(attributes.ourOutput).toEqual(attributes.sdkOutput);
    const policy = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Deny', Principal: '*', Action: 'sqs:*' }] });
    const set = await both('SetQueueAttributes', { QueueUrl: QUEUE_URL, Attributes: { Policy: policy } }, () => ({}));
    expectSameSignedRequest(set.ours, set.theirs, ['x-amz-target']);
    const gone = await both('DeleteQueue', { QueueUrl: QUEUE_URL }, () => ({}));
    expectSameSignedRequest(gone.ours, gone.theirs, ['x-amz-target']);
  });

  it("issue 15: without an endpoint given, a queue URL on another host is sent to that host, as the SDK's queueUrlMiddleware does", async () => {
    const legacy = 'https://eu-west-1.queue.amazonaws.com/123456789012/koerier-inbound';
    const { ours, theirs } = await both('SendMessage', { QueueUrl: legacy, MessageBody: 'x' }, sentMessage);
    expectSameSignedRequest(ours, theirs, ['x-amz-target', 'host']);
    expect(ours.url).toBe('https://eu-west-1.queue.amazonaws.com/');
  });

  it('issue 15: with an endpoint given (the laptop host), the queue URL does not move the request', async () => {
    const endpoint = 'http://127.0.0.1:4576';
    const { ours, theirs } = await both('SendMessage', { QueueUrl: 'http://localhost:9999/000000000000/q', MessageBody: 'x' }, sentMessage, endpoint);
    expectSameSignedRequest(ours, theirs, ['x-amz-target', 'host']);
    expect(ours.url).toBe('http://127.0.0.1:4576/');
  });
});
