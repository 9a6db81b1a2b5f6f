/**
 * Uploads (EDU-1): the upload request's checks, the grant's answer, and what publishing an event
 * with an upload's dataref checks and records before the 202.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { fetchPayload } from '../../../functions/core/claim-check/fetch-payload.js';
import {
  grantUpload,
  MAX_UPLOAD_BYTES,
  parseUploadRequest,
  resolveUploads,
} from '../../../functions/core/claim-check/uploads.js';
import { answered } from '../../../functions/core/http/problems.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { asyncRefusalOf, refusalOf } from '../../support/refusals.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { BASE, DAY, NOW, RETENTION_SECONDS, accepted, idOf, memoryPorts, sha256 } from './claim-check-fixtures.js';

const bytes = Buffer.from('a large enrolment list');
const DIGEST = sha256(bytes);
const request = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify(fields));
const valid = { size: bytes.length, digest: DIGEST, contenttype: 'text/csv' };
/** The issues of the 400 a refused upload request gets. */
const issuesOf = (body: Buffer) => refusalOf(() => parseUploadRequest(body)).problem.errors ?? [];

describe('parseUploadRequest', () => {
  it('EDU-1, issue 29 item 2: a body that is not JSON is the one 400 malformed-json every route answers', () => {
    expect(refusalOf(() => parseUploadRequest(Buffer.from('{"size": 3,'))).problem).toMatchObject({
      status: 400,
      type: problemTypeUri('malformed-json'),
      title: 'Malformed JSON',
      detail: 'The body is not valid JSON (RFC 8259).',
    });
  });

  it.each([
    ['0', 0, 'range'],
    ['a fraction', 2.5, 'integer'],
    ['a numeric string', '3', 'integer'],
    ['2^31', 2 ** 31, 'range'],
  ])('EDU-1: a size of %s is refused (an Integer from 1)', (_, size, rule) => {
    expect(issuesOf(request({ ...valid, size }))).toEqual([
      expect.objectContaining({ attribute: 'size', rule, requirement: 'EDU-1' }),
    ]);
  });

  it.each([1, MAX_UPLOAD_BYTES])('EDU-1: a size of %i is accepted', (size) => {
    expect(parseUploadRequest(request({ ...valid, size }))).toMatchObject({ size });
  });

  it.each([
    ['an array holding a digest', [DIGEST], 'string'],
    ['a number', 5, 'string'],
    ['another algorithm', 'md5=:x:', 'pattern'],
  ])('EDU-1: a digest as %s is refused', (_, digest, rule) => {
    expect(issuesOf(request({ ...valid, digest }))).toEqual([
      expect.objectContaining({ attribute: 'digest', rule, requirement: 'EDU-1' }),
    ]);
  });

  it('EDU-1: without contenttype the object is application/octet-stream', () => {
    expect(parseUploadRequest(request({ size: 3, digest: DIGEST }))).toEqual({
      size: 3,
      digest: DIGEST,
      contentType: 'application/octet-stream',
    });
  });

  it('EDU-1: a contenttype of 256 characters is accepted', () => {
    const contenttype = `text/${'x'.repeat(251)}`;
    expect(parseUploadRequest(request({ ...valid, contenttype }))).toMatchObject({ contentType: contenttype });
  });

  it.each([
    ['of 257 characters', `text/${'x'.repeat(252)}`, 'length'],
    ['as an array holding a media type', ['text/csv'], 'string'],
    ['not a media type', 'text', 'pattern'],
  ])('EDU-1: a contenttype %s is refused', (_, contenttype, rule) => {
    expect(issuesOf(request({ ...valid, contenttype }))).toEqual([
      expect.objectContaining({ attribute: 'contenttype', rule, requirement: 'EDU-1' }),
    ]);
  });

  it('EDU-1: unknown members are refused, at most 10 named, each name at most 64 characters', () => {
    // The issues echo the request: bounded, so a request cannot inflate its own answer.
    const fields: Record<string, unknown> = { ...valid, ['n'.repeat(500)]: 1 };
    for (let i = 0; i < 20; i++) fields[`extra${i}`] = i;
    const issues = issuesOf(request(fields));
    expect(issues).toHaveLength(10);
    expect(issues[0]).toEqual(
      expect.objectContaining({ attribute: 'n'.repeat(64), rule: 'unknown-member', requirement: 'EDU-1' }),
    );
  });
});

