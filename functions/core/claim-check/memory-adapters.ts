/**
 * The claim check's ports in memory, for unit tests without emulators, with the semantics the AWS
 * adapters promise: a put replaces, a missing object reads as undefined, readers are a set, and a
 * payload record written again keeps its readers.
 */
import type { ClaimCheckStore, PayloadLedger, PayloadRecord, StoredPayload } from './ports.js';

export class InMemoryClaimCheckStore implements ClaimCheckStore {
  readonly objects = new Map<string, StoredPayload>();
  puts = 0;

  async put(payloadId: string, payload: StoredPayload): Promise<void> {
    this.puts++;
    this.objects.set(payloadId, { ...payload, bytes: Buffer.from(payload.bytes) });
  }

  async get(payloadId: string): Promise<StoredPayload | undefined> {
    return this.objects.get(payloadId);
  }

  async presignedGetUrl(payloadId: string, seconds: number): Promise<string> {
    return `https://objects.example/${payloadId}?expires=${seconds}`;
  }
}

export class InMemoryPayloadLedger implements PayloadLedger {
  readonly records = new Map<string, PayloadRecord>();

  async recordPayload(record: Omit<PayloadRecord, 'readers'>): Promise<void> {
    this.records.set(record.payloadId, { ...record, readers: this.records.get(record.payloadId)?.readers ?? [] });
  }

  async addReaders(payloadId: string, owners: readonly string[]): Promise<void> {
    const record = this.records.get(payloadId);
    if (record === undefined) throw new Error(`no payload ${payloadId}`);
    this.records.set(payloadId, { ...record, readers: [...new Set([...record.readers, ...owners])] });
  }

  async get(payloadId: string): Promise<PayloadRecord | undefined> {
    return this.records.get(payloadId);
  }
}
