/**
 * The claim check's pure parts (EDU-1, CE-11, CE-13, CE-17): payload ids, ETags, the data of an
 * event as bytes with its media type, and which events carry Koerier's reference.
 */
import { describe, expect, it } from 'vitest';
import { fetchPayload } from '../../../functions/core/claim-check/fetch-payload.js';
import { offloadEvents } from '../../../functions/core/claim-check/offload.js';
import { expectedOutgoingBytes } from '../../../functions/core/claim-check/outgoing-events.js';
import {
  etagOf,
  eventDataOf,
  isPayloadId,
  payloadIdOf,
  payloadReferenceOf,
  rehydratedEvent,
} from '../../../functions/core/claim-check/payload-reference.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { BASE, NOW, eventOfSize, idOf, memoryPorts, sha256 } from './claim-check-fixtures.js';

const PREFIX = `${BASE}/payloads/`;
const ID = payloadIdOf('urn:a', '1', { digest: sha256(Buffer.from('1')), contentType: 'text/plain', form: 'text' });

describe('payload ids and ETags', () => {
  it.each([
    ['a path before an id', `../${ID}`],
    ['a path after an id', `${ID}/../x`],
    ['an id with a query', `${ID}?x=1`],
  ])('EDU-1: %s is not a payload id', (_, value) => {
    // A payload id becomes part of an object key and a ledger key: only the exact form names an object.
    expect(isPayloadId(value)).toBe(false);
  });

  it('EDU-1: the ETag keeps every character of the digest, in base64url (distinct digests, distinct tags)', () => {
    // A digest with '+' and '/' in its base64: the tag must still carry all 43 characters.
    let bytes = Buffer.from('0');
    for (let i = 1; !/\+.*\/|\/.*\+/.test(sha256(bytes)); i++) bytes = Buffer.from(String(i));
    const digest = sha256(bytes);
    const expected = `"${digest.slice('sha-256=:'.length, -2).replace(/\+/g, '-').replace(/\//g, '_')}"`;
    expect(etagOf(digest)).toBe(expected);
    expect(etagOf(digest)).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
  });

  it('EDU-1, CE-17: each event has its own object: events offloaded together each fetch their own data', async () => {
    const { store, ledger, offloadDeps } = memoryPorts();
    const events = [eventOfSize(100_000), eventOfSize(100_001), eventOfSize(100_002)];
    const queued = await offloadEvents(events, [0, 1, 2], 'publisher', NOW, offloadDeps());
    expect(store.objects.size).toBe(3);
    for (const event of queued) {
      const parsed = JSON.parse(event.json) as Record<string, unknown>;
      const settings = { maxStreamedBytes: 4 * 1024 * 1024, presignedUrlSeconds: 300 };
      const answer = await fetchPayload(idOf(parsed), 'publisher', undefined, {
        store,
        ledger,
        settings,
        log: silentLog,
        now: () => NOW,
      });
      expect(sha256(Buffer.from(answer.body, 'base64'))).toBe(parsed['koerierdatadigest']);
    }
  });
});

