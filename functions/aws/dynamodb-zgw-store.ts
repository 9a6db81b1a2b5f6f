/**
 * The ZGW adapter's kanalen and abonnementen (issue 34; functions/core/zgw) in the `zgw` table,
 * one JSON record per item: kanalen under pk `kanaal` keyed by their name, so that a name is
 * unique by a conditional PutItem alone (dynalite has no transactions), abonnementen under pk
 * `abonnement` keyed by UUID. A municipality holds tens of kanalen and hundreds of abonnementen,
 * so a list is one Query and a kanaal is found by UUID within it.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { KanaalNameTakenError, type AbonnementRecord, type KanaalRecord, type ZgwStore } from '../core/zgw/ports.js';

const KANALEN = 'kanaal';
const ABONNEMENTEN = 'abonnement';

const key = (pk: string, sk: string): Record<string, AttributeValue> => ({ pk: { S: pk }, sk: { S: sk } });

export class DynamoDbZgwStore implements ZgwStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  listKanalen(): Promise<KanaalRecord[]> {
    return this.query<KanaalRecord>(KANALEN);
  }

  async readKanaal(uuid: string): Promise<KanaalRecord | undefined> {
    return (await this.listKanalen()).find((kanaal) => kanaal.uuid === uuid);
  }

  kanaalNamed(naam: string): Promise<KanaalRecord | undefined> {
    return this.get<KanaalRecord>(KANALEN, naam);
  }

  async createKanaal(kanaal: KanaalRecord): Promise<void> {
    try {
      await this.put(KANALEN, kanaal.naam, kanaal, true);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new KanaalNameTakenError(kanaal.naam);
      throw error;
    }
  }

  replaceKanaal(kanaal: KanaalRecord): Promise<void> {
    return this.put(KANALEN, kanaal.naam, kanaal, false);
  }

  listAbonnementen(): Promise<AbonnementRecord[]> {
    return this.query<AbonnementRecord>(ABONNEMENTEN);
  }

  readAbonnement(uuid: string): Promise<AbonnementRecord | undefined> {
    return this.get<AbonnementRecord>(ABONNEMENTEN, uuid);
  }

  putAbonnement(abonnement: AbonnementRecord): Promise<void> {
    return this.put(ABONNEMENTEN, abonnement.uuid, abonnement, false);
  }

  async deleteAbonnement(uuid: string): Promise<boolean> {
    const { Attributes: old } = await this.client.send(
      new DeleteItemCommand({ TableName: this.tableName, Key: key(ABONNEMENTEN, uuid), ReturnValues: 'ALL_OLD' }),
    );
    return old !== undefined;
  }

  private async get<T>(pk: string, sk: string): Promise<T | undefined> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: key(pk, sk), ConsistentRead: true }),
    );
    const record = item?.['record']?.S;
    return record === undefined ? undefined : (JSON.parse(record) as T);
  }

  private async put(pk: string, sk: string, record: object, onlyNew: boolean): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...key(pk, sk), record: { S: JSON.stringify(record) } },
        ...(onlyNew ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
      }),
    );
  }

  private async query<T>(pk: string): Promise<T[]> {
    const records: T[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: pk } },
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? [])
        if (item['record']?.S !== undefined) records.push(JSON.parse(item['record'].S) as T);
      start = page.LastEvaluatedKey;
    } while (start);
    return records;
  }
}
