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
  PutItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { KanaalNameTakenError, type AbonnementRecord, type KanaalRecord, type ZgwStore } from '../core/zgw/ports.js';
import { getRecord, queryRecords, recordKey } from './json-record-items.js';

const KANALEN = 'kanaal';
const ABONNEMENTEN = 'abonnement';

const key = recordKey;

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

  private get<T>(pk: string, sk: string): Promise<T | undefined> {
    return getRecord<T>(this.client, this.tableName, pk, sk);
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

  private query<T>(pk: string): Promise<T[]> {
    return queryRecords<T>(this.client, this.tableName, pk);
  }
}
