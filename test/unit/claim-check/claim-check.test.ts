/**
 * The claim check's pure parts and use cases over the memory adapters, without emulators
 * (EDU-1, CARD-6, CE-11, CE-14, CE-15).
 */
import { createHash, randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { acceptedEvent, type AcceptedEvent } from '../../../functions/core/cloudevents/accepted-event.js';
import { attributesOf } from '../../../functions/core/cloudevents/stored-event.js';
import { fetchPayload, type FetchDependencies } from '../../../functions/core/claim-check/fetch-payload.js';
import { InMemoryClaimCheckStore, InMemoryPayloadLedger } from '../../support/memory/claim-check-memory-adapters.js';
import { offloadEvents, planOffload } from '../../../functions/core/claim-check/offload.js';
import { outgoingEvents } from '../../../functions/core/claim-check/outgoing-events.js';
import {
  eventDataOf,
  etagOf,
  isPayloadId,
  payloadIdOf,
  payloadObjectKey,
  rehydratedEvent,
  referencingEvent,
} from '../../../functions/core/claim-check/payload-reference.js';
import { grantUpload, parseUploadRequest, resolveUploads } from '../../../functions/core/claim-check/uploads.js';
import { answered } from '../../../functions/core/http/problems.js';
import type { LogFields } from '../../../functions/core/ports/log.js';
import { asyncRefusalOf, refusalOf } from '../../support/refusals.js';
import { problemTypeUri } from '../../support/problem-types.js';

const BASE = 'https://koerier.example';
const SETTINGS = { inlineEventBytes: 65_536, maxQueuedEventBytes: 253_952 };
const NOW = Date.UTC(2026, 10, 23, 12);
const DAY = 24 * 3600 * 1000;

function sha256(bytes: Buffer): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
}

function accepted(json: string): AcceptedEvent {
  return acceptedEvent(attributesOf(JSON.parse(json) as Record<string, unknown>), json);
}

/** A structured event of exactly `size` bytes, its data a text string. */
function eventOfSize(size: number, extra: Record<string, unknown> = {}): AcceptedEvent {
  const head = {
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:1:lvs',
    type: 'nl.edu.x.v1',
    datacontenttype: 'text/plain',
    ...extra,
  };
  const empty = Buffer.byteLength(JSON.stringify({ ...head, data: '' }));
  return accepted(JSON.stringify({ ...head, data: 'z'.repeat(size - empty) }));
}

let store: InMemoryClaimCheckStore;
let ledger: InMemoryPayloadLedger;
let logs: { message: string; fields: LogFields }[];
beforeEach(() => {
  store = new InMemoryClaimCheckStore();
  ledger = new InMemoryPayloadLedger();
  logs = [];
});

/** The payload id a queued event's `dataref` names. */
const payloadIdIn = (json: string) => (JSON.parse(json) as { dataref: string }).dataref.split('/').at(-1)!;

const offloadDeps = () => ({
  store,
  ledger,
  settings: { ...SETTINGS, publicBaseUrl: BASE, retentionSeconds: 15 * 86400 },
});

