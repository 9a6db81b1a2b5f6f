/**
 * The lean DynamoDB client (functions/aws/dynamodb-requests.ts) against the real
 * @aws-sdk/client-dynamodb: each operation the adapters send, with the same input, the same fixed
 * clock and credentials, must go out as the same signed request (method, URL, body bytes, every
 * signed header) and read the same answer (issue 15, item 4). dynalite checks no signature, so
 * this is what shows AWS would accept ours.
 *
 * The inputs list their members in the order of DynamoDB's model, which is the order the SDK writes
 * them in; ours writes them as given. Left out of the SDK's signing, and never sent by ours:
 * `x-amz-user-agent`, `amz-sdk-invocation-id` and `amz-sdk-request`, and the unsigned `user-agent`.
 */
import { Readable } from 'node:stream';
import * as sdk from '@aws-sdk/client-dynamodb';
import type { HttpRequest as SmithyRequest } from '@smithy/types';
import { describe, expect, it, vi } from 'vitest';
import * as lean from '../../../functions/aws/dynamodb-requests.js';
import {
  captured,
  capturingRequestHandler,
  capturingTransport,
  expectSameSignedRequest,
  FIXED_CREDENTIALS,
  FIXED_NOW,
  jsonAnswer,
  signingAtFixedNow,
  withoutSdkOnlyHeaders,
  type CapturedRequest,
} from '../../support/sdk-request-capture.js';

const JSON_1_0 = { 'content-type': 'application/x-amz-json-1.0' };
const answering = (answer: object) => jsonAnswer(JSON_1_0['content-type'], () => answer);

function sdkClient(region: string, sent: CapturedRequest[], answer: object, endpoint?: string): sdk.DynamoDBClient {
  const requestHandler = capturingRequestHandler(sent, answering(answer));
  return withoutSdkOnlyHeaders(new sdk.DynamoDBClient({ region, credentials: FIXED_CREDENTIALS, ...(endpoint ? { endpoint } : {}), requestHandler }));
}

function leanClient(region: string, sent: CapturedRequest[], answer: object, endpoint?: string): lean.DynamoDbRequests {
  return new lean.DynamoDbRequests({
    region,
    credentials: FIXED_CREDENTIALS,
    ...(endpoint ? { endpoint } : {}),
    transport: capturingTransport(sent, answering(answer)),
  });
}

const TABLE = 'koerier-idempotency';
const KEY = { pk: { S: 'idempotency#publisher-a#POST%20%2Fevents#k-1' } };
const WRAPPED = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);

