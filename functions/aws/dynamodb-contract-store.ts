/**
 * The contract register's metadata (functions/core/contracts) in the `contracts` table: contracts
 * under `pk = contracts`, a contract's versions under `pk = versions#<name>`, the event type
 * bindings under `pk = bindings`; the sort key names the item and the record is JSON. A change is
 * a PutItem conditional on the record it replaces (dynalite has no transactions either), so two
 * writers never lose each other's change, and a version is created only when absent.
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import type { ContractBinding, ContractRecord, VersionRecord } from '../core/contracts/contract.js';
import { ContractChangedError, type ContractStore } from '../core/contracts/ports.js';

const CONTRACTS = 'contracts';
const BINDINGS = 'bindings';
const versionsOf = (name: string) => `versions#${name}`;

export class DynamoDbContractStore implements ContractStore {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
  ) {}

  listContracts(): Promise<ContractRecord[]> {
    return this.query<ContractRecord>(CONTRACTS);
  }

  getContract(name: string): Promise<ContractRecord | undefined> {
    return this.get<ContractRecord>(CONTRACTS, name);
  }

  saveContract(record: ContractRecord, previous: ContractRecord | undefined): Promise<void> {
    return this.put(CONTRACTS, record.name, record, previous);
  }

  listVersions(name: string): Promise<VersionRecord[]> {
    return this.query<VersionRecord>(versionsOf(name));
  }

  getVersion(name: string, version: string): Promise<VersionRecord | undefined> {
    return this.get<VersionRecord>(versionsOf(name), version);
  }

  createVersion(record: VersionRecord): Promise<void> {
    return this.put(versionsOf(record.contract), record.version, record, undefined);
  }

  saveVersion(record: VersionRecord, previous: VersionRecord): Promise<void> {
    return this.put(versionsOf(record.contract), record.version, record, previous);
  }

  listBindings(): Promise<ContractBinding[]> {
    return this.query<ContractBinding>(BINDINGS);
  }

  getBinding(type: string): Promise<ContractBinding | undefined> {
    return this.get<ContractBinding>(BINDINGS, type);
  }

  async putBinding(binding: ContractBinding): Promise<void> {
    await this.client.send(
      new PutItemCommand({
        TableName: this.tableName,
        Item: { ...key(BINDINGS, binding.type), record: { S: JSON.stringify(binding) } },
      }),
    );
  }

  async deleteBinding(type: string): Promise<boolean> {
    const { Attributes: removed } = await this.client.send(
      new DeleteItemCommand({ TableName: this.tableName, Key: key(BINDINGS, type), ReturnValues: 'ALL_OLD' }),
    );
    return removed !== undefined;
  }

  private async get<T>(pk: string, sk: string): Promise<T | undefined> {
    const { Item: item } = await this.client.send(
      new GetItemCommand({ TableName: this.tableName, Key: key(pk, sk), ConsistentRead: true }),
    );
    return item?.['record']?.S === undefined ? undefined : (JSON.parse(item['record'].S) as T);
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

  /** Creates (`previous` undefined) or replaces exactly `previous`, or throws `ContractChangedError`. */
  private async put(pk: string, sk: string, record: object, previous: object | undefined): Promise<void> {
    try {
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: { ...key(pk, sk), record: { S: JSON.stringify(record) } },
          ...(previous === undefined
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : {
                ConditionExpression: '#record = :previous',
                ExpressionAttributeNames: { '#record': 'record' },
                ExpressionAttributeValues: { ':previous': { S: JSON.stringify(previous) } },
              }),
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new ContractChangedError(`${pk} ${sk}`);
      throw error;
    }
  }
}

function key(pk: string, sk: string): Record<string, AttributeValue> {
  return { pk: { S: pk }, sk: { S: sk } };
}
