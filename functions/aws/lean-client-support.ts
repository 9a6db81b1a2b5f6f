/**
 * What the lean AWS clients (./s3-requests.ts, ./kms-requests.ts) share in place of the SDK's
 * runtime: the hash the SigV4 signer asks for, the standard retry mode's backoff, and the shape of
 * the per-operation wrapper the X-Ray tracing puts around them (./tracing.ts).
 */
import { createHash, createHmac } from 'node:crypto';
import type { SourceData } from '@smithy/types';

export type OperationWrapper = <T>(operation: string, send: () => Promise<T>) => Promise<T>;

/**
 * Full jitter on `base` ms × 2^attempt, at most 20 s: the SDK's standard mode, whose base is
 * 100 ms, and 500 ms after a throttling answer.
 */
export function standardBackoff(attempt: number, base = 100): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(20_000, base * 2 ** attempt)));
}

/** The signer's hash: SHA-256, or HMAC-SHA-256 when given a secret. node:crypto, not the SDK's JavaScript one. */
export class NodeSha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: SourceData): void {
    this.hash.update(toBuffer(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
}

function toBuffer(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}