/** One case per operation the adapters send, with an input of the members they use and an answer. */
const cases: {
  name: string;
  sdk: (client: sdk.DynamoDBClient) => Promise<unknown>;
  lean: (client: lean.DynamoDbRequests) => Promise<unknown>;
  answer: object;
}[] = [
  (() => {
    const input = {
      TableName: TABLE,
      Item: {
        ...KEY,
        state: { S: 'in-progress' },
        expiresAt: { N: '1764160496' },
        wrapped: { B: WRAPPED },
        nested: { M: { list: { L: [{ B: Buffer.from('één') }, { BS: [Buffer.from([1]), Buffer.from([2, 3])] }, { NULL: true }, { BOOL: false }] } } },
        tags: { SS: ['a', 'b'] },
      },
      ConditionExpression: 'attribute_not_exists(pk) OR #lock < :now',
      ExpressionAttributeNames: { '#lock': 'lockExpiresAt' },
      ExpressionAttributeValues: { ':now': { N: '1764160496789' } },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
    return {
      name: 'PutItem with binary attributes at every depth and a condition',
      sdk: (c) => c.send(new sdk.PutItemCommand(input)),
      lean: (c) => c.send(new lean.PutItemCommand(input)),
      answer: {},
    };
  })(),
  (() => {
    // No byte array, but what the body's fast path looks for: a map attribute named B, and the text in a string.
    const input = {
      TableName: TABLE,
      Item: { ...KEY, B: { M: { B: { S: '"B":{ and "BS":[{' } } }, BS: { L: [{ M: { B: { N: '1' } } }] } },
    };
    return {
      name: 'PutItem without binary attributes, with members and strings that look like them',
      sdk: (c) => c.send(new sdk.PutItemCommand(input)),
      lean: (c) => c.send(new lean.PutItemCommand(input)),
      answer: {},
    };
  })(),
  (() => {
    const input = { TableName: TABLE, Key: KEY, ConsistentRead: true, ProjectionExpression: '#s, wrapped', ExpressionAttributeNames: { '#s': 'state' } };
    const answer = {
      Item: { ...KEY, state: { S: 'completed' }, wrapped: { B: WRAPPED.toString('base64') }, set: { BS: [Buffer.from([9]).toString('base64')] } },
    };
    return {
      name: 'GetItem, consistent, and the binary attributes it reads',
      sdk: (c) => c.send(new sdk.GetItemCommand(input)),
      lean: (c) => c.send(new lean.GetItemCommand(input)),
      answer,
    };
  })(),
  (() => {
    const input = {
      TableName: TABLE,
      Key: KEY,
      ReturnValues: 'ALL_NEW' as const,
      UpdateExpression: 'SET #s = :done, #b = :body REMOVE lockExpiresAt ADD #n :one',
      ConditionExpression: '#c = :claim',
      ExpressionAttributeNames: { '#s': 'state', '#b': 'body', '#n': 'count', '#c': 'claimId' },
      ExpressionAttributeValues: { ':done': { S: 'completed' }, ':body': { S: '{"accepted":[]}' }, ':one': { N: '1' }, ':claim': { S: 'c-1' } },
    };
    const answer = { Attributes: { ...KEY, count: { N: '2' } } };
    return {
      name: 'UpdateItem with a condition and ALL_NEW',
      sdk: (c) => c.send(new sdk.UpdateItemCommand(input)),
      lean: (c) => c.send(new lean.UpdateItemCommand(input)),
      answer,
    };
  })(),
  (() => {
    const input = {
      TableName: TABLE,
      Key: KEY,
      ConditionExpression: '#o = :owner',
      ExpressionAttributeNames: { '#o': 'owner' },
      ExpressionAttributeValues: { ':owner': { S: 'p-1' } },
    };
    return {
      name: 'DeleteItem with a condition',
      sdk: (c) => c.send(new sdk.DeleteItemCommand(input)),
      lean: (c) => c.send(new lean.DeleteItemCommand(input)),
      answer: {},
    };
  })(),
  (() => {
    const input = {
      TableName: 'koerier-deliveries',
      IndexName: 'byState',
      Limit: 25,
      ConsistentRead: false,
      ScanIndexForward: false,
      ExclusiveStartKey: { pk: { S: 'sub#1' }, sk: { S: 'attempt#0042' } },
      FilterExpression: 'attribute_exists(#r)',
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeNames: { '#r': 'record' },
      ExpressionAttributeValues: { ':pk': { S: 'sub#1' }, ':prefix': { S: 'attempt#' } },
    };
    const answer = {
      Items: [{ pk: { S: 'sub#1' }, sk: { S: 'attempt#0041' } }],
      Count: 1,
      ScannedCount: 1,
      LastEvaluatedKey: { pk: { S: 'sub#1' }, sk: { S: 'attempt#0041' } },
    };
    return {
      name: 'Query of an index, backwards, from a start key',
      sdk: (c) => c.send(new sdk.QueryCommand(input)),
      lean: (c) => c.send(new lean.QueryCommand(input)),
      answer,
    };
  })(),
  (() => {
    const input = {
      TableName: 'koerier-subscriptions',
      ExclusiveStartKey: { id: { S: 's-9' } },
      ProjectionExpression: 'id',
      FilterExpression: '#d = :pull',
      ExpressionAttributeNames: { '#d': 'delivery' },
      ExpressionAttributeValues: { ':pull': { S: 'pull' } },
    };
    const answer = { Items: [{ id: { S: 's-10' } }], Count: 1, ScannedCount: 4 };
    return {
      name: 'Scan with a filter from a start key',
      sdk: (c) => c.send(new sdk.ScanCommand(input)),
      lean: (c) => c.send(new lean.ScanCommand(input)),
      answer,
    };
  })(),
  (() => {
    const input = {
      RequestItems: {
        'koerier-routes': {
          Keys: [
            { routeKey: { S: 'type#a' }, subscriptionId: { S: '#head' } },
            { routeKey: { S: 'type#b' }, subscriptionId: { S: '#head' } },
          ],
          ConsistentRead: true,
        },
      },
    };
    const answer = {
      Responses: { 'koerier-routes': [{ routeKey: { S: 'type#a' }, subscriptionId: { S: '#head' } }] },
      UnprocessedKeys: { 'koerier-routes': { Keys: [{ routeKey: { S: 'type#b' }, subscriptionId: { S: '#head' } }], ConsistentRead: true } },
    };
    return {
      name: 'BatchGetItem, and the keys it leaves unprocessed',
      sdk: (c) => c.send(new sdk.BatchGetItemCommand(input)),
      lean: (c) => c.send(new lean.BatchGetItemCommand(input)),
      answer,
    };
  })(),
  (() => {
    const input = {
      RequestItems: {
        'koerier-deliveries': [
          { PutRequest: { Item: { pk: { S: 'sub#1' }, sk: { S: 'attempt#0043' }, status: { N: '503' } } } },
          { DeleteRequest: { Key: { pk: { S: 'sub#1' }, sk: { S: 'attempt#0001' } } } },
        ],
      },
    };
    const answer = { UnprocessedItems: { 'koerier-deliveries': [{ DeleteRequest: { Key: { pk: { S: 'sub#1' }, sk: { S: 'attempt#0001' } } } }] } };
    return {
      name: 'BatchWriteItem of puts and deletes, and what it leaves unprocessed',
      sdk: (c) => c.send(new sdk.BatchWriteItemCommand(input)),
      lean: (c) => c.send(new lean.BatchWriteItemCommand(input)),
      answer,
    };
  })(),
];

/** The SDK's output without its `$metadata`, which ours does not carry: nothing reads it. */
function withoutMetadata(output: unknown): unknown {
  const { $metadata: _, ...rest } = output as Record<string, unknown>;
  return rest;
}

describe('issue 15, item 4: the lean DynamoDB client signs and reads as @aws-sdk/client-dynamodb does', () => {
  signingAtFixedNow();

  for (const operation of cases) {
    it(`issue 15: ${operation.name}`, async () => {
      const ours: CapturedRequest[] = [];
      const theirs: CapturedRequest[] = [];
      const read = await operation.lean(leanClient('eu-west-1', ours, operation.answer));
      const sdkRead = await operation.sdk(sdkClient('eu-west-1', theirs, operation.answer));
      expectSameSignedRequest(ours[0]!, theirs[0]!, ['x-amz-target', 'content-type']);
      expect(ours[0]!.url).toBe('https://dynamodb.eu-west-1.amazonaws.com/');
      // Bytes compare as bytes: the SDK reads B as a Uint8Array, ours as a Buffer over the same bytes.
      expect(JSON.parse(JSON.stringify(read, bytesAsArrays))).toEqual(JSON.parse(JSON.stringify(withoutMetadata(sdkRead), bytesAsArrays)));
    });
  }

  it('issue 15: a request to an AWS_ENDPOINT_URL_DYNAMODB-style endpoint in us-east-1 (the laptop, the tests)', async () => {
    const ours: CapturedRequest[] = [];
    const theirs: CapturedRequest[] = [];
    const endpoint = 'http://127.0.0.1:4567';
    const input = { TableName: TABLE, Key: KEY };
    await leanClient('us-east-1', ours, {}, endpoint).send(new lean.GetItemCommand(input));
    await sdkClient('us-east-1', theirs, {}, endpoint).send(new sdk.GetItemCommand(input));
    expectSameSignedRequest(ours[0]!, theirs[0]!, ['x-amz-target', 'content-type']);
    expect(ours[0]!.url).toBe('http://127.0.0.1:4567/');
  });
  it('issue 15: the signing key follows the day and the credentials (a provider rotating them, one set without a session token)', async () => {
    // The lean signer keeps the day's key: a new day, or new credentials, must give the SDK's signature again.
    const rotations = [
      { at: FIXED_NOW, credentials: { accessKeyId: 'AKIDFIRST', secretAccessKey: 'first-secret-key' } },
      { at: FIXED_NOW, credentials: FIXED_CREDENTIALS },
      { at: new Date(FIXED_NOW.getTime() + 24 * 3600 * 1000), credentials: FIXED_CREDENTIALS },
      { at: new Date(FIXED_NOW.getTime() + 24 * 3600 * 1000), credentials: { ...FIXED_CREDENTIALS, secretAccessKey: 'rotated-secret-key' } },
    ];
    let current = rotations[0]!.credentials;
    const provider = () => Promise.resolve(current);
    const ours: CapturedRequest[] = [];
    const theirs: CapturedRequest[] = [];
    const leanRequests = new lean.DynamoDbRequests({
      region: 'eu-west-1',
      credentials: provider,
      transport: async (request) => {
        ours.push(captured(request));
        return { statusCode: 200, headers: JSON_1_0, body: Buffer.from('{}') };
      },
    });
    const input = { TableName: TABLE, Key: KEY };
    for (const rotation of rotations) {
      vi.setSystemTime(rotation.at);
      current = rotation.credentials;
      await leanRequests.send(new lean.GetItemCommand(input));
      const sdkRequests = withoutSdkOnlyHeaders(
        new sdk.DynamoDBClient({
          region: 'eu-west-1',
          credentials: rotation.credentials,
          requestHandler: {
            handle: async (request: SmithyRequest) => {
              theirs.push(captured(request));
              return { response: { statusCode: 200, headers: JSON_1_0, body: Readable.from([Buffer.from('{}')]) } };
            },
          } as never,
        }),
      );
      await sdkRequests.send(new sdk.GetItemCommand(input));
    }
    expect(new Set(ours.map((request) => request.headers['authorization'])).size).toBe(rotations.length);
    rotations.forEach((_, index) => expectSameSignedRequest(ours[index]!, theirs[index]!, ['x-amz-target', 'content-type']));
    expect(ours[0]!.headers['x-amz-security-token']).toBeUndefined();
  });
});

function bytesAsArrays(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  return original instanceof Uint8Array ? { bytes: [...original] } : value;
}
