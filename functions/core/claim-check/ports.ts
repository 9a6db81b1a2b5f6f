/**
 * What the claim check needs from the world: an object store for the data (S3 in AWS, s3rver on
 * the laptop: functions/aws/s3-claim-check-store.ts) and a ledger of who may read each object
 * (DynamoDB: functions/aws/dynamodb-payload-ledger.ts). Memory adapters in ./memory-adapters.ts.
 */
import type { DataForm } from './payload-reference.js';

export interface StoredPayload {
  readonly bytes: Buffer;
  readonly contentType: string;
  readonly form: DataForm;
}

/** What the producer promised for an upload: the object must have exactly this size and digest. */
export interface UploadTerms {
  readonly size: number;
  /** `sha-256=:<base64>:` */
  readonly digest: string;
  readonly contentType: string;
}

/** Objects by key (`payloadObjectKey`, `uploadObjectKey` in ./payload-reference.ts). */
export interface ClaimCheckStore {
  /**
   * Writes the object, replacing one of a retried request: the key names the event and its
   * content (`payloadIdOf`), so what is there already holds the same bytes.
   */
  put(key: string, payload: StoredPayload): Promise<void>;
  /** The object, or undefined when there is none (never written, or expired by the lifecycle rule). */
  get(key: string): Promise<StoredPayload | undefined>;
  /** A URL that reads the object for `seconds`, for objects too large for a function's answer. */
  presignedGetUrl(key: string, seconds: number): Promise<string>;
  /**
   * A URL that writes the object for `seconds`, only with exactly the promised size and checksum,
   * and the request headers that must go with it.
   */
  presignedPutUrl(
    key: string,
    terms: UploadTerms,
    seconds: number,
  ): Promise<{ readonly url: string; readonly headers: Readonly<Record<string, string>> }>;
  /** Whether the object exists with exactly this size and digest (false when absent). */
  matches(key: string, terms: Pick<UploadTerms, 'size' | 'digest'>): Promise<boolean>;
}

/** What Koerier knows about one object: whose event it is, who may read it, and until when. */
export interface PayloadRecord {
  readonly payloadId: string;
  /** Where the object is: `payloads/<id>` for data moved at ingest, `uploads/<id>` for an upload. */
  readonly objectKey: string;
  readonly source: string;
  readonly eventId: string;
  readonly publisher: string;
  readonly digest: string;
  readonly size: number;
  readonly contentType: string;
  /** Epoch ms after which the object is gone (the bucket's lifecycle rule): a fetch answers 410. */
  readonly objectExpiresAt: number;
  /** Owners of the subscriptions the event went to with this reference. */
  readonly readers: readonly string[];
}

export interface PayloadLedger {
  /**
   * Records the object at ingest; a retry of the same event keeps the readers already recorded and
   * moves the expiry to the object's new one. A record of other data (another digest) under the
   * same id is never replaced: that throws `PayloadRecordConflictError`.
   */
  recordPayload(record: Omit<PayloadRecord, 'readers'>): Promise<void>;
  /** Adds readers (set union): called before a reference goes out to a subscription's owner. */
  addReaders(payloadId: string, owners: readonly string[]): Promise<void>;
  get(payloadId: string): Promise<PayloadRecord | undefined>;
  /** An upload granted to `publisher` (POST /payloads), until `expiresAt` (epoch ms). */
  recordUpload(upload: UploadRecord): Promise<void>;
  getUpload(uploadId: string): Promise<UploadRecord | undefined>;
}

export interface UploadRecord extends UploadTerms {
  readonly uploadId: string;
  readonly publisher: string;
  readonly expiresAt: number;
}

/** A payload record of other data is under this id already (`PayloadLedger.recordPayload`). */
export class PayloadRecordConflictError extends Error {
  override name = 'PayloadRecordConflictError';
}
