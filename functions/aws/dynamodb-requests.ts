/**
 * The DynamoDB requests Koerier sends, signed with SigV4 and sent over node:http(s), in place of
 * @aws-sdk/client-dynamodb (issue 15, item 4): the SDK client was 30–32 KB minified of every
 * function on top of the @smithy/core and @aws-sdk/core it shares with the SQS client, and about
 * 0.4–0.5 ms of CPU per call in its middleware stack and serde where this takes 0.05 ms
 * (bench/dynamodb-client.ts). The command classes carry the SDK's names and its input and output
 * types (type-only imports, nothing of the SDK in a bundle), so an adapter changes only its import
 * line. test/unit/aws/dynamodb-requests-signing.test.ts signs the same requests with the SDK and
 * with this and compares them.
 *
 * DynamoDB speaks JSON 1.0 (./aws-json-protocol.ts): `POST /` with
 * `X-Amz-Target: DynamoDB_20120810.<Operation>`. Binary attributes (`B`, `BS`; the lock token key
 * is one, ./lock-token-key.ts) go as base64 and come back as bytes, at any depth of `M` and `L`.
 *
 * What the SDK's DynamoDB client (3.1162) does beyond the standard, and what this does of it:
 * - retries: 4 attempts, not 3, and 25 ms as the first retry's ceiling after a transient answer
 *   (1 s after throttling, as every client of that release): mirrored. Its retry quota (the token
 *   bucket that stops retrying when many fail) is not: the lean base has none.
 * - account-id endpoints (`<account>.ddb.<region>.amazonaws.com`) when the credentials carry an
 *   account id: not mirrored; the regional endpoint serves every account, and Lambda's
 *   credentials name none.
 * - endpoint discovery: off by default in the SDK; not built.
 * - `x-amz-crc32`: the v3 SDK does not check it either; TLS guards the answer.
 */
// One line, so `grep "from '@aws-sdk/client-dynamodb'"` shows it for the type-only import it is.
import type * as Sdk from '@aws-sdk/client-dynamodb';
import { JsonCommand, LeanJsonClient, text, type JsonFailure, type LeanJsonClientOptions } from './aws-json-protocol.js';

export type DynamoDbRequestsOptions = LeanJsonClientOptions;

export class BatchGetItemCommand extends JsonCommand<Sdk.BatchGetItemInput, Sdk.BatchGetItemOutput> {
  readonly operation = 'BatchGetItem';
}
export class BatchWriteItemCommand extends JsonCommand<Sdk.BatchWriteItemInput, Sdk.BatchWriteItemOutput> {
  readonly operation = 'BatchWriteItem';
}
export class DeleteItemCommand extends JsonCommand<Sdk.DeleteItemInput, Sdk.DeleteItemOutput> {
  readonly operation = 'DeleteItem';
}
export class GetItemCommand extends JsonCommand<Sdk.GetItemInput, Sdk.GetItemOutput> {
  readonly operation = 'GetItem';
}
export class PutItemCommand extends JsonCommand<Sdk.PutItemInput, Sdk.PutItemOutput> {
  readonly operation = 'PutItem';
}
export class QueryCommand extends JsonCommand<Sdk.QueryInput, Sdk.QueryOutput> {
  readonly operation = 'Query';
}
export class ScanCommand extends JsonCommand<Sdk.ScanInput, Sdk.ScanOutput> {
  readonly operation = 'Scan';
}
export class UpdateItemCommand extends JsonCommand<Sdk.UpdateItemInput, Sdk.UpdateItemOutput> {
  readonly operation = 'UpdateItem';
}

/**
 * A DynamoDB error answer, as the SDK's DynamoDBServiceException carries it: `name` is DynamoDB's
 * code, `message` DynamoDB's message (`UnknownError` when it gave none, as the SDK says), `$fault`
 * and the status. Never the request, the URL or the credentials.
 */
export class DynamoDbServiceException extends Error {
  readonly $fault: 'client' | 'server';
  readonly $metadata: { readonly httpStatusCode: number };
  constructor(code: string, message: string, statusCode: number) {
    super(message);
    this.name = code;
    this.$fault = statusCode >= 500 ? 'server' : 'client';
    this.$metadata = { httpStatusCode: statusCode };
  }
}