describe('payload references', () => {
  it('CE-17, EDU-1, issue 28: the object is named by source + id and its content, 43 base64url characters', () => {
    const content = { digest: sha256(Buffer.from('a')), contentType: 'text/plain', form: 'text' } as const;
    expect(payloadIdOf('urn:a', '1', content)).toBe(payloadIdOf('urn:a', '1', { ...content }));
    expect(payloadIdOf('urn:a', '1', content)).not.toBe(payloadIdOf('urn:a:1', '', content));
    // The same source + id with other data, another media type or form, or from an upload names another object.
    for (const other of [
      { ...content, digest: sha256(Buffer.from('b')) },
      { ...content, contentType: 'text/csv' },
      { ...content, form: 'base64' as const },
      { digest: content.digest, contentType: content.contentType, uploadId: 'c0ffee00-0000-4000-8000-000000000000' },
    ]) {
      expect(payloadIdOf('urn:a', '1', other)).not.toBe(payloadIdOf('urn:a', '1', content));
    }
    expect(isPayloadId(payloadIdOf('urn:a', '1', content))).toBe(true);
    expect(isPayloadId('../etc/passwd')).toBe(false);
  });

  it.each([
    ['JSON data', { datacontenttype: 'application/json', data: { naam: 'Jan', lijst: [1, 2.5, 'é'] } }, 'json'],
    ['JSON data without datacontenttype', { data: [1, { a: null }] }, 'json'],
    ['text data', { datacontenttype: 'text/csv', data: 'a;b\n1;2\n' }, 'text'],
    [
      'binary data',
      { datacontenttype: 'application/pdf', data_base64: Buffer.from([0, 1, 2, 255, 254]).toString('base64') },
      'base64',
    ],
  ])('EDU-1, CE-13: %s goes to the claim check and comes back as the same event', (_, body, form) => {
    const original = JSON.stringify({
      specversion: '1.0',
      id: '1',
      source: 'urn:a',
      type: 't',
      comexample: 'kept',
      ...body,
    });
    const parsed = JSON.parse(original) as Record<string, unknown>;
    const data = eventDataOf(original, parsed)!;
    expect(data.form).toBe(form);
    const reference = JSON.parse(referencingEvent(parsed, `${BASE}/payloads/x`, data)) as Record<string, unknown>;
    expect(reference).toMatchObject({
      comexample: 'kept',
      dataref: `${BASE}/payloads/x`,
      koerierdatasize: data.bytes.length,
      koerierdatadigest: sha256(data.bytes),
    });
    expect(reference['data']).toBeUndefined();
    expect(reference['data_base64']).toBeUndefined();
    expect(JSON.parse(rehydratedEvent(reference, data.bytes, data.form))).toEqual(parsed);
  });

  it('the ETag is the digest, quoted: the same bytes, the same tag', () => {
    expect(etagOf(sha256(Buffer.from('a')))).toBe(etagOf(sha256(Buffer.from('a'))));
    expect(etagOf(sha256(Buffer.from('a')))).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
  });
});

describe('planOffload', () => {
  it('CE-14, EDU-1: an event of exactly the threshold stays inline; one byte more goes by reference', () => {
    const plan = planOffload([eventOfSize(65_536), eventOfSize(65_537)], SETTINGS);
    expect(plan).toEqual([1]);
  });

  it("CE-11: a producer's own dataref is never replaced; too large to queue, it is 413 naming the upload route", () => {
    expect(planOffload([eventOfSize(200_000, { dataref: 'https://school.example/f' })], SETTINGS)).toEqual([]);
    const refused = refusalOf(() =>
      planOffload([eventOfSize(253_953, { dataref: 'https://school.example/f' })], SETTINGS),
    );
    expect(refused.problem.status).toBe(413);
    expect(refused.problem.detail).toContain('POST /payloads');
  });

  it('EDU-1: binary data (data_base64, a third larger than its bytes) of 1 MB goes by reference', () => {
    const binary = accepted(
      JSON.stringify({
        specversion: '1.0',
        id: '1',
        source: 'urn:a',
        type: 't',
        datacontenttype: 'application/pdf',
        data_base64: Buffer.alloc(1_000_000).toString('base64'),
      }),
    );
    expect(planOffload([binary], SETTINGS)).toEqual([0]);
  });

  it("EDU-1: an event may not carry the claim check's own attributes", () => {
    expect(
      refusalOf(() => planOffload([eventOfSize(1000, { koerierdatadigest: 'sha-256=:x:' })], SETTINGS)).problem.status,
    ).toBe(400);
  });

  it('EDU-1: attributes alone too large for a queue message are 413, data or not', () => {
    const huge = accepted(
      JSON.stringify({ specversion: '1.0', id: '1', source: 'urn:a', type: 't', comexample: 'a'.repeat(300_000) }),
    );
    expect(refusalOf(() => planOffload([huge], SETTINGS)).problem.status).toBe(413);
  });
});

