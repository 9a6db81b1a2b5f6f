/**
 * The event archive on S3 (s3rver on the laptop; docs/REPLAY.md): gzip JSON Lines objects under
 * `archive/…`, encrypted by the bucket's default (the stack's KMS key, with an S3 Bucket Key) and
 * expired by the bucket's lifecycle rule after the archive's retention.
 */
import { GetObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { EventArchive } from '../core/replay/ports.js';

export class S3EventArchive implements EventArchive {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: Buffer): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length, ContentType: 'application/gzip' }));
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      const output = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Buffer.from(await output.Body!.transformToByteArray());
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }
}
