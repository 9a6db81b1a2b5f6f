/**
 * The SQS requests Koerier sends, signed with SigV4 and sent over node:http(s), in place of
 * @aws-sdk/client-sqs: the SDK client with @smithy/core and @aws-sdk/core was a large part of every
 * bundle and of every cold import, and about 1 ms of CPU per call (issue 15, item 4). The command
 * classes carry the SDK's names and its input and output types (type-only imports, nothing in a
 * bundle), so the adapters changed only their import line.
 * test/unit/aws/sqs-requests-signing.test.ts signs the same requests with the SDK and with this
 * and compares them; sqs-requests-answers.test.ts reads SQS's answers as the SDK reads them.
 *
 * SQS speaks JSON 1.0 (./aws-json-protocol.ts): `POST /` with `X-Amz-Target: AmazonSQS.<Operation>`
 * and `x-amzn-query-mode: true`, which asks for the query-compatible error code besides `__type`.
 *
 * What @aws-sdk/middleware-sdk-sqs adds to the standard, and what is mirrored here:
 * - the MD5 of each message body on SendMessage, SendMessageBatch and ReceiveMessage (on by default
 *   in the SDK): mirrored, with the SDK's errors, thrown after the answer and not retried, as the
 *   SDK's are. The MD5 of message attributes the SDK does not check, nor does this.
 * - requests to the queue URL's host when the endpoint was not given to the constructor (it came
 *   from AWS_ENDPOINT_URL_SQS or the region): mirrored; an endpoint given to the constructor wins,
 *   as in the SDK. The SDK's console warning about it is left out.
 * - the long-poll retry scope of ReceiveMessage: left out, the lean clients have no retry quota.
 */
import { createHash } from 'node:crypto';
import type * as Sqs from '@aws-sdk/client-sqs';
import { JsonCommand, LeanJsonClient, text, type JsonFailure, type LeanJsonClientOptions } from './aws-json-protocol.js';

export type SqsRequestsOptions = LeanJsonClientOptions;

/** An SQS operation with its input. */
export type SqsCommand<Input extends object, Output extends object> = JsonCommand<Input, Output>;

// Exactly the operations Koerier and its laptop host send.
export class SendMessageCommand extends JsonCommand<Sqs.SendMessageRequest, Sqs.SendMessageResult> {
  readonly operation = 'SendMessage';
}
export class SendMessageBatchCommand extends JsonCommand<Sqs.SendMessageBatchRequest, Sqs.SendMessageBatchResult> {
  readonly operation = 'SendMessageBatch';
}
export class ReceiveMessageCommand extends JsonCommand<Sqs.ReceiveMessageRequest, Sqs.ReceiveMessageResult> {
  readonly operation = 'ReceiveMessage';
}
export class DeleteMessageBatchCommand extends JsonCommand<Sqs.DeleteMessageBatchRequest, Sqs.DeleteMessageBatchResult> {
  readonly operation = 'DeleteMessageBatch';
}
export class ChangeMessageVisibilityBatchCommand extends JsonCommand<Sqs.ChangeMessageVisibilityBatchRequest, Sqs.ChangeMessageVisibilityBatchResult> {
  readonly operation = 'ChangeMessageVisibilityBatch';
}
export class CreateQueueCommand extends JsonCommand<Sqs.CreateQueueRequest, Sqs.CreateQueueResult> {
  readonly operation = 'CreateQueue';
}
export class DeleteQueueCommand extends JsonCommand<Sqs.DeleteQueueRequest, object> {
  readonly operation = 'DeleteQueue';
}
export class GetQueueAttributesCommand extends JsonCommand<Sqs.GetQueueAttributesRequest, Sqs.GetQueueAttributesResult> {
  readonly operation = 'GetQueueAttributes';
}
export class GetQueueUrlCommand extends JsonCommand<Sqs.GetQueueUrlRequest, Sqs.GetQueueUrlResult> {
  readonly operation = 'GetQueueUrl';
}
export class SetQueueAttributesCommand extends JsonCommand<Sqs.SetQueueAttributesRequest, object> {
  readonly operation = 'SetQueueAttributes';
}

/**
 * The error names of SQS's model, and the query-compatible codes (`x-amzn-query-error`) that stand
 * for them: the SDK names an error by its model name where the code is one of these.
 */
