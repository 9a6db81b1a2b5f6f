/**
 * How the lean SQS client (functions/aws/sqs-requests.ts) and the adapters on it take SQS's answers,
 * over a real local HTTP server that answers as SQS's JSON 1.0 API does (errors as `__type` and
 * `message`, with the query-compatible code in `x-amzn-query-error`): errors named as the SDK client
 * names them for the very same answer, with its message and nothing secret; the SDK's standard
 * retries; and the SDK SQS client's MD5 checks of message bodies (issue 15, item 4).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as sdk from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isMissingQueue, SqsPullQueues } from '../../../functions/aws/sqs-pull-queues.js';
import { GetQueueUrlCommand, ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand, SqsRequests } from '../../../functions/aws/sqs-requests.js';
import { PullQueueGone } from '../../../functions/core/pull/pull-queues.js';
import { startAwsServiceStub, type AwsServiceStub } from '../../support/aws-service-stub.js';

const CREDENTIALS = { accessKeyId: 'AKIDSQSANSWERS', secretAccessKey: 'sqs-answer-test-secret-key' };
const QUEUE = 'koerier-pull-s1';

type Answer = (request: IncomingMessage, response: ServerResponse, body: Record<string, unknown>) => void;

let stub: AwsServiceStub;
let endpoint: string;
let queueUrl: string;
/** Answers to give first, in order; after them the server answers as SQS would. */
let faults: Answer[];
let seen: { target: string; queryMode: string | undefined }[];

const md5 = (text: string) => createHash('md5').update(text, 'utf8').digest('hex');
const json = (response: ServerResponse, status: number, body: object, headers: Record<string, string> = {}) =>
  void response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', ...headers }).end(JSON.stringify(body));
/** An error as SQS writes one in JSON: `__type`, `message`, and the query-compatible code and fault in a header. */
const sqsError =
  (status: number, type: string, queryError: string | undefined, message = `The queue ${queueUrl} says no.`): Answer =>
  (_, response) =>
    json(response, status, { __type: type, message }, queryError ? { 'x-amzn-query-error': queryError } : {});
const missingQueue = sqsError(
  400,
  'com.amazonaws.sqs#QueueDoesNotExist',
  'AWS.SimpleQueueService.NonExistentQueue;Sender',
  'The specified queue does not exist.',
);

const asSqs: Answer = (request, response, body) => {
  const operation = String(request.headers['x-amz-target']).replace('AmazonSQS.', '');
  if (operation === 'GetQueueUrl') return body['QueueName'] === QUEUE ? json(response, 200, { QueueUrl: queueUrl }) : missingQueue(request, response, body);
  if (operation === 'SendMessage') return json(response, 200, { MessageId: 'm-1', MD5OfMessageBody: md5(String(body['MessageBody'])) });
  if (operation === 'SendMessageBatch') {
    const entries = body['Entries'] as { Id: string; MessageBody: string }[];
    return json(response, 200, { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: md5(e.MessageBody) })) });
  }
  if (operation === 'ReceiveMessage')
    return json(response, 200, { Messages: [{ MessageId: 'm-1', ReceiptHandle: 'h-1', Body: 'één', MD5OfBody: md5('één') }] });
  sqsError(400, 'com.amazonaws.sqs#UnsupportedOperation', 'AWS.SimpleQueueService.UnsupportedOperation;Sender')(request, response, body);
};

beforeAll(async () => {
  stub = await startAwsServiceStub((request, response, text) => {
    seen.push({ target: String(request.headers['x-amz-target']), queryMode: request.headers['x-amzn-query-mode'] as string | undefined });
    (faults.shift() ?? asSqs)(request, response, JSON.parse(text || '{}') as Record<string, unknown>);
  });
  endpoint = stub.endpoint;
  queueUrl = `${endpoint}/123456789012/${QUEUE}`;
});
afterAll(async () => {
  await stub.close();
});
beforeEach(() => {
  faults = [];
  seen = [];
});

const lean = () => new SqsRequests({ region: 'eu-west-1', endpoint, credentials: CREDENTIALS });
const sdkClient = () => new sdk.SQSClient({ region: 'eu-west-1', endpoint, credentials: CREDENTIALS, maxAttempts: 1 });

