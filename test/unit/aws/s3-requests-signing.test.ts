/**
 * The lean S3 client (functions/aws/s3-requests.ts) against the real @aws-sdk/client-s3: the same
 * operation, with the same fixed clock and credentials, must go out as the same signed request
 * (issue 15, item 4). s3rver checks no signatures, so this is what shows AWS would accept ours.
 *
 * Left out of the SDK's signing, and never sent by ours: `x-amz-user-agent`, `amz-sdk-invocation-id`
 * and `amz-sdk-request` (the SDK's own telemetry and retry bookkeeping; S3 requires none of them).
 * The SDK is set to `requestChecksumCalculation: 'WHEN_REQUIRED'` and given the SHA-256 checksum
 * ours sends; its default would compute a CRC32 in its place.
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import type { FinalizeRequestMiddleware, HttpRequest as SmithyRequest } from '@smithy/types';
import {
  capturingRequestHandler,
  capturingTransport,
  expectSameSignedRequest,
  FIXED_CREDENTIALS,
  signingAtFixedNow,
  withoutSdkOnlyHeaders,
  type CapturedAnswer,
  type CapturedRequest,
} from '../../support/sdk-request-capture.js';
import { describe, expect, it } from 'vitest';
import { S3Requests } from '../../../functions/aws/s3-requests.js';

const CREDENTIALS = FIXED_CREDENTIALS;
const BUCKET = 'koerier-payloads-example';

/** An SDK client whose requests are captured instead of sent, answered with `answer`. */
function sdkClient(region: string, sent: CapturedRequest[], answer: () => CapturedAnswer): S3Client {
  return withoutSdkOnlyHeaders(
    new S3Client({
      region,
      credentials: CREDENTIALS,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: capturingRequestHandler(sent, answer),
    }),
  );
}

function leanClient(region: string, sent: CapturedRequest[], answer: () => CapturedAnswer): S3Requests {
  return new S3Requests({ region, credentials: CREDENTIALS, transport: capturingTransport(sent, answer) });
}

describe('issue 15, item 4: the lean S3 client signs as @aws-sdk/client-s3 does', () => {
  signingAtFixedNow();

  for (const region of ['eu-west-1', 'us-east-1']) {
    it(`issue 15: PutObject with content type, metadata and SHA-256 checksum, in ${region}`, async () => {
      const ours: CapturedRequest[] = [];
      const sdk: CapturedRequest[] = [];
      const body = Buffer.from('{"hello":"wereld"}');
      const answer = () => ({ headers: {}, body: '' });
      await leanClient(region, ours, answer).putObject({
        bucket: BUCKET,
        key: 'payloads/abc-123',
        body,
        contentType: 'application/json',
        metadata: { form: 'json' },
      });
      await sdkClient(region, sdk, answer).send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: 'payloads/abc-123',
          Body: body,
          ContentLength: body.length,
          ContentType: 'application/json',
          Metadata: { form: 'json' },
          ChecksumAlgorithm: 'SHA256',
          ChecksumSHA256: createHash('sha256').update(body).digest('base64'),
        }),
      );
      expectSameSignedRequest(ours[0]!, sdk[0]!, ['x-amz-content-sha256']);
    });
  }

  it('issue 15: GetObject of a key with characters S3 wants encoded, and what comes back', async () => {
    const ours: CapturedRequest[] = [];
    const sdk: CapturedRequest[] = [];
    const key = "archive/2026/11/26/a b+c(1)!'*~é.jsonl.gz";
    const answer = () => ({ headers: { 'content-type': 'text/plain', 'x-amz-meta-form': 'text' }, body: 'hallo' });
    const object = await leanClient('eu-west-1', ours, answer).getObject(BUCKET, key);
    const output = await sdkClient('eu-west-1', sdk, answer).send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    expectSameSignedRequest(ours[0]!, sdk[0]!, ['x-amz-content-sha256']);
    expect(object).toEqual({ body: Buffer.from('hallo'), contentType: output.ContentType, metadata: output.Metadata });
  });

  it('issue 15: HeadObject with ChecksumMode ENABLED, and the size and checksum it reads', async () => {
    const ours: CapturedRequest[] = [];
    const sdk: CapturedRequest[] = [];
    const answer = () => ({ headers: { 'content-length': '42', 'x-amz-checksum-sha256': 'q83vEjRWeJA=', 'x-amz-checksum-type': 'FULL_OBJECT' }, body: '' });
    const head = await leanClient('eu-west-1', ours, answer).headObject(BUCKET, 'uploads/xyz');
    const output = await sdkClient('eu-west-1', sdk, answer).send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'uploads/xyz', ChecksumMode: 'ENABLED' }));
    expectSameSignedRequest(ours[0]!, sdk[0]!, ['x-amz-content-sha256']);
    expect(head).toEqual({ contentLength: output.ContentLength, checksumSHA256: output.ChecksumSHA256, checksumType: output.ChecksumType });
  });

  it('issue 15: ListObjectsV2 with prefix and continuation token, and the XML-escaped keys it reads', async () => {
    const ours: CapturedRequest[] = [];
    const sdk: CapturedRequest[] = [];
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name><Prefix>archive/</Prefix><KeyCount>2</KeyCount>' +
      '<Contents><Key>archive/a&amp;b&lt;c&gt;.gz</Key><Size>1</Size></Contents><Contents><Key>archive/&#x41;&#66;&quot;&apos;.gz</Key><Size>2</Size></Contents>' +
      '<IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken></ListBucketResult>';
    const answer = () => ({ headers: { 'content-type': 'application/xml' }, body: xml });
    const token = '1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM+/=';
    const page = await leanClient('eu-west-1', ours, answer).listObjectsV2(BUCKET, { prefix: 'archive/2026 11/', continuationToken: token });
    const output = await sdkClient('eu-west-1', sdk, answer).send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'archive/2026 11/', ContinuationToken: token }),
    );
    expectSameSignedRequest(ours[0]!, sdk[0]!, ['x-amz-content-sha256']);
    expect(page).toEqual({
      keys: output.Contents!.map((object) => object.Key),
      isTruncated: output.IsTruncated,
      nextContinuationToken: output.NextContinuationToken,
    });
    expect(page.keys).toEqual(['archive/a&b<c>.gz', 'archive/AB"\'.gz']);
  });
});