describe('grantUpload', () => {
  let ports: ReturnType<typeof memoryPorts>;
  beforeEach(() => {
    ports = memoryPorts();
  });
  const uploadDeps = () => ({
    store: ports.store,
    ledger: ports.ledger,
    publicBaseUrl: BASE,
    retentionSeconds: RETENTION_SECONDS,
    now: () => NOW,
  });

  it('EDU-1: an invalid upload request is 400 invalid-upload with its issues, and grants nothing', async () => {
    const answer = await answered(() => grantUpload(request({ ...valid, size: 0 }), 'partner-a', uploadDeps()));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      type: problemTypeUri('invalid-upload'),
      title: 'Invalid upload request',
      errors: [expect.objectContaining({ attribute: 'size' })],
    });
    expect(ports.ledger.uploads.size).toBe(0);
  });

  it('EDU-1: the grant is a PUT to the store for this upload with the headers it needs, valid 15 minutes, to be published within a day', async () => {
    const answer = await grantUpload(request(valid), 'partner-a', uploadDeps());
    const grant = JSON.parse(answer.body) as Record<string, unknown>;
    expect(grant).toMatchObject({
      method: 'PUT',
      headers: { 'content-length': String(bytes.length) },
      uploadexpiresat: new Date(NOW + 900_000).toISOString(),
      publishbefore: new Date(NOW + DAY).toISOString(),
      dataref: `${BASE}/payloads/uploads/${grant['uploadid'] as string}`,
    });
    expect(grant['uploadurl']).toContain(`uploads/${grant['uploadid'] as string}`);
  });
});

