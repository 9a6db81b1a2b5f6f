/**
 * The partner directory (functions/core/partners) in the `partners` table: one item holds every
 * partner as JSON with the directory's revision, written by a PutItem conditional on the revision
 * it was read at. One consistent GetItem per refresh of a function's cache; a change is checked
 * against every partner and stored atomically, with no transaction (dynalite has none either).
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  PutItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { tables } from '../config/resources.js';
import { EMPTY_DIRECTORY, type DirectoryState, type Partner } from '../core/partners/partner.js';
import {
  DirectoryChangedError,
  DirectoryTooLargeError,
  MAX_DIRECTORY_BYTES,
  type PartnerStore,
} from '../core/partners/ports.js';

/** The one item's key: the table leaves room for more documents later. */
const DIRECTORY_KEY = 'directory';

export class DynamoDbPartnerStore implements PartnerStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  async load(): Promise<DirectoryState> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({
        TableName: this.tableName,
        Key: { [tables.partners.partitionKey.name]: { S: DIRECTORY_KEY } },
        ConsistentRead: true,
      }),
    );
    if (!item) return EMPTY_DIRECTORY;
    return {
      revision: Number(item['revision']?.N ?? '0'),
      ...(item['seed']?.S === undefined ? {} : { seed: item['seed'].S }),
      partners: JSON.parse(item['partners']?.S ?? '[]') as Partner[],
    };
  }

  async save(next: DirectoryState, expectedRevision: number): Promise<void> {
    const partners = JSON.stringify(next.partners);
    if (Buffer.byteLength(partners) + Buffer.byteLength(next.seed ?? '') > MAX_DIRECTORY_BYTES) {
      throw new DirectoryTooLargeError(`the partner directory would exceed ${MAX_DIRECTORY_BYTES} bytes`);
    }
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            [tables.partners.partitionKey.name]: { S: DIRECTORY_KEY },
            revision: { N: String(next.revision) },
            partners: { S: partners },
            ...(next.seed === undefined ? {} : { seed: { S: next.seed } }),
          },
          ConditionExpression: expectedRevision === 0 ? 'attribute_not_exists(#revision)' : '#revision = :expected',
          ExpressionAttributeNames: { '#revision': 'revision' },
          ...(expectedRevision === 0
            ? {}
            : { ExpressionAttributeValues: { ':expected': { N: String(expectedRevision) } } }),
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new DirectoryChangedError();
      throw error;
    }
  }
}
