/**
 * The claim check end to end on the laptop host (EDU-1, CARD-6, CE-11, CE-14, CE-15): events
 * published at POST /events, their data moved to s3rver, delivered over HTTPS to real receivers
 * with `dataref`, and fetched back at Koerier's data URL with the subscriber's access token.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { localName } from '../../functions/config/resources.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, publishEvents } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
  type RecordedRequest,
} from '../support/https-receiver.js';
import { problemTypeUri } from '../support/problem-types.js';

const authority = createLocalCertificateAuthority();
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:claim';
const BUCKET = localName.bucket('payloads');
let koerier: TestHost;
let dir: string;
let publisher: string;
let subscriber: string;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-claim-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
  });
  publisher = await koerier.token('dev-publisher', ['events:publish']);
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A receiver and a push subscription to it, for a type of its own. */
async function pushTarget(
  options: { type?: string; maxinlinebytes?: number } = {},
): Promise<{ receiver: HttpsReceiver; type: string }> {
  const receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
  receivers.push(receiver);
  const type = options.type ?? `nl.example.claim.${randomUUID().slice(0, 8)}.v1`;
  const { response } = await apiAs(koerier.url, subscriber).POST('/subscriptions', {
    body: {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
      ...(options.maxinlinebytes === undefined ? {} : { maxinlinebytes: options.maxinlinebytes }),
    },
  });
  expect(response.status).toBe(201);
  return { receiver, type };
}

/** A structured event of exactly `size` bytes of JSON format text, its data a JSON string. */
function eventOfSize(type: string, size: number, extra: Record<string, unknown> = {}): { json: string; id: string } {
  const id = randomUUID();
  const head = { specversion: '1.0', id, source: SOURCE, type, datacontenttype: 'text/plain', ...extra };
  const empty = JSON.stringify({ ...head, data: '' });
  const json = JSON.stringify({ ...head, data: 'x'.repeat(size - Buffer.byteLength(empty)) });
  expect(Buffer.byteLength(json)).toBe(size);
  return { json, id };
}

async function delivered(
  receiver: HttpsReceiver,
): Promise<{ request: RecordedRequest; event: Record<string, unknown> }> {
  const [request] = await receiver.waitForRequests(1, { timeoutMs: 20_000 });
  // The official SDK reads every delivery.
  const parsed = HTTP.toEvent({ headers: request!.headers, body: request!.body });
  expect(Array.isArray(parsed)).toBe(false);
  return { request: request!, event: JSON.parse(request!.body) as Record<string, unknown> };
}

function sha256(bytes: Buffer): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
}

async function fetchData(dataref: string, token: string, init: RequestInit = {}): Promise<Response> {
  return fetch(dataref, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
    redirect: 'manual',
  });
}

async function objectCount(): Promise<number> {
  const listed = await koerier.host.awsClients.s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return listed.KeyCount ?? 0;
}

interface UploadGrant {
  readonly uploadurl: string;
  readonly headers: Record<string, string>;
  readonly dataref: string;
}

/** fetch sets Content-Length itself (to the body's length) and refuses it as a header. */
function withoutContentLength(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'content-length'));
}

async function requestUpload(bytes: Buffer, contentType: string): Promise<UploadGrant> {
  const { data, response } = await apiAs(koerier.url, publisher).POST('/payloads', {
    body: { size: bytes.length, digest: sha256(bytes), contenttype: contentType },
  });
  expect(response.status).toBe(201);
  return data as UploadGrant;
}

/** Upload, publish an event referring to the upload, receive it, and fetch its data URL as the subscriber. */
async function uploadAndDeliver(receiver: HttpsReceiver, type: string, bytes: Buffer, contentType: string) {
  const grant = await requestUpload(bytes, contentType);
  expect(grant.dataref).toMatch(new RegExp(`^${koerier.url}/payloads/uploads/`));
  const put = await fetch(grant.uploadurl, {
    method: 'PUT',
    headers: withoutContentLength(grant.headers),
    body: bytes,
  });
  expect(put.status).toBe(200);
  const json = JSON.stringify({
    specversion: '1.0',
    id: randomUUID(),
    source: SOURCE,
    type,
    datacontenttype: contentType,
    dataref: grant.dataref,
  });
  expect((await publishEvents(apiAs(koerier.url, publisher), json)).response.status).toBe(202);
  const { event } = await delivered(receiver);
  expect(event['dataref']).toMatch(new RegExp(`^${koerier.url}/payloads/[A-Za-z0-9_-]{43}$`));
  expect(event['koerierdatasize']).toBe(bytes.length);
  expect(event['koerierdatadigest']).toBe(sha256(bytes));
  const fetched = await fetchData(event['dataref'] as string, subscriber);
  return { event, fetched };
}

