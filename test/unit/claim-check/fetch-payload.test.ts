/**
 * GET /payloads/{id} (EDU-1, CARD-6): the audit log of every fetch, the edges of expiry and of the
 * streamed size, conditional requests, and an object the lifecycle rule removed early.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { fetchPayload, type FetchDependencies } from '../../../functions/core/claim-check/fetch-payload.js';
import { etagOf, payloadObjectKey } from '../../../functions/core/claim-check/payload-reference.js';
import { answered } from '../../../functions/core/http/problems.js';
import { problemTypeUri } from '../../support/problem-types.js';
import { recordingLog } from '../../support/recording-log.js';
import { DAY, NOW, eventOfSize, idOf, memoryPorts, sha256 } from './claim-check-fixtures.js';

let ports: ReturnType<typeof memoryPorts>;
let log: ReturnType<typeof recordingLog>;
beforeEach(() => {
  ports = memoryPorts();
  log = recordingLog();
});

const deps = (now = NOW + 1000, maxStreamedBytes = 4 * 1024 * 1024): FetchDependencies => ({
  store: ports.store,
  ledger: ports.ledger,
  settings: { maxStreamedBytes, presignedUrlSeconds: 300 },
  log,
  now: () => now,
});

describe('fetchPayload: the audit log', () => {
  it('EDU-1: a refused fetch is logged too, with the client, the id asked for (at most 64 characters) and when', async () => {
    // Whoever probes for data must show up in the log, and a long id must not flood it.
    const probe = 'x'.repeat(5000);
    expect((await answered(() => fetchPayload(probe, 'stranger', undefined, deps()))).status).toBe(404);
    expect(log.lines).toEqual([
      expect.objectContaining({
        fields: { client: 'stranger', payloadId: 'x'.repeat(64), at: new Date(NOW + 1000).toISOString() },
      }),
    ]);
  });

  it('EDU-1: a fetch answered with the data is logged with who, which event, the answer and the size', async () => {
    const event = await ports.stored(eventOfSize(100_000));
    const answer = await fetchPayload(idOf(event), 'publisher', undefined, deps());
    expect(answer.status).toBe(200);
    expect(log.lines).toEqual([
      expect.objectContaining({
        fields: expect.objectContaining({
          client: 'publisher',
          id: event['id'],
          source: event['source'],
          answer: 200,
          size: event['koerierdatasize'],
        }),
      }),
    ]);
  });

  it('EDU-1: a fetch answered 304 is logged with who, which event and the answer', async () => {
    const event = await ports.stored(eventOfSize(100_000));
    const etag = etagOf(event['koerierdatadigest'] as string);
    expect((await fetchPayload(idOf(event), 'publisher', etag, deps())).status).toBe(304);
    expect(log.lines).toEqual([
      expect.objectContaining({
        fields: expect.objectContaining({ client: 'publisher', id: event['id'], answer: 304 }),
      }),
    ]);
  });
});

describe('fetchPayload: answers', () => {
  it('EDU-1: the data comes as bytes (base64 in the answer) with its media type, digest and a private, uncached ETag', async () => {
    const event = await ports.stored(eventOfSize(100_000));
    const answer = await fetchPayload(idOf(event), 'publisher', undefined, deps());
    // The HTTP adapter decodes the body only when `base64` says so: without it a client gets base64 text, not its data.
    expect(answer.base64).toBe(true);
    expect(sha256(Buffer.from(answer.body, 'base64'))).toBe(event['koerierdatadigest']);
    expect(answer.headers).toMatchObject({
      'content-type': 'text/plain',
      'repr-digest': event['koerierdatadigest'],
      'cache-control': 'private, no-store',
    });
  });

  it('EDU-1: the data is there up to and including the moment it expires; one millisecond later it is 410 payload-expired', async () => {
    const event = await ports.stored(eventOfSize(100_000));
    const expiresAt = NOW + 15 * DAY;
    expect((await fetchPayload(idOf(event), 'publisher', undefined, deps(expiresAt))).status).toBe(200);
    const gone = await answered(() => fetchPayload(idOf(event), 'publisher', undefined, deps(expiresAt + 1)));
    expect(gone.status).toBe(410);
    expect(JSON.parse(gone.body)).toMatchObject({
      type: problemTypeUri('payload-expired'),
      title: 'Data expired',
      status: 410,
    });
  });

  it('EDU-1: an object the store no longer has, before its expiry, is 410 payload-expired like an expired one', async () => {
    // The bucket's lifecycle rule may remove an object before the ledger's expiry: still 410, never a 500.
    const event = await ports.stored(eventOfSize(100_000));
    ports.store.objects.delete(payloadObjectKey(idOf(event)));
    const gone = await answered(() => fetchPayload(idOf(event), 'publisher', undefined, deps()));
    expect(gone.status).toBe(410);
    expect(JSON.parse(gone.body)).toMatchObject({ type: problemTypeUri('payload-expired'), title: 'Data expired' });
  });

  it('EDU-1: an object of exactly maxStreamedBytes comes in the answer; one byte more is a 307 to the store', async () => {
    const event = await ports.stored(eventOfSize(100_000));
    const size = event['koerierdatasize'] as number;
    expect((await fetchPayload(idOf(event), 'publisher', undefined, deps(NOW, size))).status).toBe(200);
    expect((await fetchPayload(idOf(event), 'publisher', undefined, deps(NOW, size - 1))).status).toBe(307);
  });
});

describe('fetchPayload: If-None-Match (RFC 9110 §13.1.2)', () => {
  it.each([
    ['the ETag among others', (etag: string) => `"other", ${etag}`, 304],
    ['the ETag first, then others', (etag: string) => `${etag},"other"`, 304],
    ['*', () => '*', 304],
    ['* after another tag', () => '"other", *', 304],
    ['only other tags', () => '"other", "more"', 200],
    ['a weak form of another tag', () => 'W/"other"', 200],
  ])('EDU-1: If-None-Match with %s answers %i', async (_, header, status) => {
    const event = await ports.stored(eventOfSize(100_000));
    const answer = await fetchPayload(
      idOf(event),
      'publisher',
      header(etagOf(event['koerierdatadigest'] as string)),
      deps(),
    );
    expect(answer.status).toBe(status);
  });

  it('EDU-1: a 304 carries the ETag and stays private and uncached', async () => {
    const event = await ports.stored(eventOfSize(100_000));
    const etag = etagOf(event['koerierdatadigest'] as string);
    const answer = await fetchPayload(idOf(event), 'publisher', etag, deps());
    expect(answer.status).toBe(304);
    expect(answer.headers).toMatchObject({ etag, 'cache-control': 'private, no-store' });
  });
});
