/**
 * The contract register's metadata (functions/core/contracts) in the `contracts` table: contracts
 * under `pk = contracts`, a contract's versions under `pk = versions#<name>`, the event type
 * bindings under `pk = bindings`; the sort key names the item and the record is JSON. A change is
 * a PutItem conditional on the record it replaces (dynalite has no transactions either), so two
 * writers never lose each other's change, and a version is created only when absent.
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { ContractBinding, ContractRecord, VersionRecord } from '../core/contracts/contract.js';
import { ContractChangedError, type ContractStore } from '../core/contracts/ports.js';
import { getRecord, queryRecords, recordKey } from './json-record-items.js';

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

  private get<T>(pk: string, sk: string): Promise<T | undefined> {
    return getRecord<T>(this.client, this.tableName, pk, sk);
  }

  private query<T>(pk: string): Promise<T[]> {
    return queryRecords<T>(this.client, this.tableName, pk);
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

const key = recordKey;
