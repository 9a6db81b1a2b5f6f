/**
 * The claim check on a pull receive (functions/core/pull/receive-claim-check.ts) over the claim
 * check's memory adapters, without emulators (EDU-1, CE-13).
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { acceptedEvent, type AcceptedEvent } from '../../../functions/core/cloudevents/accepted-event.js';
import { attributesOf } from '../../../functions/core/cloudevents/stored-event.js';
import { InMemoryClaimCheckStore, InMemoryPayloadLedger } from '../../support/memory/claim-check-memory-adapters.js';
import { offloadEvents } from '../../../functions/core/claim-check/offload.js';
import { receivedEvents } from '../../../functions/core/pull/receive-claim-check.js';

const BASE = 'https://koerier.example';
const NOW = Date.UTC(2026, 10, 23, 19);

/** Counts the reads, to show which objects a receive looks at. */
class CountingStore extends InMemoryClaimCheckStore {
  reads = 0;
  override async get(key: string) {
    this.reads++;
    return super.get(key);
  }
}

let store: CountingStore;
let ledger: InMemoryPayloadLedger;
beforeEach(() => {
  store = new CountingStore();
  ledger = new InMemoryPayloadLedger();
});

const deps = () => ({ store, ledger, publicBaseUrl: BASE, defaultMaxInlineBytes: 65_536 });

/** A structured event, its data a text string of `length` times `fill`. */
function eventOf(length: number, fill = 'z'): AcceptedEvent {
  const head = {
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:1:lvs',
    type: 'nl.edu.x.v1',
    datacontenttype: 'text/plain',
  };
  const json = JSON.stringify({ ...head, data: fill.repeat(length) });
  return acceptedEvent(attributesOf(JSON.parse(json) as Record<string, unknown>), json);
}

/** The payload id a queued event's `dataref` names. */
const payloadIdIn = (json: string) => (JSON.parse(json) as { dataref: string }).dataref.split('/').at(-1)!;

/** As the router queues it: the data in the claim check, `dataref` in the event. */
async function queued(event: AcceptedEvent): Promise<string> {
  const settings = {
    inlineEventBytes: 65_536,
    maxQueuedEventBytes: 253_952,
    publicBaseUrl: BASE,
    retentionSeconds: 15 * 86400,
  };
  const [result] = await offloadEvents([event], [0], 'publisher', NOW, { store, ledger, settings });
  return result!.json;
}

describe('the claim check on a pull receive (EDU-1)', () => {
  it('CE-13: events that never went by reference come back byte for byte, and nothing is read', async () => {
    const inline = [
      '{"specversion":"1.0","id":"1","source":"urn:x","type":"t.v1","data":{"n":1.50,"s":"\\u00e9"}}',
      '{ "specversion" : "1.0", "id":"2","source":"urn:x","type":"t.v1","dataref":"https://elsewhere.example/payloads/x"}',
    ];
    expect(await receivedEvents({ owner: 'o' }, inline, deps())).toEqual(inline);
    expect(store.reads).toBe(0);
  });

  it('EDU-1: by default a 1 MB event goes by reference and the owner becomes a reader; with maxinlinebytes 2 MiB it comes back inline as published', async () => {
    const event = eventOf(1_000_000);
    const json = await queued(event);
    const [byReference] = await receivedEvents({ owner: 'small' }, [json], deps());
    expect(byReference).toBe(json);
    expect((await ledger.get(payloadIdIn(json)))!.readers).toEqual(['small']);
    expect(await receivedEvents({ owner: 'large', maxInlineBytes: 2_097_152 }, [json], deps())).toEqual([event.json]);
    expect((await ledger.get(payloadIdIn(json)))!.readers).toEqual(['small']);
  });

  it('EDU-1: an event whose inline text would not fit one receive answer goes by reference (escaping counted), with the owner a reader', async () => {
    // 300,000 quotes: a 600 kB event, 1.2 MB once escaped again in the answer body.
    const event = eventOf(300_000, '"');
    expect(Buffer.byteLength(event.json)).toBeLessThan(601_000);
    const json = await queued(event);
    expect(await receivedEvents({ owner: 'o', maxInlineBytes: 6_291_456 }, [json], deps(), 1_100_000)).toEqual([json]);
    expect((await ledger.get(payloadIdIn(json)))!.readers).toEqual(['o']);
    expect(await receivedEvents({ owner: 'o', maxInlineBytes: 6_291_456 }, [json], deps(), 1_300_000)).toEqual([
      event.json,
    ]);
  });

  it('EDU-1: reading stops once the answer is full: of ten 1 MB events taken inline, a 3 MB answer reads three objects, not ten', async () => {
    const events = Array.from({ length: 10 }, () => eventOf(1_000_000));
    const jsons = await Promise.all(events.map(queued));
    store.reads = 0;
    const result = await receivedEvents({ owner: 'o', maxInlineBytes: 2_097_152 }, jsons, deps(), 3_000_000);
    expect(result).toEqual(events.slice(0, 3).map((event) => event.json));
    expect(store.reads).toBe(3);
  });

  it('EDU-1: the budget counts what events take as they go out: after a round that went by reference, reading goes on', async () => {
    // Each is expected at its 300 kB of data, so the first round plans three; each then goes by
    // reference (escaped twice, it would not fit a 1.1 MB answer) and takes a few hundred bytes,
    // which leaves room for the fourth.
    const events = Array.from({ length: 4 }, () => eventOf(300_000, '"'));
    const jsons = await Promise.all(events.map(queued));
    expect(await receivedEvents({ owner: 'o', maxInlineBytes: 6_291_456 }, jsons, deps(), 1_100_000)).toEqual(jsons);
  });
});