describe('offloadEvents', () => {
  it('EDU-1, CARD-6: one object per event, the ledger knows its publisher, and the queued event fits a message', async () => {
    const events = [eventOfSize(1000), eventOfSize(1_000_000)];
    const queued = await offloadEvents(events, [1], 'partner-a', NOW, offloadDeps());
    expect(queued[0]).toBe(events[0]);
    expect(store.puts).toBe(1);
    expect(Buffer.byteLength(queued[1]!.json)).toBeLessThan(SETTINGS.maxQueuedEventBytes);
    const payloadId = payloadIdIn(queued[1]!.json);
    expect(await ledger.get(payloadId)).toMatchObject({
      publisher: 'partner-a',
      size: store.objects.get(payloadObjectKey(payloadId))!.bytes.length,
      readers: [],
    });
    expect((await ledger.get(payloadId))!.objectExpiresAt).toBe(NOW + 15 * DAY);
  });
});

describe('fetchPayload', () => {
  async function stored(size: number) {
    const event = eventOfSize(size);
    const [queued] = await offloadEvents([event], [0], 'publisher', NOW, offloadDeps());
    return JSON.parse(queued!.json) as Record<string, unknown>;
  }
  const deps = (now = NOW + 1000): FetchDependencies => ({
    store,
    ledger,
    settings: { maxStreamedBytes: 4 * 1024 * 1024, presignedUrlSeconds: 300 },
    log: { info: (message, fields) => logs.push({ message, fields }), warn: () => undefined, error: () => undefined },
    now: () => now,
  });
  const idOf = (event: Record<string, unknown>) => (event['dataref'] as string).split('/').at(-1)!;

  it('EDU-1: the publisher and recorded readers get the bytes with the digest as ETag; anyone else the same 404 as for nothing', async () => {
    const event = await stored(100_000);
    await ledger.addReaders(idOf(event), ['subscriber-1']);
    for (const client of ['publisher', 'subscriber-1']) {
      const answer = await fetchPayload(idOf(event), client, undefined, deps());
      expect(answer.status).toBe(200);
      expect(sha256(Buffer.from(answer.body, 'base64'))).toBe(event['koerierdatadigest']);
      expect(answer.headers['etag']).toBe(etagOf(event['koerierdatadigest'] as string));
    }
    const stranger = await answered(() => fetchPayload(idOf(event), 'subscriber-2', undefined, deps()));
    const nothing = await answered(() => fetchPayload('A'.repeat(43), 'subscriber-2', undefined, deps()));
    expect(stranger.status).toBe(404);
    expect(stranger).toEqual(nothing);
  });

  it('EDU-1: every fetch is logged with who, which event and when; a presigned URL never', async () => {
    const event = await stored(5_000_000);
    const answer = await fetchPayload(idOf(event), 'publisher', undefined, deps());
    expect(answer.status).toBe(307);
    expect(answer.headers['location']).toContain('expires=300');
    expect(logs).toEqual([
      {
        message: 'payload fetched',
        fields: expect.objectContaining({
          client: 'publisher',
          id: JSON.parse(JSON.stringify(event))['id'],
          at: new Date(NOW + 1000).toISOString(),
          answer: 307,
        }),
      },
    ]);
    expect(JSON.stringify(logs)).not.toContain(answer.headers['location']);
  });

  it('EDU-1: past the object retention the answer is 410 as a problem; an If-None-Match of the ETag is 304', async () => {
    const event = await stored(100_000);
    const gone = await answered(() => fetchPayload(idOf(event), 'publisher', undefined, deps(NOW + 15 * DAY + 1)));
    expect(gone.status).toBe(410);
    expect(gone.headers['content-type']).toBe('application/problem+json');
    const etag = etagOf(event['koerierdatadigest'] as string);
    expect((await fetchPayload(idOf(event), 'publisher', etag, deps())).status).toBe(304);
  });
});

