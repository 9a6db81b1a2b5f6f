/**
 * The claim-check store on S3 (s3rver on the laptop): one object per event under
 * `payloads/<id>` (or `uploads/<id>` for a producer's upload), encrypted by the bucket's default (the stack's KMS key in AWS), its form and
 * content type as object metadata. Presigned GET and PUT URLs are SigV4 query-signed URLs
 * (./s3-requests.ts), as `@aws-sdk/s3-request-presigner` makes them.
 */
import { createHash } from 'node:crypto';
import type { ClaimCheckStore, StoredPayload, UploadTerms } from '../core/claim-check/ports.js';
import type { DataForm } from '../core/claim-check/payload-reference.js';
import type { S3Requests } from './s3-requests.js';

const FORMS: readonly DataForm[] = ['json', 'text', 'base64'];

export class S3ClaimCheckStore implements ClaimCheckStore {
  constructor(
    private readonly s3: S3Requests,
    private readonly bucket: string,
  ) {}

  async put(key: string, payload: StoredPayload): Promise<void> {
    await this.s3.putObject({ bucket: this.bucket, key, body: payload.bytes, contentType: payload.contentType, metadata: { form: payload.form } });
  }

  async get(key: string): Promise<StoredPayload | undefined> {
    const object = await this.s3.getObject(this.bucket, key);
    if (object === undefined) return undefined;
    const form = object.metadata['form'] as DataForm | undefined;
    return {
      bytes: object.body,
      contentType: object.contentType ?? 'application/octet-stream',
      form: form !== undefined && FORMS.includes(form) ? form : 'base64',
    };
  }

  presignedGetUrl(key: string, seconds: number): Promise<string> {
    return this.s3.presignedUrl('GET', this.bucket, key, seconds);
  }

  /**
   * S3 refuses a PUT whose body does not match the signed `Content-Length` and
   * `x-amz-checksum-sha256`, so the size range is exactly the promised size.
   */
  async presignedPutUrl(key: string, terms: UploadTerms, seconds: number): Promise<{ url: string; headers: Record<string, string> }> {
    const headers = {
      'content-length': String(terms.size),
      'content-type': terms.contentType,
      'x-amz-checksum-sha256': checksumOf(terms.digest),
      'x-amz-sdk-checksum-algorithm': 'SHA256',
    };
    const url = await this.s3.presignedUrl('PUT', this.bucket, key, seconds, headers);
    return { url, headers };
  }

  /**
   * Size from HeadObject; the digest from S3's own SHA-256 checksum of the object, which S3 checked
   * against the signed header on upload. s3rver keeps no checksums: then the object is read and
   * hashed here (the laptop's bridge; docs/ARCHITECTURE.md, emulator gaps).
   */
  async matches(key: string, terms: Pick<UploadTerms, 'size' | 'digest'>): Promise<boolean> {
    const head = await this.s3.headObject(this.bucket, key);
    if (head === undefined || head.contentLength !== terms.size) return false;
    if (head.checksumSHA256 !== undefined && head.checksumType !== 'COMPOSITE') return head.checksumSHA256 === checksumOf(terms.digest);
    const object = await this.s3.getObject(this.bucket, key);
    if (object === undefined) return false;
    return `sha-256=:${createHash('sha256').update(object.body).digest('base64')}:` === terms.digest;
  }
}

/** `sha-256=:<base64>:` → the base64 S3 calls ChecksumSHA256. */
function checksumOf(digest: string): string {
  return digest.replace(/^sha-256=:/, '').replace(/:$/, '');
}
