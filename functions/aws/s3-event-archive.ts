/**
 * The event archive on S3 (s3rver on the laptop; docs/REPLAY.md): gzip JSON Lines objects under
 * `archive/…`, encrypted by the bucket's default (the stack's KMS key, with an S3 Bucket Key) and
 * expired by the bucket's lifecycle rule after the archive's retention.
 */
import type { ErasableArchive } from '../core/erasure/ports.js';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getObjectOrUndefined, listKeys, putObjectWithChecksum } from './s3-objects.js';

export class S3EventArchive implements ErasableArchive {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: Buffer): Promise<void> {
    await putObjectWithChecksum(this.s3, {
      Bucket: this.bucket,
      Key: key,
      Body: body,
      ContentType: 'application/gzip',
    });
  }

  async list(prefix: string): Promise<string[]> {
    return (await listKeys(this.s3, this.bucket, prefix)).sort();
  }

  async get(key: string): Promise<Buffer | undefined> {
    return (await getObjectOrUndefined(this.s3, this.bucket, key))?.body;
  }

  /** An erasure's (issue 31 item 4), for an object with nothing left in it: the bucket is not versioned. */
  async delete(key: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}
