/**
 * The delivery side of the claim check (EDU-1, CARD-6, CE-11): what is read, when an event comes
 * back inline, who becomes a reader, and what happens when the store or the ledger fails.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import {
  ClaimCheckUnavailableError,
  outgoingEvents,
  type OutgoingEventsDependencies,
} from '../../../functions/core/claim-check/outgoing-events.js';
import { payloadIdOf, payloadObjectKey } from '../../../functions/core/claim-check/payload-reference.js';
import { grantUpload, resolveUploads } from '../../../functions/core/claim-check/uploads.js';
import {
  BASE,
  NOW,
  RETENTION_SECONDS,
  accepted,
  eventOfSize,
  idOf,
  memoryPorts,
  sha256,
} from './claim-check-fixtures.js';

let ports: ReturnType<typeof memoryPorts>;
beforeEach(() => {
  ports = memoryPorts();
});

const deps = (overrides: Partial<OutgoingEventsDependencies> = {}): OutgoingEventsDependencies => ({
  store: ports.store,
  ledger: ports.ledger,
  publicBaseUrl: BASE,
  defaultMaxInlineBytes: 65_536,
  ...overrides,
});
/** A store that is down: any read fails. */
const unreadable = { get: () => Promise.reject(new Error('store unavailable')) };
const readersOf = async (payloadId: string) => (await ports.ledger.get(payloadId))!.readers;

describe('outgoingEvents: events that are no reference', () => {
  it('EDU-1: an inline event whose data quotes a Koerier data URL goes out unchanged', async () => {
    const json = JSON.stringify({
      specversion: '1.0',
      id: '1',
      source: 'urn:a',
      type: 't',
      data: `see ${BASE}/payloads/${payloadIdOf('urn:a', '0', { digest: sha256(Buffer.from('0')), contentType: 'text/plain', form: 'text' })}`,
    });
    expect(await outgoingEvents({ owner: 'o' }, [json], deps())).toEqual([json]);
  });

  it("EDU-1, CE-11: a producer's own dataref naming another event's payload goes out unchanged and makes nobody its reader", async () => {
    // Otherwise a publisher could have its subscribers made readers of anyone's data, by naming its id.
    const victim = await ports.stored(eventOfSize(100_000), 'victim');
    const json = JSON.stringify({
      specversion: '1.0',
      id: '2',
      source: 'urn:m',
      type: 't',
      dataref: victim['dataref'],
    });
    expect(await outgoingEvents({ owner: 'mallory' }, [json], deps())).toEqual([json]);
    expect(await readersOf(idOf(victim))).toEqual([]);
  });
});

describe('outgoingEvents: by reference', () => {
  it('EDU-1: an event whose data cannot fit the subscription goes by reference without reading the store', async () => {
    // A store outage must not hold up subscriptions that take references anyway.
    const event = await ports.stored(eventOfSize(1_000_000));
    const json = JSON.stringify(event);
    expect(await outgoingEvents({ owner: 'small' }, [json], deps({ store: unreadable }))).toEqual([json]);
    expect(await readersOf(idOf(event))).toEqual(['small']);
  });

  it('EDU-1: data of exactly the limit cannot come back inline either: by reference, nothing read', async () => {
    const event = await ports.stored(eventOfSize(100_000));
    const json = JSON.stringify(event);
    const limit = event['koerierdatasize'] as number;
    expect(await outgoingEvents({ owner: 'o', maxInlineBytes: limit }, [json], deps({ store: unreadable }))).toEqual([
      json,
    ]);
  });

  it('EDU-1: an object already gone goes by reference (its fetch answers 410), its owner recorded as a reader', async () => {
    const event = await ports.stored(eventOfSize(100_000));
    ports.store.objects.delete(payloadObjectKey(idOf(event)));
    const json = JSON.stringify(event);
    expect(await outgoingEvents({ owner: 'o', maxInlineBytes: 1_000_000 }, [json], deps())).toEqual([json]);
    expect(await readersOf(idOf(event))).toEqual(['o']);
  });

  it('EDU-1: inline only when the rebuilt event fits: exactly the limit comes inline, one byte less goes by reference', async () => {
    const original = eventOfSize(100_000);
    const event = await ports.stored(original);
    const json = JSON.stringify(event);
    expect(await outgoingEvents({ owner: 'exact', maxInlineBytes: 100_000 }, [json], deps())).toEqual([original.json]);
    expect(await outgoingEvents({ owner: 'short', maxInlineBytes: 99_999 }, [json], deps())).toEqual([json]);
    expect(await readersOf(idOf(event))).toEqual(['short']);
  });
});

describe('outgoingEvents: failures hold the delivery back', () => {
  it('EDU-1: a store that cannot be read for an event that may go inline is ClaimCheckUnavailableError, not a reference', async () => {
    const json = JSON.stringify(await ports.stored(eventOfSize(100_000)));
    await expect(
      outgoingEvents({ owner: 'o', maxInlineBytes: 1_000_000 }, [json], deps({ store: unreadable })),
    ).rejects.toBeInstanceOf(ClaimCheckUnavailableError);
  });

  it('EDU-1: a reader that cannot be recorded is ClaimCheckUnavailableError: no reference goes out that its owner could not fetch', async () => {
    const json = JSON.stringify(await ports.stored(eventOfSize(1_000_000)));
    const ledger = {
      get: ports.ledger.get.bind(ports.ledger),
      addReaders: () => Promise.reject(new Error('ledger unavailable')),
    };
    await expect(outgoingEvents({ owner: 'o' }, [json], deps({ ledger }))).rejects.toBeInstanceOf(
      ClaimCheckUnavailableError,
    );
  });
});

describe('outgoingEvents: uploaded data', () => {
  it('EDU-1: data uploaded by the producer comes inline to a subscription with room, read from the upload', async () => {
    const bytes = Buffer.from('a large enrolment list');
    const uploadDeps = {
      store: ports.store,
      ledger: ports.ledger,
      publicBaseUrl: BASE,
      retentionSeconds: RETENTION_SECONDS,
      now: () => NOW,
    };
    const body = Buffer.from(JSON.stringify({ size: bytes.length, digest: sha256(bytes), contenttype: 'text/csv' }));
    const { dataref, uploadid } = JSON.parse((await grantUpload(body, 'partner-a', uploadDeps)).body) as {
      dataref: string;
      uploadid: string;
    };
    await ports.store.put(`uploads/${uploadid}`, { bytes, contentType: 'text/csv', form: 'base64' });
    const event = accepted(JSON.stringify({ specversion: '1.0', id: '9', source: 'urn:a', type: 't', dataref }));
    const [resolved] = await resolveUploads([event], 'partner-a', uploadDeps);
    const [out] = await outgoingEvents({ owner: 'o', maxInlineBytes: 100_000 }, [resolved!.json], deps());
    expect(JSON.parse(out!)).toEqual({
      specversion: '1.0',
      id: '9',
      source: 'urn:a',
      type: 't',
      data_base64: bytes.toString('base64'),
    });
    expect(await readersOf(idOf(JSON.parse(resolved!.json) as Record<string, unknown>))).toEqual([]);
  });
});
