/**
 * The event archive on S3 (s3rver on the laptop; docs/REPLAY.md): gzip JSON Lines objects under
 * `archive/…`, encrypted by the bucket's default (the stack's KMS key, with an S3 Bucket Key) and
 * expired by the bucket's lifecycle rule after the archive's retention.
 */
import type { EventArchive } from '../core/replay/ports.js';
import type { S3Requests } from './s3-requests.js';

export class S3EventArchive implements EventArchive {
  constructor(
    private readonly s3: S3Requests,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: Buffer): Promise<void> {
    await this.s3.putObject({ bucket: this.bucket, key, body, contentType: 'application/gzip' });
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3.listObjectsV2(this.bucket, { prefix, continuationToken: token });
      keys.push(...page.keys);
      token = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async get(key: string): Promise<Buffer | undefined> {
    return (await this.s3.getObject(this.bucket, key))?.body;
  }
}