describe('eventDataOf: the bytes a fetch answers and their media type', () => {
  const event = (body: Record<string, unknown>) =>
    JSON.stringify({ specversion: '1.0', id: '1', source: 'urn:a', type: 't', ...body });

  it('EDU-1: binary data without datacontenttype is application/octet-stream', () => {
    const data = eventDataOf(event({ data_base64: Buffer.from([0, 255]).toString('base64') }))!;
    expect(data).toMatchObject({ form: 'base64', contentType: 'application/octet-stream' });
    expect([...data.bytes]).toEqual([0, 255]);
  });

  it('EDU-1: JSON data without datacontenttype is application/json, as CloudEvents implies', () => {
    expect(eventDataOf(event({ data: { a: 1 } }))).toMatchObject({ form: 'json', contentType: 'application/json' });
  });

  it('EDU-1, CE-13: a JSON string without datacontenttype is JSON text (quotes and all), and comes back the same', () => {
    const json = event({ data: 'héllo' });
    const data = eventDataOf(json)!;
    expect(data).toMatchObject({ form: 'json', contentType: 'application/json' });
    expect(data.bytes.toString('utf8')).toBe('"héllo"');
    expect(rehydratedEvent(JSON.parse(json) as Record<string, unknown>, data.bytes, data.form)).toBe(json);
  });

  it('EDU-1, CE-13: an object as data with a non-JSON datacontenttype (accepted with a warning) is kept as its JSON text', () => {
    const json = event({ datacontenttype: 'text/plain', data: { a: [1, 2] } });
    const data = eventDataOf(json)!;
    expect(data).toMatchObject({ form: 'json', contentType: 'text/plain' });
    expect(data.bytes.toString('utf8')).toBe('{"a":[1,2]}');
  });

  // The JSON format allows null for any attribute and reads it as absent (JSON-1): it names no
  // media type. Read as one, text data would become a `text` form with no media type, which the
  // ledger cannot store (issue 36, item 11: the DynamoDB ledger answered 503).
  it('EDU-1, JSON-1, issue 36 item 11: datacontenttype null is absent: string and JSON data are application/json, base64 data octet-stream', () => {
    const text = event({ datacontenttype: null, data: 'héllo' });
    expect(eventDataOf(text)).toMatchObject({ form: 'json', contentType: 'application/json' });
    expect(eventDataOf(text)).toEqual(eventDataOf(event({ data: 'héllo' })));
    expect(eventDataOf(event({ datacontenttype: null, data: { a: 1 } }))).toMatchObject({
      form: 'json',
      contentType: 'application/json',
    });
    expect(eventDataOf(event({ datacontenttype: null, data_base64: 'AP8=' }))).toMatchObject({
      form: 'base64',
      contentType: 'application/octet-stream',
    });
  });

  it('EDU-1, JSON-1, issue 36 item 11: an event over the threshold with datacontenttype null is offloaded with a string media type, and comes back without the null', async () => {
    const { ledger, stored, store } = memoryPorts();
    const published = eventOfSize(100_000, { datacontenttype: null });
    const queued = await stored(published);
    expect(queued['datacontenttype']).toBeUndefined();
    const record = ledger.records.get(idOf(queued))!;
    expect(record.contentType).toBe('application/json');
    const object = store.objects.get(record.objectKey)!;
    const { datacontenttype: _, ...withoutNull } = JSON.parse(published.json) as Record<string, unknown>;
    expect(JSON.parse(rehydratedEvent(queued, object.bytes, object.form))).toEqual(withoutNull);
  });

  it('EDU-1: data null is no data: nothing to move', () => {
    expect(eventDataOf(event({ datacontenttype: 'application/json', data: null }))).toBeUndefined();
  });
});

describe("payloadReferenceOf: only Koerier's complete reference counts", () => {
  const complete = { dataref: `${PREFIX}${ID}`, koerierdatadigest: sha256(Buffer.from('x')), koerierdatasize: 1 };

  it('EDU-1: dataref to a payload id on the data URL, digest and size make a reference', () => {
    expect(payloadReferenceOf(complete, PREFIX)).toEqual({
      payloadId: ID,
      digest: complete.koerierdatadigest,
      size: 1,
    });
  });

  it.each([
    ['without dataref', { ...complete, dataref: undefined }],
    ['with a dataref that is not a string', { ...complete, dataref: 7 }],
    ['without the digest', { ...complete, koerierdatadigest: undefined }],
    ['without the size', { ...complete, koerierdatasize: undefined }],
    ['with the size as a string', { ...complete, koerierdatasize: '1' }],
    ["with only a dataref (CE-11: a producer's own)", { dataref: complete.dataref }],
    [
      'with a dataref of the same length on another host',
      { ...complete, dataref: `https://elsewhere.tests/payloads/${ID}` },
    ],
  ])('EDU-1, CE-11: an event %s carries no reference', (_, event) => {
    expect(payloadReferenceOf(event, PREFIX)).toBeUndefined();
  });

  it('EDU-1: a reference may come back inline only when its data is smaller than the limit; what a caller plans for follows', () => {
    const json = JSON.stringify({
      specversion: '1.0',
      id: '1',
      source: 'urn:a',
      type: 't',
      ...complete,
      koerierdatasize: 1000,
    });
    expect(expectedOutgoingBytes(json, 1001, BASE)).toBe(1000);
    // Data of exactly the limit cannot come back inline: the rebuilt event is larger still.
    expect(expectedOutgoingBytes(json, 1000, BASE)).toBe(Buffer.byteLength(json));
    expect(expectedOutgoingBytes(json, 10, BASE)).toBe(Buffer.byteLength(json));
  });
});
