/**
 * The claim-check store on S3 (s3rver on the laptop): one object per event under
 * `payloads/<id>` (or `uploads/<id>` for a producer's upload), encrypted by the bucket's default (the stack's KMS key in AWS), its form and
 * content type as object metadata. Presigned GET URLs are signed here with SigV4 query
 * parameters, as `@aws-sdk/s3-request-presigner` does: the command runs through the client's own
 * middleware (endpoint, path style) up to the signing step, which is replaced by a presign.
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand, NoSuchKey, NotFound, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import type { FinalizeRequestMiddleware, HttpRequest as SmithyRequest } from '@smithy/types';
import type { ClaimCheckStore, StoredPayload, UploadTerms } from '../core/claim-check/ports.js';
import type { DataForm } from '../core/claim-check/payload-reference.js';

const FORMS: readonly DataForm[] = ['json', 'text', 'base64'];
const PER_CALL_HEADERS = new Set([
  'amz-sdk-invocation-id',
  'amz-sdk-request',
  'x-amz-user-agent',
  'user-agent',
  'content-length',
  'content-md5',
  'content-encoding',
  'x-amz-decoded-content-length',
]);

export class S3ClaimCheckStore implements ClaimCheckStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, payload: StoredPayload): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: payload.bytes,
        ContentLength: payload.bytes.length,
        ContentType: payload.contentType,
        Metadata: { form: payload.form },
      }),
    );
  }

  async get(key: string): Promise<StoredPayload | undefined> {
    try {
      const output = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const bytes = Buffer.from(await output.Body!.transformToByteArray());
      const form = output.Metadata?.['form'] as DataForm | undefined;
      return { bytes, contentType: output.ContentType ?? 'application/octet-stream', form: form !== undefined && FORMS.includes(form) ? form : 'base64' };
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async presignedGetUrl(key: string, seconds: number): Promise<string> {
    return presign(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), seconds);
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
    const url = await presign(this.client, new PutObjectCommand({ Bucket: this.bucket, Key: key }), seconds, headers);
    return { url, headers };
  }

  /**
   * Size from HeadObject; the digest from S3's own SHA-256 checksum of the object, which S3 checked
   * against the signed header on upload. s3rver keeps no checksums: then the object is read and
   * hashed here (the laptop's bridge; docs/ARCHITECTURE.md, emulator gaps).
   */
  async matches(key: string, terms: Pick<UploadTerms, 'size' | 'digest'>): Promise<boolean> {
    let head;
    try {
      head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key, ChecksumMode: 'ENABLED' }));
    } catch (error) {
      if (error instanceof NotFound || (error as { name?: string }).name === 'NotFound' || error instanceof NoSuchKey) return false;
      throw error;
    }
    if (head.ContentLength !== terms.size) return false;
    if (head.ChecksumSHA256 !== undefined && head.ChecksumType !== 'COMPOSITE') return head.ChecksumSHA256 === checksumOf(terms.digest);
    const output = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    const hash = createHash('sha256');
    for await (const chunk of output.Body as AsyncIterable<Uint8Array>) hash.update(chunk);
    return `sha-256=:${hash.digest('base64')}:` === terms.digest;
  }
}

/** `sha-256=:<base64>:` → the base64 S3 calls ChecksumSHA256. */
function checksumOf(digest: string): string {
  return digest.replace(/^sha-256=:/, '').replace(/:$/, '');
}

/** A presigned URL for `command`, valid `seconds`, signed with the client's credentials and region. */
export async function presign(
  client: S3Client,
  command: GetObjectCommand | PutObjectCommand,
  seconds: number,
  signedHeaders: Record<string, string> = {},
): Promise<string> {
  const signer = new SignatureV4({
    credentials: client.config.credentials,
    region: client.config.region,
    service: 's3',
    sha256: client.config.sha256,
    // S3 signs the path as sent, without the second escaping other services use.
    uriEscapePath: false,
    applyChecksum: false,
  });
  // The client's stack is typed by its commands' inputs and outputs; this step answers neither.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const intercept: FinalizeRequestMiddleware<any, any> = () => async (args) => {
    const request = args.request as SmithyRequest;
    // Per-call SDK headers, and the checksums the SDK computed over the empty body it was given:
    // the uploader's request carries the real ones (`signedHeaders`).
    for (const name of Object.keys(request.headers)) {
      const lower = name.toLowerCase();
      if (PER_CALL_HEADERS.has(lower) || lower.startsWith('x-amz-checksum-') || lower === 'x-amz-sdk-checksum-algorithm') delete request.headers[name];
    }
    Object.assign(request.headers, signedHeaders, { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' });
    const signed = await signer.presign(request, { expiresIn: seconds, unhoistableHeaders: new Set(Object.keys(signedHeaders)) });
    return { response: {}, output: { $metadata: {}, signed } };
  };
  const stack = client.middlewareStack.clone();
  stack.addRelativeTo(intercept, { name: 'koerierPresign', relation: 'before', toMiddleware: 'awsAuthMiddleware', override: true });
  const handler = (command as GetObjectCommand).resolveMiddleware(stack as never, client.config, {});
  const { output } = (await handler({ input: command.input } as never)) as unknown as { output: { signed: SmithyRequest } };
  const { signed } = output;
  const query = Object.entries(signed.query ?? {})
    .flatMap(([name, value]) => (Array.isArray(value) ? value.map((v) => [name, v]) : [[name, value ?? '']]))
    .map(([name, value]) => `${encodeURIComponent(name!)}=${encodeURIComponent(value!)}`)
    .join('&');
  const port = signed.port ? `:${signed.port}` : '';
  return `${signed.protocol}//${signed.hostname}${port}${signed.path}?${query}`;
}