/** How the claim-check store presigned through the SDK client before the lean client, kept here as the reference. */
async function sdkPresign(
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
    uriEscapePath: false,
    applyChecksum: false,
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const intercept: FinalizeRequestMiddleware<any, any> = () => async (args) => {
    const request = args.request as SmithyRequest;
    const perCall = [
      'amz-sdk-invocation-id',
      'amz-sdk-request',
      'x-amz-user-agent',
      'user-agent',
      'content-length',
      'content-md5',
      'content-encoding',
      'x-amz-decoded-content-length',
    ];
    for (const name of Object.keys(request.headers)) {
      const lower = name.toLowerCase();
      if (perCall.includes(lower) || lower.startsWith('x-amz-checksum-') || lower === 'x-amz-sdk-checksum-algorithm') delete request.headers[name];
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
  return `${signed.protocol}//${signed.hostname}${signed.port ? `:${signed.port}` : ''}${signed.path}?${query}`;
}

describe('issue 15, item 4: presigned URLs stay what the SDK client made', () => {
  signingAtFixedNow();

  // As the functions made it before: the SDK's defaults, so its flexible checksums were on and the presign removed them.
  const sdk = () => new S3Client({ region: 'eu-west-1', credentials: CREDENTIALS });
  const lean = () => new S3Requests({ region: 'eu-west-1', credentials: CREDENTIALS });

  it('EDU-1, issue 15: the presigned GET of a payload is the same URL, byte for byte', async () => {
    const key = 'payloads/nvjoEdJnBRcOTT8cBDPnRSvYV06ZdrnZwY_L0LbERbg';
    expect(await lean().presignedUrl('GET', BUCKET, key, 300)).toBe(await sdkPresign(sdk(), new GetObjectCommand({ Bucket: BUCKET, Key: key }), 300));
  });

  it('EDU-1, issue 15: the presigned PUT of an upload, bound to its length, type and SHA-256, is the same URL, byte for byte', async () => {
    const key = 'uploads/0f8c2a4e-5b1d-4c3e-9a7f-6d2b1e0c9a8b';
    const headers = {
      'content-length': '52428800',
      'content-type': 'application/octet-stream',
      'x-amz-checksum-sha256': 'n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=',
      'x-amz-sdk-checksum-algorithm': 'SHA256',
    };
    const ours = await lean().presignedUrl('PUT', BUCKET, key, 900, headers);
    expect(ours).toBe(await sdkPresign(sdk(), new PutObjectCommand({ Bucket: BUCKET, Key: key }), 900, headers));
    expect(new URL(ours).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;content-type;host;x-amz-checksum-sha256;x-amz-sdk-checksum-algorithm');
  });
});