describe('outgoingEvents', () => {
  const outgoingDeps = () => ({ store, ledger, publicBaseUrl: BASE, defaultMaxInlineBytes: 65_536 });

  it('EDU-1: by default a large event goes by reference and its owner becomes a reader; with room it goes inline as published', async () => {
    const event = eventOfSize(1_000_000);
    const [queued] = await offloadEvents([event], [0], 'publisher', NOW, offloadDeps());
    const payloadId = payloadIdIn(queued!.json);
    expect(await outgoingEvents({ owner: 'small' }, [queued!.json], outgoingDeps())).toEqual([queued!.json]);
    expect((await ledger.get(payloadId))!.readers).toEqual(['small']);
    expect(await outgoingEvents({ owner: 'large', maxInlineBytes: 2_000_000 }, [queued!.json], outgoingDeps())).toEqual(
      [event.json],
    );
    expect((await ledger.get(payloadId))!.readers).toEqual(['small']);
  });

  it('EDU-1: an object that does not match its digest is never sent inline', async () => {
    const event = eventOfSize(100_000);
    const [queued] = await offloadEvents([event], [0], 'publisher', NOW, offloadDeps());
    const key = payloadObjectKey(payloadIdIn(queued!.json));
    store.objects.set(key, { ...store.objects.get(key)!, bytes: Buffer.from('tampered') });
    await expect(
      outgoingEvents({ owner: 'o', maxInlineBytes: 1_000_000 }, [queued!.json], outgoingDeps()),
    ).rejects.toThrow(/digest/);
  });
});

describe('uploads', () => {
  const uploadDeps = () => ({ store, ledger, publicBaseUrl: BASE, retentionSeconds: 15 * 86400, now: () => NOW });
  const bytes = Buffer.from('a large enrolment list');

  it('EDU-1: an upload request names size, SHA-256 and media type; anything else is refused', () => {
    expect(
      parseUploadRequest(Buffer.from(JSON.stringify({ size: 3, digest: sha256(bytes), contenttype: 'text/csv' }))),
    ).toMatchObject({ size: 3 });
    const { problem } = refusalOf(() =>
      parseUploadRequest(
        Buffer.from(JSON.stringify({ size: 2 ** 31, digest: 'md5=x', contenttype: 'not a type', extra: 1 })),
      ),
    );
    expect(problem.errors?.map((issue) => issue.attribute).sort()).toEqual(['contenttype', 'digest', 'extra', 'size']);
  });

  it('EDU-1: an event referring to a complete upload of this publisher gets dataref rewritten; another publisher or other bytes are refused', async () => {
    const grant = await grantUpload(
      Buffer.from(JSON.stringify({ size: bytes.length, digest: sha256(bytes), contenttype: 'text/plain' })),
      'partner-a',
      uploadDeps(),
    );
    expect(grant.status).toBe(201);
    const { dataref, uploadid } = JSON.parse(grant.body) as { dataref: string; uploadid: string };
    const event = accepted(JSON.stringify({ specversion: '1.0', id: '9', source: 'urn:a', type: 't', dataref }));
    expect((await asyncRefusalOf(() => resolveUploads([event], 'partner-a', uploadDeps()))).problem.type).toBe(
      problemTypeUri('upload-incomplete'),
    );
    await store.put(`uploads/${uploadid}`, { bytes, contentType: 'text/plain', form: 'base64' });
    expect((await asyncRefusalOf(() => resolveUploads([event], 'partner-b', uploadDeps()))).problem.type).toBe(
      problemTypeUri('upload-unknown'),
    );
    const resolved = await resolveUploads([event], 'partner-a', uploadDeps());
    expect(JSON.parse(resolved[0]!.json)).toEqual({
      specversion: '1.0',
      id: '9',
      source: 'urn:a',
      type: 't',
      dataref: `${BASE}/payloads/${payloadIdOf('urn:a', '9', { digest: sha256(bytes), contentType: 'text/plain', uploadId: uploadid })}`,
      koerierdatadigest: sha256(bytes),
      koerierdatasize: bytes.length,
    });
  });
});