const MODEL_ERRORS_BY_QUERY_CODE: Readonly<Record<string, string>> = {
  'AWS.SimpleQueueService.BatchEntryIdsNotDistinct': 'BatchEntryIdsNotDistinct',
  'AWS.SimpleQueueService.BatchRequestTooLong': 'BatchRequestTooLong',
  'AWS.SimpleQueueService.EmptyBatchRequest': 'EmptyBatchRequest',
  InvalidAddress: 'InvalidAddress',
  'AWS.SimpleQueueService.InvalidBatchEntryId': 'InvalidBatchEntryId',
  InvalidSecurity: 'InvalidSecurity',
  'KMS.AccessDeniedException': 'KmsAccessDenied',
  'KMS.DisabledException': 'KmsDisabled',
  'KMS.InvalidKeyUsageException': 'KmsInvalidKeyUsage',
  'KMS.InvalidStateException': 'KmsInvalidState',
  'KMS.NotFoundException': 'KmsNotFound',
  'KMS.OptInRequired': 'KmsOptInRequired',
  'KMS.ThrottlingException': 'KmsThrottled',
  'AWS.SimpleQueueService.MessageNotInflight': 'MessageNotInflight',
  OverLimit: 'OverLimit',
  'AWS.SimpleQueueService.PurgeQueueInProgress': 'PurgeQueueInProgress',
  'AWS.SimpleQueueService.QueueDeletedRecently': 'QueueDeletedRecently',
  'AWS.SimpleQueueService.NonExistentQueue': 'QueueDoesNotExist',
  QueueAlreadyExists: 'QueueNameExists',
  ReceiptHandleIsInvalid: 'ReceiptHandleIsInvalid',
  RequestThrottled: 'RequestThrottled',
  ResourceNotFoundException: 'ResourceNotFoundException',
  'AWS.SimpleQueueService.TooManyEntriesInBatchRequest': 'TooManyEntriesInBatchRequest',
  'AWS.SimpleQueueService.UnsupportedOperation': 'UnsupportedOperation',
};
/** Model errors SQS names by `__type` alone. */
const OTHER_MODEL_ERRORS = ['InvalidAttributeName', 'InvalidAttributeValue', 'InvalidIdFormat', 'InvalidMessageContents'];

/**
 * The SDK's name for an error code: the model's name where the code is a model error's name or its
 * query-compatible code, else the code. Only literals at the top level, so a bundle without SQS drops them.
 */
function errorName(code: string): string {
  if (OTHER_MODEL_ERRORS.includes(code) || Object.values(MODEL_ERRORS_BY_QUERY_CODE).includes(code)) return code;
  return MODEL_ERRORS_BY_QUERY_CODE[code] ?? code;
}

/**
 * A non-2xx answer, named as the SDK names it (`name`: `QueueDoesNotExist` for SQS's
 * `AWS.SimpleQueueService.NonExistentQueue`); the message is SQS's, as the SDK's is, never the URL,
 * a header or the credentials.
 */
export class SqsRequestError extends Error {
  constructor(
    readonly operation: string,
    name: string,
    /** The query-compatible code (`AWS.SimpleQueueService.NonExistentQueue`), else the name. */
    readonly code: string,
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = name;
  }
}

export class SqsRequests extends LeanJsonClient {
  readonly serviceName = 'SQS';
  private readonly queueUrlIsEndpoint: boolean;

  constructor(options: SqsRequestsOptions = {}) {
    super(options, {
      service: 'sqs',
      endpointVariable: 'SQS',
      version: '1.0',
      targetPrefix: 'AmazonSQS',
      headers: { 'x-amzn-query-mode': 'true' },
      serverErrorCode: 'Unknown',
    });
    this.queueUrlIsEndpoint = options.endpoint === undefined;
  }

  async send<Input extends object, Output extends object>(command: SqsCommand<Input, Output>): Promise<Output> {
    const { operation } = command;
    const input = command.input as Record<string, unknown>;
    const output = await this.callJson(operation, withBinaryAttributesEncoded(operation, input), JSON.stringify, this.endpointFor(input['QueueUrl']));
    if (operation === 'SendMessage') checkSentBody(command.input as Sqs.SendMessageRequest, output);
    else if (operation === 'SendMessageBatch') checkSentBatch(command.input as Sqs.SendMessageBatchRequest, output as unknown as Sqs.SendMessageBatchResult);
    else if (operation === 'ReceiveMessage') receivedMessages(output);
    return output as Output;
  }

  /** The queue URL's origin where it is not the endpoint's, as the SDK's queueUrlMiddleware does. */
  private endpointFor(queueUrl: unknown): URL {
    // The usual case without parsing: the queue URL is on the endpoint's host.
    if (!this.queueUrlIsEndpoint || typeof queueUrl !== 'string' || queueUrl.startsWith(`${this.endpoint.origin}/`)) return this.endpoint;
    let origin: string;
    try {
      origin = new URL(queueUrl).origin;
    } catch {
      return this.endpoint;
    }
    return origin === this.endpoint.origin ? this.endpoint : new URL(origin);
  }

