/**
 * What the three S3 adapters (claim check, event archive, contract documents) ask of S3 the same
 * way: an object's bytes or "there is none", every key under a prefix, and a PUT whose bytes S3
 * checks against their SHA-256 before it stores them.
 */
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type HeadObjectCommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';

export interface S3ObjectRead {
  readonly body: Buffer;
  readonly contentType: string | undefined;
  /** `x-amz-meta-*`, without the prefix. */
  readonly metadata: Record<string, string>;
}

/** S3 answers a missing key with `NoSuchKey` (GET) or a bare 404 `NotFound` (HEAD, which has no body to name it). */
function isMissing(error: unknown): boolean {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return name === 'NoSuchKey' || name === 'NotFound' || (name === 'Unknown' && $metadata?.httpStatusCode === 404);
}

export async function getObjectOrUndefined(
  s3: S3Client,
  bucket: string,
  key: string,
): Promise<S3ObjectRead | undefined> {
  try {
    const output = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const bytes = output.Body ? await output.Body.transformToByteArray() : new Uint8Array();
    return {
      body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      contentType: output.ContentType,
      metadata: output.Metadata ?? {},
    };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Size and S3's own SHA-256 checksum of the object (ChecksumMode ENABLED), or undefined when there is none. */
export async function headObjectOrUndefined(
  s3: S3Client,
  bucket: string,
  key: string,
): Promise<HeadObjectCommandOutput | undefined> {
  try {
    return await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** S3 refuses the object if its bytes do not hash to the SHA-256 the SDK sends with them: end-to-end integrity. */
export async function putObjectWithChecksum(
  s3: S3Client,
  object: { Bucket: string; Key: string; Body: Buffer; ContentType: string; Metadata?: Record<string, string> },
): Promise<void> {
  await s3.send(new PutObjectCommand({ ...object, ChecksumAlgorithm: 'SHA256' }));
}

/** Every key under `prefix`, in S3's order (UTF-8 binary), page after page. */
export async function listKeys(s3: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        ...(token === undefined ? {} : { ContinuationToken: token }),
      }),
    );
    for (const entry of page.Contents ?? []) if (entry.Key !== undefined) keys.push(entry.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}
