/**
 * The claim check's presigned URLs (EDU-1) as @aws-sdk/s3-request-presigner makes them for the
 * claim-check store: what S3 will demand of whoever uses them. s3rver checks signatures but not
 * checksums, so what only S3 would refuse (a checksum the uploader cannot know, a header left
 * unsigned) is read from the URL here.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createS3Client } from '../../../functions/aws/clients.js';
import { S3ClaimCheckStore } from '../../../functions/aws/s3-claim-check-store.js';

const store = () =>
  new S3ClaimCheckStore(
    createS3Client({ region: 'eu-west-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } }),
    'koerier-payloads',
  );

describe('EDU-1, issue 27: presigned claim-check URLs', () => {
  it('EDU-1: an upload URL binds size, type and SHA-256 as signed headers, and asks for no checksum the uploader was not told of', async () => {
    const bytes = Buffer.from('{"leerling":"L-42"}');
    const digest = `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
    const { url, headers } = await store().presignedPutUrl(
      'uploads/u-1',
      { size: bytes.length, contentType: 'application/json', digest },
      300,
    );
    const parsed = new URL(url);
    expect(parsed.host).toBe('koerier-payloads.s3.eu-west-1.amazonaws.com');
    expect(parsed.pathname).toBe('/uploads/u-1');
    expect(parsed.searchParams.get('X-Amz-Expires')).toBe('300');
    expect(parsed.searchParams.get('X-Amz-SignedHeaders')!.split(';')).toEqual([
      'content-length',
      'content-type',
      'host',
      'x-amz-checksum-sha256',
      'x-amz-sdk-checksum-algorithm',
    ]);
    expect(headers).toEqual({
      'content-length': String(bytes.length),
      'content-type': 'application/json',
      'x-amz-checksum-sha256': createHash('sha256').update(bytes).digest('base64'),
      'x-amz-sdk-checksum-algorithm': 'SHA256',
    });
    // Every header the uploader must send is given to it, and none is hoisted into the query, where S3 would take it as given.
    const query = [...parsed.searchParams.keys()].map((name) => name.toLowerCase());
    expect(
      query.filter(
        (name) => name.startsWith('x-amz-checksum') || name.startsWith('x-amz-sdk') || name.startsWith('content-'),
      ),
    ).toEqual([]);
  });

  it('EDU-1: a download URL is a plain GET of the object, valid as long as asked', async () => {
    const parsed = new URL(await store().presignedGetUrl('payloads/p-1', 60));
    expect(`${parsed.host}${parsed.pathname}`).toBe('koerier-payloads.s3.eu-west-1.amazonaws.com/payloads/p-1');
    expect(parsed.searchParams.get('X-Amz-Expires')).toBe('60');
    expect(parsed.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
    expect([...parsed.searchParams.keys()].filter((name) => /checksum/i.test(name))).toEqual([]);
  });
});