describe.concurrent('claim check on the laptop host', () => {
  it('EDU-1, CARD-6, CE-15: a 1 MB event goes out with dataref, digest and size; the subscriber fetches data matching the digest', async () => {
    const { receiver, type } = await pushTarget();
    const { json, id } = eventOfSize(type, 1_000_000);
    expect((await publishEvents(apiAs(koerier.url, publisher), json)).response.status).toBe(202);
    const { event } = await delivered(receiver);
    expect(event['id']).toBe(id);
    expect(event['data']).toBeUndefined();
    expect(event['datacontenttype']).toBe('text/plain');
    expect(event['dataref']).toMatch(new RegExp(`^${koerier.url}/payloads/[A-Za-z0-9_-]{43}$`));
    const data = (JSON.parse(json) as { data: string }).data;
    expect(event['koerierdatasize']).toBe(Buffer.byteLength(data));
    const fetched = await fetchData(event['dataref'] as string, subscriber);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('text/plain');
    const bytes = Buffer.from(await fetched.arrayBuffer());
    expect(sha256(bytes)).toBe(event['koerierdatadigest']);
    expect(bytes.toString('utf8')).toBe(data);
    // ETag from the digest: a conditional fetch is a 304.
    const again = await fetchData(event['dataref'] as string, subscriber, {
      headers: { 'if-none-match': fetched.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
  });

  it('CE-14: an event of exactly the threshold (65,536 bytes) is delivered inline, byte for byte; one byte more goes by reference', async () => {
    const { receiver, type } = await pushTarget();
    const atLimit = eventOfSize(type, 65_536);
    expect((await publishEvents(apiAs(koerier.url, publisher), atLimit.json)).response.status).toBe(202);
    const first = await delivered(receiver);
    expect(first.request.body).toBe(atLimit.json);

    const over = eventOfSize(type, 65_537);
    expect((await publishEvents(apiAs(koerier.url, publisher), over.json)).response.status).toBe(202);
    const [, second] = await receiver.waitForRequests(2, { timeoutMs: 20_000 });
    expect(HTTP.toEvent({ headers: second!.headers, body: second!.body })).toMatchObject({
      id: over.id,
      koerierdatasize: expect.any(Number),
    });
    const event = JSON.parse(second!.body) as Record<string, unknown>;
    expect(event['id']).toBe(over.id);
    expect(event['data']).toBeUndefined();
    expect(event['koerierdatasize']).toBe(
      65_537 - Buffer.byteLength(JSON.stringify({ ...JSON.parse(over.json), data: '' })),
    );
  });

  it('EDU-1: a client that neither published the event nor was sent it gets 404, like for data that does not exist', async () => {
    const { receiver, type } = await pushTarget();
    const { json } = eventOfSize(type, 100_000);
    expect((await publishEvents(apiAs(koerier.url, publisher), json)).response.status).toBe(202);
    const { event } = await delivered(receiver);
    const stranger = await koerier.host.issueToken('partner-stranger', ['events:consume']);
    const refused = await fetchData(event['dataref'] as string, stranger);
    expect(refused.status).toBe(404);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    const unknown = await fetchData(`${koerier.url}/payloads/${'A'.repeat(43)}`, subscriber);
    expect(unknown.status).toBe(404);
    expect(await refused.json()).toEqual(await unknown.json());
    // The publisher may read back its own event's data.
    expect((await fetchData(event['dataref'] as string, publisher)).status).toBe(200);
  });

  it('EDU-1: once the lifecycle rule has removed the object, the fetch answers 410 as a problem', async () => {
    const { receiver, type } = await pushTarget();
    const { json } = eventOfSize(type, 100_000);
    expect((await publishEvents(apiAs(koerier.url, publisher), json)).response.status).toBe(202);
    const { event } = await delivered(receiver);
    const id = (event['dataref'] as string).split('/').at(-1)!;
    await koerier.host.awsClients.s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: `payloads/${id}` }));
    const gone = await fetchData(event['dataref'] as string, subscriber);
    expect(gone.status).toBe(410);
    expect(gone.headers.get('content-type')).toBe('application/problem+json');
    expect(await gone.json()).toMatchObject({ status: 410, type: problemTypeUri('payload-expired') });
  });

  it("CE-11, CE-13: a producer's own dataref is forwarded untouched, with no claim-check attributes", async () => {
    const { receiver, type } = await pushTarget();
    const json = JSON.stringify({
      specversion: '1.0',
      id: randomUUID(),
      source: SOURCE,
      type,
      dataref: 'https://school.example/files/42?v=1',
    });
    expect((await publishEvents(apiAs(koerier.url, publisher), json)).response.status).toBe(202);
    const { request } = await delivered(receiver);
    expect(request.body).toBe(json);
  });

  it('EDU-1: a subscription with maxinlinebytes of 2 MiB gets a 1 MB event with its data inline again, as published', async () => {
    const { receiver, type } = await pushTarget({ maxinlinebytes: 2 * 1024 * 1024 });
    const { json } = eventOfSize(type, 1_000_000);
    expect((await publishEvents(apiAs(koerier.url, publisher), json)).response.status).toBe(202);
    const { request, event } = await delivered(receiver);
    expect(event).toEqual(JSON.parse(json));
    expect(request.body).toBe(json);
  });

  it('EDU-1: a 50 MB object through the upload route: presigned PUT, publish with its dataref, Koerier checks and rewrites it; the subscriber follows the redirect', async () => {
    const { receiver, type } = await pushTarget();
    const bytes = Buffer.alloc(50_000_000, 7);
    bytes.write('Koerier upload', 0);
    const { event, fetched } = await uploadAndDeliver(receiver, type, bytes, 'application/octet-stream');
    expect(fetched.status).toBe(307);
    const object = Buffer.from(await (await fetch(fetched.headers.get('location')!)).arrayBuffer());
    expect(object.length).toBe(50_000_000);
    expect(sha256(object)).toBe(event['koerierdatadigest']);
  });

  it('EDU-1, CARD-6: a 5 MB event (data uploaded) goes to a push subscriber, which fetches data matching the digest', async () => {
    const { receiver, type } = await pushTarget();
    const bytes = Buffer.from('leerling;klas;\n'.repeat(400_000).slice(0, 5_000_000));
    const { event, fetched } = await uploadAndDeliver(receiver, type, bytes, 'text/csv');
    expect(event['datacontenttype']).toBe('text/csv');
    expect(fetched.status).toBe(307);
    const object = Buffer.from(await (await fetch(fetched.headers.get('location')!)).arrayBuffer());
    expect(sha256(object)).toBe(event['koerierdatadigest']);
    expect(object.equals(bytes)).toBe(true);
  });

  it('EDU-1: an upload whose object differs from what was promised is refused before the 202', async () => {
    const { type } = await pushTarget();
    const promised = Buffer.from('the promised bytes');
    const grant = await requestUpload(promised, 'text/plain');
    const put = await fetch(grant.uploadurl, {
      method: 'PUT',
      headers: withoutContentLength(grant.headers),
      body: Buffer.from('other bytes, other size'),
    });
    expect(put.status).toBeLessThan(500);
    const json = JSON.stringify({
      specversion: '1.0',
      id: randomUUID(),
      source: SOURCE,
      type,
      datacontenttype: 'text/plain',
      dataref: grant.dataref,
    });
    await expect(publishEvents(apiAs(koerier.url, publisher), json)).rejects.toMatchObject({
      status: 400,
      body: { type: problemTypeUri('upload-incomplete') },
    });
  });

  it('EDU-1: an event above the largest accepted (4 MiB) is refused with 413 naming the upload route', async () => {
    const { type } = await pushTarget();
    const { json } = eventOfSize(type, 4 * 1024 * 1024 + 1);
    await expect(publishEvents(apiAs(koerier.url, publisher), json)).rejects.toMatchObject({
      status: 413,
      detail: expect.stringContaining('POST /payloads'),
    });
  });
});

// Alone, after the concurrent ones: it counts the bucket's objects.
describe('claim check: one object per event', () => {
  it('EDU-1: three subscribers of one large event share one S3 object, and each may fetch it', async () => {
    const type = `nl.example.claim.shared.${randomUUID().slice(0, 8)}.v1`;
    const targets = await Promise.all([pushTarget({ type }), pushTarget({ type }), pushTarget({ type })]);
    const before = await objectCount();
    const { json } = eventOfSize(type, 300_000);
    expect((await publishEvents(apiAs(koerier.url, publisher), json)).response.status).toBe(202);
    const events = await Promise.all(targets.map(async ({ receiver }) => (await delivered(receiver)).event));
    expect(new Set(events.map((event) => event['dataref'])).size).toBe(1);
    expect(await objectCount()).toBe(before + 1);
    const listed = await koerier.host.awsClients.s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    const id = (events[0]!['dataref'] as string).split('/').at(-1)!;
    expect(listed.Contents?.filter((object) => object.Key?.endsWith(id))).toHaveLength(1);
    expect((await fetchData(events[0]!['dataref'] as string, subscriber)).status).toBe(200);
  });
});