describe('resolveUploads', () => {
  let ports: ReturnType<typeof memoryPorts>;
  beforeEach(() => {
    ports = memoryPorts();
  });
  const uploadDeps = (now = NOW) => ({
    store: ports.store,
    ledger: ports.ledger,
    publicBaseUrl: BASE,
    retentionSeconds: RETENTION_SECONDS,
    now: () => now,
  });
  /** A granted upload (at NOW) with `object` in the store: its dataref. */
  async function uploaded(terms: Record<string, unknown> = valid, object: Buffer | undefined = bytes): Promise<string> {
    const grant = JSON.parse((await grantUpload(request(terms), 'partner-a', uploadDeps())).body) as {
      dataref: string;
      uploadid: string;
    };
    if (object)
      await ports.store.put(`uploads/${grant.uploadid}`, { bytes: object, contentType: 'text/csv', form: 'base64' });
    return grant.dataref;
  }
  const eventFor = (dataref: string, extra: Record<string, unknown> = {}) =>
    accepted(JSON.stringify({ specversion: '1.0', id: '9', source: 'urn:a', type: 't', dataref, ...extra }));
  /** The payload id the resolved event's `dataref` names. */
  const payloadIdIn = ([event]: readonly { readonly json: string }[]) =>
    idOf(JSON.parse(event!.json) as Record<string, unknown>);
  const fetchAs = (payloadId: string, client: string, now: number) =>
    answered(() =>
      fetchPayload(payloadId, client, undefined, {
        store: ports.store,
        ledger: ports.ledger,
        settings: { maxStreamedBytes: 1_000_000, presignedUrlSeconds: 300 },
        log: silentLog,
        now: () => now,
      }),
    );

  it.each([
    ['data', { data: 'x' }],
    ['data_base64', { data_base64: 'eA==' }],
  ])('EDU-1: an event with an upload and %s of its own is 400 upload-with-data', async (_, body) => {
    const refused = await asyncRefusalOf(async () =>
      resolveUploads([eventFor(await uploaded(), body)], 'partner-a', uploadDeps()),
    );
    expect(refused.problem).toMatchObject({
      status: 400,
      type: problemTypeUri('upload-with-data'),
      title: 'Upload and data',
    });
  });

  it('EDU-1: a refusal names the member in a batch, and no index for a single event', async () => {
    const unknown = eventFor(`${BASE}/payloads/uploads/00000000-0000-0000-0000-000000000000`);
    const plain = accepted(JSON.stringify({ specversion: '1.0', id: '1', source: 'urn:a', type: 't' }));
    const single = (await asyncRefusalOf(() => resolveUploads([unknown], 'partner-a', uploadDeps()))).problem;
    expect(single).toMatchObject({ type: problemTypeUri('upload-unknown'), title: 'Unknown upload' });
    expect(single).not.toHaveProperty('index');
    expect(
      (await asyncRefusalOf(() => resolveUploads([plain, unknown], 'partner-a', uploadDeps()))).problem,
    ).toMatchObject({ index: 1 });
  });

  it('EDU-1: an upload may be published up to the end of its window; one millisecond later it is upload-unknown', async () => {
    const event = eventFor(await uploaded());
    expect(await resolveUploads([event], 'partner-a', uploadDeps(NOW + DAY))).toHaveLength(1);
    const late = await asyncRefusalOf(() => resolveUploads([event], 'partner-a', uploadDeps(NOW + DAY + 1)));
    expect(late.problem.type).toBe(problemTypeUri('upload-unknown'));
  });

  it('EDU-1: the refusal of an unknown upload echoes at most 200 characters of its dataref', async () => {
    const dataref = `${BASE}/payloads/uploads/${'f'.repeat(3000)}`;
    const refused = await asyncRefusalOf(() => resolveUploads([eventFor(dataref)], 'partner-a', uploadDeps()));
    expect(refused.problem.detail).toContain(dataref.slice(0, 200));
    expect(refused.problem.detail).not.toContain(dataref.slice(0, 201));
  });

  it.each([
    ['with the promised digest but not the promised size', { ...valid, size: bytes.length + 1 }, bytes],
    ['of the promised size but other bytes', valid, Buffer.alloc(bytes.length)],
  ])('EDU-1: an object %s is 400 upload-incomplete', async (_, terms, object) => {
    const refused = await asyncRefusalOf(async () =>
      resolveUploads([eventFor(await uploaded(terms, object))], 'partner-a', uploadDeps()),
    );
    expect(refused.problem).toMatchObject({
      status: 400,
      type: problemTypeUri('upload-incomplete'),
      title: 'Upload incomplete',
    });
  });

  it("EDU-1, CARD-6: once published, the publisher fetches the upload's bytes with the upload's media type", async () => {
    const id = payloadIdIn(await resolveUploads([eventFor(await uploaded())], 'partner-a', uploadDeps(NOW + 3600_000)));
    const answer = await fetchAs(id, 'partner-a', NOW + 3600_000);
    expect(answer.status).toBe(200);
    expect(Buffer.from(answer.body, 'base64')).toEqual(bytes);
    expect(answer.headers['content-type']).toBe('text/csv');
  });

  it("EDU-1: the event's own datacontenttype is the media type a fetch answers with", async () => {
    const id = payloadIdIn(
      await resolveUploads(
        [eventFor(await uploaded(), { datacontenttype: 'application/vnd.ms-excel' })],
        'partner-a',
        uploadDeps(),
      ),
    );
    expect((await fetchAs(id, 'partner-a', NOW)).headers['content-type']).toBe('application/vnd.ms-excel');
  });

  it('EDU-1: uploaded data lives the retention counted from the grant, whenever it is published', async () => {
    // The object may have been written at the grant: the ledger may not promise it longer than the bucket keeps it.
    const id = payloadIdIn(
      await resolveUploads([eventFor(await uploaded())], 'partner-a', uploadDeps(NOW + 20 * 3600_000)),
    );
    expect((await fetchAs(id, 'partner-a', NOW + RETENTION_SECONDS * 1000)).status).toBe(200);
    expect((await fetchAs(id, 'partner-a', NOW + RETENTION_SECONDS * 1000 + 1)).status).toBe(410);
  });
});
