/** The contract register's ports in memory, for unit tests without emulators. */
import type { ContractBinding, ContractRecord, VersionRecord } from '../../../functions/core/contracts/contract.js';
import {
  ContractChangedError,
  type ContractConsumer,
  type ContractConsumers,
  type ContractDocuments,
  type ContractStore,
  type MessageSchemas,
} from '../../../functions/core/contracts/ports.js';

export class MemoryContractStore implements ContractStore {
  readonly contracts = new Map<string, ContractRecord>();
  readonly versions = new Map<string, VersionRecord>();
  readonly bindingsByType = new Map<string, ContractBinding>();

  async listContracts(): Promise<ContractRecord[]> {
    return [...this.contracts.values()];
  }
  async getContract(name: string): Promise<ContractRecord | undefined> {
    return this.contracts.get(name);
  }
  async saveContract(record: ContractRecord, previous: ContractRecord | undefined): Promise<void> {
    if (this.contracts.get(record.name) !== previous) throw new ContractChangedError(record.name);
    this.contracts.set(record.name, record);
  }
  async listVersions(name: string): Promise<VersionRecord[]> {
    return [...this.versions.values()].filter((version) => version.contract === name);
  }
  async getVersion(name: string, version: string): Promise<VersionRecord | undefined> {
    return this.versions.get(`${name}@${version}`);
  }
  async createVersion(record: VersionRecord): Promise<void> {
    const key = `${record.contract}@${record.version}`;
    if (this.versions.has(key)) throw new ContractChangedError(key);
    this.versions.set(key, record);
  }
  async saveVersion(record: VersionRecord, previous: VersionRecord): Promise<void> {
    const key = `${record.contract}@${record.version}`;
    if (this.versions.get(key) !== previous) throw new ContractChangedError(key);
    this.versions.set(key, record);
  }
  async listBindings(): Promise<ContractBinding[]> {
    return [...this.bindingsByType.values()];
  }
  async getBinding(type: string): Promise<ContractBinding | undefined> {
    return this.bindingsByType.get(type);
  }
  async putBinding(binding: ContractBinding): Promise<void> {
    this.bindingsByType.set(binding.type, binding);
  }
  async deleteBinding(type: string): Promise<boolean> {
    return this.bindingsByType.delete(type);
  }
}

export class MemoryContractDocuments implements ContractDocuments {
  readonly texts = new Map<string, string>();
  readonly schemas = new Map<string, MessageSchemas>();
  reads = 0;

  async putDocument(name: string, version: string, text: string): Promise<void> {
    this.texts.set(`${name}@${version}`, text);
  }
  async getDocument(name: string, version: string): Promise<string | undefined> {
    return this.texts.get(`${name}@${version}`);
  }
  async putSchemas(name: string, version: string, schemas: MessageSchemas): Promise<void> {
    this.schemas.set(`${name}@${version}`, structuredClone(schemas));
  }
  async getSchemas(name: string, version: string): Promise<MessageSchemas | undefined> {
    this.reads++;
    return this.schemas.get(`${name}@${version}`);
  }
}

/** Consumers from a fixed list of subscriptions. */
export function memoryConsumers(subscriptions: readonly ContractConsumer[]): ContractConsumers {
  return {
    consumersOf: async (types) =>
      subscriptions.filter((subscription) => subscription.types.some((type) => types.includes(type))),
  };
}
