/**
 * How the lean DynamoDB client (functions/aws/dynamodb-requests.ts) takes DynamoDB's answers, over a
 * real local HTTP server that answers as DynamoDB documents its JSON 1.0 API (errors as `__type`
 * `namespace#Code` with `message`, binary attributes in base64): errors named and worded as the SDK
 * names and words them, the SDK's DynamoDB retries, and nothing secret in any error (issue 15,
 * item 4).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as sdk from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConditionalCheckFailedException, DynamoDbRequests, GetItemCommand, PutItemCommand } from '../../../functions/aws/dynamodb-requests.js';
import { startAwsServiceStub, type AwsServiceStub } from '../../support/aws-service-stub.js';

const CREDENTIALS = { accessKeyId: 'AKIDDYNAMOANSWERS', secretAccessKey: 'dynamodb-answer-test-secret-key', sessionToken: 'dynamodb-answer-session-token' };
const TABLE = 'koerier-idempotency';
const KEY = { pk: { S: 'idempotency#publisher-a#POST%20%2Fevents#k-1' } };

type Answer = (request: IncomingMessage, response: ServerResponse) => void;

let stub: AwsServiceStub;
let endpoint: string;
/** Answers to give first, in order; after them the server answers `{}` (an empty GetItem or PutItem). */
let faults: Answer[];
let seen: { target: string; authorization: string; body: string }[];

const json =
  (status: number, body: object): Answer =>
  (_, response) =>
    void response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify(body));
const dynamoError = (status: number, code: string, message?: string, extra: object = {}): Answer =>
  json(status, { __type: `com.amazonaws.dynamodb.v20120810#${code}`, ...(message === undefined ? {} : { message }), ...extra });
const THROTTLED = dynamoError(400, 'ProvisionedThroughputExceededException', 'The level of configured provisioned throughput for the table was exceeded.');

beforeAll(async () => {
  stub = await startAwsServiceStub((request, response, body) => {
    seen.push({ target: String(request.headers['x-amz-target']), authorization: String(request.headers['authorization']), body });
    (faults.shift() ?? json(200, {}))(request, response);
  });
  endpoint = stub.endpoint;
});
afterAll(() => stub.close());
beforeEach(() => {
  faults = [];
  seen = [];
});

const lean = (options: { maxAttempts?: number } = {}) => new DynamoDbRequests({ region: 'eu-west-1', endpoint, credentials: CREDENTIALS, ...options });
const sdkClient = () => new sdk.DynamoDBClient({ region: 'eu-west-1', endpoint, credentials: CREDENTIALS });
const putInput = {
  TableName: TABLE,
  Item: { ...KEY, state: { S: 'in-progress' } },
  ConditionExpression: 'attribute_not_exists(pk)',
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
};

