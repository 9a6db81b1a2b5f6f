/**
 * The claim-check store on S3 (s3rver on the laptop): one object per event under
 * `payloads/<id>`, encrypted by the bucket's default (the stack's KMS key in AWS), its form and
 * content type as object metadata. Presigned GET URLs are signed here with SigV4 query
 * parameters, as `@aws-sdk/s3-request-presigner` does: the command runs through the client's own
 * middleware (endpoint, path style) up to the signing step, which is replaced by a presign.
 */
import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import type { FinalizeRequestMiddleware, HttpRequest as SmithyRequest } from '@smithy/types';
import type { ClaimCheckStore, StoredPayload } from '../core/claim-check/ports.js';
import type { DataForm } from '../core/claim-check/payload-reference.js';

const FORMS: readonly DataForm[] = ['json', 'text', 'base64'];

export class S3ClaimCheckStore implements ClaimCheckStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async put(payloadId: string, payload: StoredPayload): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: objectKey(payloadId),
        Body: payload.bytes,
        ContentLength: payload.bytes.length,
        ContentType: payload.contentType,
        Metadata: { form: payload.form },
      }),
    );
  }

  async get(payloadId: string): Promise<StoredPayload | undefined> {
    try {
      const output = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey(payloadId) }));
      const bytes = Buffer.from(await output.Body!.transformToByteArray());
      const form = output.Metadata?.['form'] as DataForm | undefined;
      return { bytes, contentType: output.ContentType ?? 'application/octet-stream', form: form !== undefined && FORMS.includes(form) ? form : 'base64' };
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async presignedGetUrl(payloadId: string, seconds: number): Promise<string> {
    return presign(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: objectKey(payloadId) }), seconds);
  }
}

export function objectKey(payloadId: string): string {
  return `payloads/${payloadId}`;
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
    for (const name of ['amz-sdk-invocation-id', 'amz-sdk-request', 'x-amz-user-agent', 'user-agent', 'x-amz-checksum-mode']) delete request.headers[name];
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
