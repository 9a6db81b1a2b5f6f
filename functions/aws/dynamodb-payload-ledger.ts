/**
 * The payload ledger in DynamoDB: one item per claim-check object, `payload#<id>` in the
 * idempotency table, holding the publisher, the integrity attributes and the set of readers (the
 * owners of the subscriptions the event went to by reference). A fetch costs one GetItem.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
  DeleteItemCommand,
} from '@aws-sdk/client-dynamodb';
import { tables } from '../config/resources.js';
import {
  PayloadRecordConflictError,
  type PayloadLedger,
  type PayloadRecord,
  type UploadRecord,
} from '../core/claim-check/ports.js';

const KEY = tables.idempotency.partitionKey.name;
const TTL = tables.idempotency.ttlAttribute;
/** The item outlives its object by this, so a late fetch hears 410 (gone) rather than 404. */
export const RECORD_OUTLIVES_OBJECT_SECONDS = 30 * 24 * 3600;
/** `source` and `id` are kept for the fetch log only; this bounds the item whatever they are. */
const MAX_LOGGED_CHARACTERS = 1024;

export class DynamoDbPayloadLedger implements PayloadLedger {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async recordPayload(record: Omit<PayloadRecord, 'readers'>): Promise<void> {
    // An update, not a put: a retried publish of the same event keeps the readers recorded since.
    // Only onto nothing or the same data (issue 28, item 8): the id names the content, so another
    // digest here is a bug, never a record to replace.
    await this.client
      .send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [KEY]: { S: keyOf(record.payloadId) } },
          UpdateExpression:
            'SET objectKey = :objectKey, #source = :source, eventId = :eventId, publisher = :publisher, digest = :digest, #size = :size, contentType = :contentType, objectExpiresAt = :objectExpiresAt, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(#key) OR digest = :digest',
          ExpressionAttributeNames: { '#key': KEY, '#source': 'source', '#size': 'size', '#ttl': TTL },
          ExpressionAttributeValues: {
            ':objectKey': { S: record.objectKey },
            ':source': { S: record.source.slice(0, MAX_LOGGED_CHARACTERS) },
            ':eventId': { S: record.eventId.slice(0, MAX_LOGGED_CHARACTERS) },
            ':publisher': { S: record.publisher },
            ':digest': { S: record.digest },
            ':size': { N: String(record.size) },
            ':contentType': { S: record.contentType.slice(0, MAX_LOGGED_CHARACTERS) },
            ':objectExpiresAt': { N: String(record.objectExpiresAt) },
            ':ttl': { N: String(Math.ceil(record.objectExpiresAt / 1000) + RECORD_OUTLIVES_OBJECT_SECONDS) },
          },
        }),
      )
      .catch((error: unknown) => {
        throw error instanceof ConditionalCheckFailedException
          ? new PayloadRecordConflictError(record.payloadId)
          : error;
      });
  }

  async addReaders(payloadId: string, owners: readonly string[]): Promise<void> {
    if (owners.length === 0) return;
    // Only onto a recorded payload: a reader of nothing would make an item without expiry.
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: { [KEY]: { S: keyOf(payloadId) } },
        UpdateExpression: 'ADD readers :owners',
        ConditionExpression: 'attribute_exists(#key)',
        ExpressionAttributeNames: { '#key': KEY },
        ExpressionAttributeValues: { ':owners': { SS: [...new Set(owners)] } },
      }),
    );
  }

  async recordUpload(upload: UploadRecord): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: {
          [KEY]: { S: uploadKeyOf(upload.uploadId) },
          publisher: { S: upload.publisher },
          size: { N: String(upload.size) },
          digest: { S: upload.digest },
          contentType: { S: upload.contentType },
          uploadExpiresAt: { N: String(upload.expiresAt) },
          [TTL]: { N: String(Math.ceil(upload.expiresAt / 1000)) },
        },
      }),
    );
  }

  async getUpload(uploadId: string): Promise<UploadRecord | undefined> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { [KEY]: { S: uploadKeyOf(uploadId) } },
        ConsistentRead: true,
      }),
    );
    if (!item || item['publisher']?.S === undefined) return undefined;
    return {
      uploadId,
      publisher: item['publisher'].S,
      size: Number(item['size']?.N ?? -1),
      digest: item['digest']?.S ?? '',
      contentType: item['contentType']?.S ?? 'application/octet-stream',
      expiresAt: Number(item['uploadExpiresAt']?.N ?? 0),
    };
  }

  /** An erasure's (issue 31 item 4): the record names the event and its publisher; once the object is gone, a fetch answers 404. */
  async forget(payloadId: string): Promise<void> {
    await this.client.send(
      new DeleteItemCommand({ TableName: this.tableName, Key: { [KEY]: { S: keyOf(payloadId) } } }),
    );
  }

  async get(payloadId: string): Promise<PayloadRecord | undefined> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: { [KEY]: { S: keyOf(payloadId) } }, ConsistentRead: true }),
    );
    if (!item || item['publisher']?.S === undefined) return undefined;
    return {
      payloadId,
      objectKey: item['objectKey']?.S ?? `payloads/${payloadId}`,
      source: item['source']?.S ?? '',
      eventId: item['eventId']?.S ?? '',
      publisher: item['publisher'].S,
      digest: item['digest']?.S ?? '',
      size: Number(item['size']?.N ?? 0),
      contentType: item['contentType']?.S ?? 'application/octet-stream',
      objectExpiresAt: Number(item['objectExpiresAt']?.N ?? 0),
      readers: item['readers']?.SS ?? [],
    };
  }
}

/** Uploads live in the same table, `upload#<id>`, as long as their object may. */
function uploadKeyOf(uploadId: string): string {
  return `upload#${uploadId}`;
}

function keyOf(payloadId: string): string {
  return `payload#${payloadId}`;
}