/** Whatever `send` rejects with. */
async function failureOf(send: () => Promise<unknown>): Promise<Error> {
  try {
    await send();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the request to fail');
}

/**
 * No error says more than DynamoDB did: not the endpoint, the credentials, the signature or the
 * input. (ConditionalCheckFailedException's `Item` is DynamoDB's answer, as the SDK's carries it.)
 */
function expectNothingSecret(error: Error): void {
  const { Item: _, ...members } = error as Error & { Item?: unknown };
  const said = `${error.message} ${error.stack ?? ''} ${JSON.stringify(members)}`;
  for (const secret of [...Object.values(CREDENTIALS), 'Signature=', 'Credential=', '127.0.0.1', KEY.pk.S, 'attribute_not_exists'])
    expect(said).not.toContain(secret);
}

describe('issue 15, item 4: the lean DynamoDB client and DynamoDB errors', () => {
  it('issue 15: ConditionalCheckFailedException carries the item that stood in the way, binary attributes as bytes, as the SDK reads it', async () => {
    const answer = () =>
      dynamoError(400, 'ConditionalCheckFailedException', 'The conditional request failed', {
        Item: { ...KEY, state: { S: 'completed' }, wrapped: { B: Buffer.from([1, 2, 250]).toString('base64') }, list: { L: [{ B: 'AAE=' }] } },
      });
    faults = [answer(), answer()];
    const client = lean();
    const error = await failureOf(() => client.send(new PutItemCommand(putInput)));
    const sdkError = await failureOf(() => sdkClient().send(new sdk.PutItemCommand(putInput)));
    client.destroy();
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect(sdkError).toBeInstanceOf(sdk.ConditionalCheckFailedException);
    const read = error as ConditionalCheckFailedException;
    const sdkRead = sdkError as sdk.ConditionalCheckFailedException;
    expect([read.name, read.message, read.$fault, read.$metadata.httpStatusCode]).toEqual([
      sdkRead.name,
      sdkRead.message,
      sdkRead.$fault,
      sdkRead.$metadata.httpStatusCode,
    ]);
    expect(read.Item?.['state']).toEqual({ S: 'completed' });
    expect([...read.Item!['wrapped']!.B!]).toEqual([...sdkRead.Item!['wrapped']!.B!]);
    expect([...read.Item!['list']!.L![0]!.B!]).toEqual([0, 1]);
    expect(seen).toHaveLength(2);
    expectNothingSecret(error);
  });

  it('issue 15: throttling is retried with the SDK’s backoff and given up after the attempts allowed (3 here), named and worded as DynamoDB said', async () => {
    faults = [THROTTLED, THROTTLED, THROTTLED, THROTTLED];
    const client = lean({ maxAttempts: 3 });
    const error = await failureOf(() => client.send(new GetItemCommand({ TableName: TABLE, Key: KEY })));
    client.destroy();
    expect(error).toMatchObject({
      name: 'ProvisionedThroughputExceededException',
      message: 'The level of configured provisioned throughput for the table was exceeded.',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    expect(seen.map((request) => request.target)).toEqual(Array<string>(3).fill('DynamoDB_20120810.GetItem'));
    expectNothingSecret(error);
  }, 15_000);

  it('issue 15: by default a 500 is tried 4 times in all, as the SDK’s DynamoDB client tries it, and named Unknown/UnknownError when DynamoDB names nothing', async () => {
    const unnamed: Answer = (_, response) => void response.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' }).end('');
    faults = Array<Answer>(4).fill(unnamed);
    const client = lean();
    const error = await failureOf(() => client.send(new GetItemCommand({ TableName: TABLE, Key: KEY })));
    client.destroy();
    const ours = seen.length;
    faults = Array<Answer>(4).fill(unnamed);
    const sdkError = (await failureOf(() => sdkClient().send(new sdk.GetItemCommand({ TableName: TABLE, Key: KEY })))) as sdk.DynamoDBServiceException;
    expect(ours).toBe(4);
    expect(seen.length - ours).toBe(sdkError.$metadata.attempts);
    expect([error.name, error.message]).toEqual([sdkError.name, sdkError.message]);
    expect(error).toMatchObject({ name: 'Unknown', message: 'UnknownError', $fault: 'server', $metadata: { httpStatusCode: 500 } });
  });

  it('issue 15: a throttled request that then succeeds answers as if it had not been throttled', async () => {
    faults = [THROTTLED, dynamoError(400, 'ThrottlingException', 'Rate of requests exceeds the allowed throughput.')];
    const client = lean();
    expect(await client.send(new GetItemCommand({ TableName: TABLE, Key: KEY }))).toEqual({});
    client.destroy();
    expect(seen).toHaveLength(3);
  }, 15_000);

  it('issue 15: a 501 is not retried', async () => {
    faults = [dynamoError(501, 'NotImplemented', 'not here')];
    const client = lean();
    const error = await failureOf(() => client.send(new GetItemCommand({ TableName: TABLE, Key: KEY })));
    client.destroy();
    expect(error).toMatchObject({ name: 'NotImplemented', message: 'not here', $metadata: { httpStatusCode: 501 } });
    expect(seen).toHaveLength(1);
  });

  it('issue 15: a client error (ValidationException, worded in `Message`) is not retried and keeps DynamoDB’s words, which the route index reads', async () => {
    faults = [json(400, { __type: 'com.amazon.coral.validate#ValidationException', Message: 'Item size has exceeded the maximum allowed size' })];
    const client = lean();
    const error = await failureOf(() => client.send(new PutItemCommand(putInput)));
    client.destroy();
    expect(error).not.toBeInstanceOf(ConditionalCheckFailedException);
    expect(error).toMatchObject({ name: 'ValidationException', message: 'Item size has exceeded the maximum allowed size', $fault: 'client' });
    expect(seen).toHaveLength(1);
    expectNothingSecret(error);
  });

  it('issue 15: the retry quota runs out while DynamoDB keeps failing, and successes earn it back, request for request as the SDK’s client', async () => {
    const unavailable: Answer = (_, response) => void response.writeHead(503, { 'content-type': 'application/x-amz-json-1.0' }).end('');
    // 14 failing reads, 4 that succeed, 2 failing ones: the attempts each took, on one client.
    const phases = [...Array<boolean>(14).fill(true), ...Array<boolean>(4).fill(false), true, true];
    const attemptsPerRead = async (send: () => Promise<unknown>): Promise<number[]> => {
      const attempts: number[] = [];
      for (const failing of phases) {
        faults = failing ? Array<Answer>(8).fill(unavailable) : [];
        const before = seen.length;
        await send().catch(() => undefined);
        attempts.push(seen.length - before);
      }
      return attempts;
    };
    const client = lean();
    const ours = await attemptsPerRead(() => client.send(new GetItemCommand({ TableName: TABLE, Key: KEY })));
    client.destroy();
    const sdkDynamoDb = sdkClient();
    const theirs = await attemptsPerRead(() => sdkDynamoDb.send(new sdk.GetItemCommand({ TableName: TABLE, Key: KEY })));
    sdkDynamoDb.destroy();
    // 500 tokens at 14 a retry: eleven reads retried in full (4 attempts), the twelfth twice, then none; four successes give back 4, one retry.
    expect(ours).toEqual([...Array<number>(11).fill(4), 3, 1, 1, 1, 1, 1, 1, 2, 1]);
    expect(ours).toEqual(theirs);
  }, 30_000);

  it('issue 15: a connection broken mid-request is retried, and every attempt is observed', async () => {
    faults = [(request) => request.socket.destroy()];
    const client = lean();
    const attempts: unknown[] = [];
    client.observeAttempts((attempt) => attempts.push(attempt));
    expect(await client.send(new GetItemCommand({ TableName: TABLE, Key: KEY }))).toEqual({});
    client.destroy();
    expect(seen).toHaveLength(2);
    const requestBytes = JSON.stringify({ TableName: TABLE, Key: KEY }).length;
    expect(attempts).toEqual([
      { operation: 'GetItem', requestBytes },
      { operation: 'GetItem', requestBytes, responseBytes: 2 },
    ]);
  });

  it('issue 15: a proxy’s HTML 502 page is retried as a transient failure, then named Unknown with the status, not a JSON parse error', async () => {
    const page: Answer = (_, response) =>
      void response.writeHead(502, { 'content-type': 'text/html' }).end('<html><body><h1>502 Bad Gateway</h1></body></html>');
    faults = Array<Answer>(4).fill(page);
    const client = lean();
    const error = await failureOf(() => client.send(new PutItemCommand(putInput)));
    client.destroy();
    expect(error).toMatchObject({ name: 'Unknown', message: 'UnknownError', $fault: 'server', $metadata: { httpStatusCode: 502 } });
    expect(seen).toHaveLength(4);
    expectNothingSecret(error);
  });

  it('issue 15: call observers may change the input (the cost bench asks for ConsumedCapacity) and read the answer', async () => {
    faults = [json(200, { ConsumedCapacity: { TableName: TABLE, CapacityUnits: 1 } })];
    const client = lean();
    const answers: unknown[] = [];
    client.observeCalls({
      beforeCall: (_, input) => ({ ...input, ReturnConsumedCapacity: 'TOTAL' }),
      afterCall: (operation, _, output) => answers.push([operation, output]),
    });
    await client.send(new PutItemCommand(putInput));
    client.destroy();
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ ReturnConsumedCapacity: 'TOTAL' });
    expect(answers).toEqual([['PutItem', { ConsumedCapacity: { TableName: TABLE, CapacityUnits: 1 } }]]);
  });
});
