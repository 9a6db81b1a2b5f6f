/**
 * The claim-check store on S3 (s3rver on the laptop): one object per event under
 * `payloads/<id>` (or `uploads/<id>` for a producer's upload), encrypted by the bucket's default (the stack's KMS key in AWS), its form and
 * content type as object metadata. Presigned GET and PUT URLs are SigV4 query-signed URLs made by
 * `@aws-sdk/s3-request-presigner`.
 */
import { createHash } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ClaimCheckStore, StoredPayload, UploadTerms } from '../core/claim-check/ports.js';
import type { DataForm } from '../core/claim-check/payload-reference.js';
import { getObjectOrUndefined, headObjectOrUndefined, putObjectWithChecksum } from './s3-objects.js';

const FORMS: readonly DataForm[] = ['json', 'text', 'base64'];

export class S3ClaimCheckStore implements ClaimCheckStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, payload: StoredPayload): Promise<void> {
    await putObjectWithChecksum(this.s3, {
      Bucket: this.bucket,
      Key: key,
      Body: payload.bytes,
      ContentType: payload.contentType,
      Metadata: { form: payload.form },
    });
  }

  async get(key: string): Promise<StoredPayload | undefined> {
    const object = await getObjectOrUndefined(this.s3, this.bucket, key);
    if (object === undefined) return undefined;
    const form = object.metadata['form'] as DataForm | undefined;
    return {
      bytes: object.body,
      contentType: object.contentType ?? 'application/octet-stream',
      form: form !== undefined && FORMS.includes(form) ? form : 'base64',
    };
  }

  /** An erasure's (issue 31 item 4): the bucket is not versioned, so the data is gone, not hidden. */
  async delete(key: string): Promise<void> {
    await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  presignedGetUrl(key: string, seconds: number): Promise<string> {
    return getSignedUrl(this.s3, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: seconds });
  }

  /**
   * S3 refuses a PUT whose body does not match the signed `Content-Length` and
   * `x-amz-checksum-sha256`, so the size range is exactly the promised size.
   */
  async presignedPutUrl(
    key: string,
    terms: UploadTerms,
    seconds: number,
  ): Promise<{ url: string; headers: Record<string, string> }> {
    const checksum = checksumOf(terms.digest);
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      ContentLength: terms.size,
      ContentType: terms.contentType,
      ChecksumAlgorithm: 'SHA256',
      ChecksumSHA256: checksum,
    });
    const headers = {
      'content-length': String(terms.size),
      'content-type': terms.contentType,
      'x-amz-checksum-sha256': checksum,
      'x-amz-sdk-checksum-algorithm': 'SHA256',
    };
    // Signed as headers, not hoisted into the query: the uploader must send exactly these, so S3 refuses any other size or bytes.
    const url = await getSignedUrl(this.s3, command, {
      expiresIn: seconds,
      signableHeaders: new Set(Object.keys(headers)),
      unhoistableHeaders: new Set(Object.keys(headers)),
    });
    return { url, headers };
  }

  /**
   * Size from HeadObject; the digest from S3's own SHA-256 checksum of the object, which S3 checked
   * against the signed header on upload. s3rver keeps no checksums: then the object is read and
   * hashed here (the laptop's bridge; docs/ARCHITECTURE.md, emulator gaps).
   */
  async matches(key: string, terms: Pick<UploadTerms, 'size' | 'digest'>): Promise<boolean> {
    const head = await headObjectOrUndefined(this.s3, this.bucket, key);
    if (head === undefined || head.ContentLength !== terms.size) return false;
    if (head.ChecksumSHA256 !== undefined && head.ChecksumType !== 'COMPOSITE')
      return head.ChecksumSHA256 === checksumOf(terms.digest);
    const object = await getObjectOrUndefined(this.s3, this.bucket, key);
    if (object === undefined) return false;
    return `sha-256=:${createHash('sha256').update(object.body).digest('base64')}:` === terms.digest;
  }
}

/** `sha-256=:<base64>:` → the base64 S3 calls ChecksumSHA256. */
function checksumOf(digest: string): string {
  return digest.replace(/^sha-256=:/, '').replace(/:$/, '');
}
