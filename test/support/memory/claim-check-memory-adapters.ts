/**
 * The claim check's ports in memory, for unit tests without emulators, with the semantics the AWS
 * adapters promise: a put replaces, a missing object reads as undefined, readers are a set, and a
 * payload record written again keeps its readers, but never takes another digest.
 */
import { digestOf } from '../../../functions/core/claim-check/payload-reference.js';
import {
  PayloadRecordConflictError,
  type ClaimCheckStore,
  type PayloadLedger,
  type PayloadRecord,
  type StoredPayload,
  type UploadRecord,
  type UploadTerms,
} from '../../../functions/core/claim-check/ports.js';

export class InMemoryClaimCheckStore implements ClaimCheckStore {
  readonly objects = new Map<string, StoredPayload>();
  puts = 0;

  async put(key: string, payload: StoredPayload): Promise<void> {
    this.puts++;
    this.objects.set(key, { ...payload, bytes: Buffer.from(payload.bytes) });
  }

  async get(key: string): Promise<StoredPayload | undefined> {
    return this.objects.get(key);
  }

  async presignedGetUrl(key: string, seconds: number): Promise<string> {
    return `https://objects.example/${key}?expires=${seconds}`;
  }

  async presignedPutUrl(
    key: string,
    terms: UploadTerms,
    seconds: number,
  ): Promise<{ url: string; headers: Record<string, string> }> {
    return {
      url: `https://objects.example/${key}?expires=${seconds}&put`,
      headers: { 'content-length': String(terms.size) },
    };
  }

  async matches(key: string, terms: Pick<UploadTerms, 'size' | 'digest'>): Promise<boolean> {
    const object = this.objects.get(key);
    return object !== undefined && object.bytes.length === terms.size && digestOf(object.bytes) === terms.digest;
  }
}

export class InMemoryPayloadLedger implements PayloadLedger {
  readonly records = new Map<string, PayloadRecord>();

  async recordPayload(record: Omit<PayloadRecord, 'readers'>): Promise<void> {
    const recorded = this.records.get(record.payloadId);
    if (recorded !== undefined && recorded.digest !== record.digest)
      throw new PayloadRecordConflictError(record.payloadId);
    this.records.set(record.payloadId, { ...record, readers: recorded?.readers ?? [] });
  }

  async addReaders(payloadId: string, owners: readonly string[]): Promise<void> {
    const record = this.records.get(payloadId);
    if (record === undefined) throw new Error(`no payload ${payloadId}`);
    this.records.set(payloadId, { ...record, readers: [...new Set([...record.readers, ...owners])] });
  }

  async get(payloadId: string): Promise<PayloadRecord | undefined> {
    return this.records.get(payloadId);
  }

  readonly uploads = new Map<string, UploadRecord>();

  async recordUpload(upload: UploadRecord): Promise<void> {
    this.uploads.set(upload.uploadId, upload);
  }

  async getUpload(uploadId: string): Promise<UploadRecord | undefined> {
    return this.uploads.get(uploadId);
  }
}