/** What a failed call throws. */
async function failureOf(call: Promise<unknown>): Promise<Error> {
  try {
    await call;
  } catch (error) {
    return error as Error;
  }
  throw new Error('the call did not fail');
}

function expectNothingSecret(error: Error): void {
  const everything = `${error.message} ${String(error)} ${JSON.stringify(error)}`;
  for (const secret of [CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey, 'Signature=', 'Credential=', 'x-amz-date', 'x-amz-security-token']) {
    expect(everything).not.toContain(secret);
  }
}

describe('issue 15, item 4: the lean SQS client reads SQS’s answers as the SDK client does', () => {
  it('issue 15: a missing queue (query code AWS.SimpleQueueService.NonExistentQueue) is named QueueDoesNotExist, as the SDK names it, and the adapters see a gone queue', async () => {
    const sqs = lean();
    const ours = await failureOf(sqs.send(new GetQueueUrlCommand({ QueueName: 'koerier-pull-gone' })));
    const theirs = await failureOf(sdkClient().send(new sdk.GetQueueUrlCommand({ QueueName: 'koerier-pull-gone' })));
    expect([ours.name, ours.message]).toEqual([theirs.name, theirs.message]);
    expect(ours).toMatchObject({ name: 'QueueDoesNotExist', code: 'AWS.SimpleQueueService.NonExistentQueue', statusCode: 400, operation: 'GetQueueUrl' });
    expect(isMissingQueue(ours)).toBe(true);
    expectNothingSecret(ours);
    // The pull queues: a receive from a deleted subscription's queue is PullQueueGone; removing it again is no error.
    const pull = new SqsPullQueues(sqs, 'koerier');
    await expect(pull.receive('gone', { max: 10, waitSeconds: 0, visibilitySeconds: 60 })).rejects.toBeInstanceOf(PullQueueGone);
    await pull.remove('gone');
    expect(seen.every((request) => request.queryMode === 'true')).toBe(true);
    sqs.destroy();
  });

  const answers: [string, Answer][] = [
    [
      'a model error by its query code (ReceiptHandleIsInvalid, 404)',
      sqsError(404, 'com.amazonaws.sqs#ReceiptHandleIsInvalid', 'ReceiptHandleIsInvalid;Sender'),
    ],
    ['a model error whose query code differs (QueueAlreadyExists)', sqsError(400, 'com.amazonaws.sqs#QueueNameExists', 'QueueAlreadyExists;Sender')],
    ['a model error with no query code (MessageNotInflight)', sqsError(400, 'com.amazonaws.sqs#MessageNotInflight', undefined)],
    [
      'a query code outside the model (InvalidParameterValue)',
      sqsError(400, 'com.amazon.coral.service#InvalidParameterValueException', 'InvalidParameterValue;Sender'),
    ],
    ['a coral error with no query code (AccessDeniedException)', sqsError(403, 'com.amazon.coral.service#AccessDeniedException', undefined)],
    ['an error with no code at all (an empty body)', (_, response) => void response.writeHead(400).end('')],
  ];
  for (const [what, answer] of answers) {
    it(`issue 15: ${what} is named as the SDK names it, with its message and nothing secret`, async () => {
      faults = [answer];
      const ours = await failureOf(lean().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' })));
      faults = [answer];
      const theirs = await failureOf(sdkClient().send(new sdk.SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' })));
      expect([ours.name, ours.message]).toEqual([theirs.name, theirs.message]);
      expectNothingSecret(ours);
    });
  }

  it('issue 15: a body that is not JSON (a proxy’s page) is an Unknown error with its status, where the SDK throws its parser’s SyntaxError', async () => {
    faults = [(_, response) => void response.writeHead(403).end('<html>forbidden</html>')];
    const ours = await failureOf(lean().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' })));
    expect(ours).toMatchObject({ name: 'Unknown', statusCode: 403, message: 'UnknownError' });
  });

  it('issue 15: throttling (RequestThrottled, ThrottlingException) is retried as the SDK does, three attempts in all', async () => {
    faults = [
      sqsError(400, 'com.amazonaws.sqs#RequestThrottled', 'RequestThrottled;Sender'),
      sqsError(400, 'com.amazon.coral.availability#ThrottlingException', 'ThrottlingException;Sender'),
    ];
    const sqs = lean();
    expect(await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'derde keer' }))).toMatchObject({ MessageId: 'm-1' });
    expect(seen.map((request) => request.target)).toEqual(Array<string>(3).fill('AmazonSQS.SendMessage'));
    sqs.destroy();
  });

  it('issue 15: a 501 is not retried, nor is a client error other than throttling', async () => {
    faults = [sqsError(501, 'com.amazon.coral.service#NotImplemented', undefined)];
    const sqs = lean();
    expect(await failureOf(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' })))).toMatchObject({ statusCode: 501 });
    expect(seen).toHaveLength(1);
    faults = [sqsError(400, 'com.amazonaws.sqs#InvalidMessageContents', 'InvalidMessageContents;Sender')];
    expect(await failureOf(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' })))).toMatchObject({ name: 'InvalidMessageContents' });
    expect(seen).toHaveLength(2);
    sqs.destroy();
  });

  it('issue 15: a 500 is retried, and the third fails with SQS’s name for it', async () => {
    const internal = sqsError(500, 'com.amazon.coral.service#InternalFailure', 'InternalFailure;Receiver', 'We encountered an internal error.');
    faults = [internal, internal, internal];
    const ours = await failureOf(lean().send(new GetQueueUrlCommand({ QueueName: QUEUE })));
    expect(ours).toMatchObject({ name: 'InternalFailure', statusCode: 500, message: 'We encountered an internal error.' });
    expect(seen).toHaveLength(3);
  });

  it('issue 15: a received body whose MD5 does not match fails the receive with the SDK’s error, naming the message, and is not retried', async () => {
    const corrupt: Answer = (_, response) =>
      json(response, 200, {
        Messages: [
          { MessageId: 'm-ok', ReceiptHandle: 'h-ok', Body: 'goed', MD5OfBody: md5('goed') },
          { MessageId: 'm-bad', ReceiptHandle: 'h-bad', Body: 'verminkt', MD5OfBody: md5('origineel') },
        ],
      });
    faults = [corrupt];
    const ours = await failureOf(lean().send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 })));
    expect(seen).toHaveLength(1);
    faults = [corrupt];
    const theirs = await failureOf(sdkClient().send(new sdk.ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10 })));
    expect([ours.name, ours.message]).toEqual([theirs.name, theirs.message]);
    expect(ours.message).toBe('Invalid MD5 checksum on messages: m-bad');
    // A sound answer is read.
    expect((await lean().send(new ReceiveMessageCommand({ QueueUrl: queueUrl }))).Messages?.[0]?.Body).toBe('één');
  });

  it('issue 15: a sent body whose MD5 SQS answers wrong fails SendMessage and SendMessageBatch with the SDK’s errors', async () => {
    const wrongSingle: Answer = (_, response) => json(response, 200, { MessageId: 'm-1', MD5OfMessageBody: md5('something else') });
    faults = [wrongSingle];
    const ours = await failureOf(lean().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' })));
    faults = [wrongSingle];
    const theirs = await failureOf(sdkClient().send(new sdk.SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' })));
    expect([ours.name, ours.message]).toEqual([theirs.name, theirs.message]);
    expect(ours.message).toBe('InvalidChecksumError');

    const wrongBatch: Answer = (_, response) =>
      json(response, 200, {
        Successful: [
          { Id: '0', MessageId: 'm-0', MD5OfMessageBody: md5('a') },
          { Id: '1', MessageId: 'm-1', MD5OfMessageBody: md5('not b') },
        ],
      });
    const entries = [
      { Id: '0', MessageBody: 'a' },
      { Id: '1', MessageBody: 'b' },
    ];
    faults = [wrongBatch];
    const oursBatch = await failureOf(lean().send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries })));
    faults = [wrongBatch];
    const theirsBatch = await failureOf(sdkClient().send(new sdk.SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries })));
    expect([oursBatch.name, oursBatch.message]).toEqual([theirsBatch.name, theirsBatch.message]);
    expect(oursBatch.message).toBe('Invalid MD5 checksum on messages: m-1');
  });
});