/** A condition that did not hold; with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`, the item that stood in the way. */
export class ConditionalCheckFailedException extends DynamoDbServiceException {
  readonly Item?: Record<string, Sdk.AttributeValue>;
  constructor(message: string, statusCode: number, item: Record<string, Sdk.AttributeValue> | undefined) {
    super('ConditionalCheckFailedException', message, statusCode);
    if (item !== undefined) this.Item = item;
  }
}

export class DynamoDbRequests extends LeanJsonClient {
  /** The SDK client's service id, which X-Ray names its subsegments after (./tracing.ts). */
  readonly serviceName = 'DynamoDB';

  constructor(options: DynamoDbRequestsOptions = {}) {
    super(
      { maxAttempts: 4, ...options },
      {
        service: 'dynamodb',
        endpointVariable: 'DYNAMODB',
        version: '1.0',
        targetPrefix: 'DynamoDB_20120810',
        // What the SDK names a 5xx answer without a code.
        serverErrorCode: 'Unknown',
        retryCeilings: { transientMs: 25, throttlingMs: 1000 },
      },
    );
  }

  /**
   * Sends `command`'s input as it is: members in the order given (the SDK writes its model's
   * order; DynamoDB reads any), byte arrays as base64.
   */
  async send<Input extends object, Output>(command: JsonCommand<Input, Output>): Promise<Output> {
    return (await this.callJson(command.operation, command.input as Record<string, unknown>, withBinaryAsBase64)) as Output;
  }

  protected override parseAnswer(body: Buffer): Record<string, unknown> {
    if (body.length === 0) return {};
    const json = body.toString('utf8');
    // Most answers hold no binary attribute: they skip the reviver, which doubles the parse.
    const value: unknown = json.includes('"B') ? JSON.parse(json, binaryFromBase64) : JSON.parse(json);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  }

  protected failure({ code, statusCode, answer }: JsonFailure): Error {
    // A 4xx that names no code is as unknown to the SDK as a 5xx.
    const name = /^HTTP\d+$/.test(code) ? 'Unknown' : code;
    const message = text(answer['message']) ?? text(answer['Message']) ?? 'UnknownError';
    if (name === 'ConditionalCheckFailedException') {
      const item = answer['Item'];
      return new ConditionalCheckFailedException(message, statusCode, isObject(item) ? (reviveBinary(item) as Record<string, Sdk.AttributeValue>) : undefined);
    }
    return new DynamoDbServiceException(name, message, statusCode);
  }
}

/** The body: byte arrays (a Buffer's own `toJSON` runs before a replacer sees it, so the holder's value is read) as base64. */
function withBinaryAsBase64(input: Record<string, unknown>): string {
  return JSON.stringify(input, function (this: Record<string, unknown>, key: string, value: unknown) {
    const original = this[key];
    return original instanceof Uint8Array ? Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64') : value;
  });
}

/**
 * An attribute value is an object of one member: `{ "B": "<base64>" }` and `{ "BS": [...] }` are
 * the binary ones. No other structure of DynamoDB's answers is an object whose one member is a
 * string `B` or a string list `BS`, so what is inside a map attribute named `B` stays as it is.
 */
function binaryFromBase64(_key: string, value: unknown): unknown {
  if (!isObject(value)) return value;
  const keys = Object.keys(value);
  if (keys.length !== 1) return value;
  if (keys[0] === 'B' && typeof value['B'] === 'string') return { B: Buffer.from(value['B'], 'base64') };
  if (keys[0] === 'BS' && Array.isArray(value['BS']) && value['BS'].every((entry) => typeof entry === 'string')) {
    return { BS: (value['BS'] as string[]).map((entry) => Buffer.from(entry, 'base64')) };
  }
  return value;
}

/** `binaryFromBase64` over an already parsed value, depth first as JSON.parse revives. */
function reviveBinary(value: unknown): unknown {
  if (Array.isArray(value)) return binaryFromBase64('', value.map(reviveBinary));
  if (!isObject(value)) return value;
  return binaryFromBase64('', Object.fromEntries(Object.entries(value).map(([key, member]) => [key, reviveBinary(member)])));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