  protected failure({ operation, statusCode, headers, answer }: JsonFailure): Error {
    const queryCode = headers['x-amzn-query-error']?.split(';')[0];
    const identifier = sanitized(queryCode ?? text(answer['code']) ?? headers['x-amzn-errortype'] ?? text(answer['__type'])) ?? 'Unknown';
    const name = errorName(identifier);
    const message = text(answer['message']) ?? text(answer['Message']) ?? 'UnknownError';
    return new SqsRequestError(operation, name, queryCode ?? name, statusCode, message);
  }
}

/** As the SDK cleans an error code: the first of a list, without a `:uri` suffix or a `namespace#` prefix. */
function sanitized(raw: string | undefined): string | undefined {
  return raw?.split(',')[0]?.split(':')[0]?.split('#').at(-1) || undefined;
}

function md5Hex(body: string | undefined): string {
  return createHash('md5')
    .update(body ?? '', 'utf8')
    .digest('hex');
}

function checkSentBody(input: Sqs.SendMessageRequest, output: Sqs.SendMessageResult): void {
  if (output.MD5OfMessageBody !== md5Hex(input.MessageBody)) throw new Error('InvalidChecksumError');
}

function checkSentBatch(input: Sqs.SendMessageBatchRequest, output: Sqs.SendMessageBatchResult): void {
  const sent = new Map((input.Entries ?? []).map((entry) => [entry.Id, entry.MessageBody]));
  const wrong = (output.Successful ?? []).filter((entry) => sent.has(entry.Id) && entry.MD5OfMessageBody !== md5Hex(sent.get(entry.Id)));
  if (wrong.length > 0) throw new Error(`Invalid MD5 checksum on messages: ${wrong.map((entry) => entry.MessageId).join(', ')}`);
}

/** Checks each body's MD5 and turns binary attribute values (base64 in JSON) into bytes, as the SDK does. */
function receivedMessages(output: Sqs.ReceiveMessageResult): void {
  const messages = output.Messages ?? [];
  const wrong = messages.filter((message) => message.MD5OfBody !== md5Hex(message.Body));
  if (wrong.length > 0) throw new Error(`Invalid MD5 checksum on messages: ${wrong.map((message) => message.MessageId).join(', ')}`);
  for (const message of messages) if (message.MessageAttributes) decodeBinaryValues(message.MessageAttributes);
}

function decodeBinaryValues(attributes: Record<string, Sqs.MessageAttributeValue>): void {
  for (const value of Object.values(attributes)) {
    const raw = value as { BinaryValue?: unknown; BinaryListValues?: unknown[] };
    if (typeof raw.BinaryValue === 'string') value.BinaryValue = Buffer.from(raw.BinaryValue, 'base64');
    if (Array.isArray(raw.BinaryListValues)) value.BinaryListValues = raw.BinaryListValues.map((item) => Buffer.from(String(item), 'base64'));
  }
}

type AttributeMap = Record<string, Sqs.MessageAttributeValue> | undefined;

/** The input with binary attribute values in base64, as JSON carries them; the input itself where it has none (Koerier sends strings). */
function withBinaryAttributesEncoded(operation: string, input: Record<string, unknown>): Record<string, unknown> {
  if (operation === 'SendMessage') {
    const message = input as unknown as Sqs.SendMessageRequest;
    return hasBinary(message.MessageAttributes) ? { ...input, MessageAttributes: encoded(message.MessageAttributes) } : input;
  }
  if (operation === 'SendMessageBatch') {
    const entries = (input as unknown as Sqs.SendMessageBatchRequest).Entries ?? [];
    if (!entries.some((entry) => hasBinary(entry.MessageAttributes))) return input;
    return {
      ...input,
      Entries: entries.map((entry) => (hasBinary(entry.MessageAttributes) ? { ...entry, MessageAttributes: encoded(entry.MessageAttributes) } : entry)),
    };
  }
  return input;
}

function hasBinary(attributes: AttributeMap): boolean {
  return attributes !== undefined && Object.values(attributes).some((value) => value.BinaryValue !== undefined || value.BinaryListValues !== undefined);
}

function encoded(attributes: AttributeMap): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    out[name] = {
      ...value,
      ...(value.BinaryValue === undefined ? {} : { BinaryValue: base64(value.BinaryValue) }),
      ...(value.BinaryListValues === undefined ? {} : { BinaryListValues: value.BinaryListValues.map(base64) }),
    };
  }
  return out;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
