/**
 * Issue 33 item "Pull" on the laptop host (ORD-5): an ordered pull subscription end to end — the
 * ingest's acceptance positions, the router, lanes in dynalite, the settle messages on the
 * subscription's own queue, receives that settle them — with consumers receiving and
 * acknowledging over HTTP side by side. Each key's events are published one after another, each
 * after the previous 202, over several connections at once.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { callApi } from '../support/koerier-api.js';
import { publishKeysInTurn } from '../support/keyed-deliveries.js';
import { startTestHost, type TestHost } from '../support/host.js';

/** The run's size: KEYS keys × EVENTS events, published over CONNECTIONS connections, read by CONSUMERS consumers. */
const KEYS = 8;
const EVENTS = 10;
const CONNECTIONS = 4;
const CONSUMERS = 3;
/** How long a consumer keeps what it received locked before acknowledging it. */
const HOLD_MS = 150;

let koerier: TestHost;

beforeAll(async () => {
  koerier = await startTestHost({
    [settingEnv.publishRatePerMinute]: '1000000',
    // As in ordered-push.test.ts: the window covers the inbound queue's latency on 2 shared cores.
    [settingEnv.orderingSettlingMs]: '3000',
  });
});

afterAll(async () => {
  await koerier?.stop();
});

interface Received {
  readonly partitionkey: string;
  readonly sequence: string;
  readonly data: { readonly n: number };
}

describe('ordered pull delivery on the laptop host (issue 33 item "Pull")', () => {
  it(`ORD-5: ${KEYS} keys × ${EVENTS} events over ${CONNECTIONS} connections, ${CONSUMERS} consumers receiving and acknowledging: each key in acceptance order with sequence 1..${EVENTS}, never two locked events of one key, none lost, none twice past an ack`, async () => {
    const consumer = await koerier.token('dev-subscriber', ['events:consume', 'subscriptions:manage']);
    const type = `nl.example.ordered-pull.${randomUUID().slice(0, 8)}.v1`;
    const created = await callApi(koerier.url, consumer, 'POST', '/subscriptions', {
      delivery: 'pull',
      types: [type],
      ordering: { key: 'partitionkey' },
    });
    expect(created.status).toBe(201);
    expect(created.body['ordering']).toEqual({ key: 'partitionkey', withoutKey: 'unordered', onFailure: 'block' });
    const id = created.body['id'] as string;
    const source = 'urn:nld:oin:00000001234567890000:systeem:e2e';
    const token = await koerier.token('dev-publisher', ['events:publish']);

    /** Per key: the event locked now (received, not yet being acknowledged), and what was acknowledged, in order. */
    const locked = new Map<string, Received>();
    const acknowledged = new Map<string, Received[]>();
    const overlaps: string[] = [];
    const twice: string[] = [];
    let done = false;
    const consume = async () => {
      while (!done) {
        const answer = await callApi(koerier.url, consumer, 'POST', `/subscriptions/${id}/events/receive`, {
          maxevents: 10,
          waitseconds: 1,
          lockseconds: 60,
        });
        expect(answer.status).toBe(200);
        const events = answer.body['events'] as Received[];
        const locks = answer.body['locks'] as { locktoken: string }[];
        for (const event of events) {
          const held = locked.get(event.partitionkey);
          if (held !== undefined) overlaps.push(`${event.partitionkey}: ${held.data.n} and ${event.data.n}`);
          if ((acknowledged.get(event.partitionkey) ?? []).some((one) => one.data.n === event.data.n))
            twice.push(`${event.partitionkey}/${event.data.n}`);
          locked.set(event.partitionkey, event);
        }
        if (events.length === 0) continue;
        // Works on them a moment, locks held, so a second event of a held key would be caught here.
        await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
        // Released from the books as the acknowledgement goes out: from then on the next may come.
        for (const event of events) {
          locked.delete(event.partitionkey);
          acknowledged.set(event.partitionkey, [...(acknowledged.get(event.partitionkey) ?? []), event]);
        }
        const settled = await callApi(koerier.url, consumer, 'POST', `/subscriptions/${id}/events/acknowledge`, {
          locktokens: locks.map((lock) => lock.locktoken),
        });
        expect(settled.status).toBe(200);
        expect(settled.body['failed']).toEqual([]);
      }
    };
    const consumers = Array.from({ length: CONSUMERS }, () => consume());

    const started = Date.now();
    await publishKeysInTurn(koerier.url, token, { source, type, keys: KEYS, events: EVENTS, connections: CONNECTIONS });
    const published = Date.now();
    const count = () => [...acknowledged.values()].reduce((sum, list) => sum + list.length, 0);
    for (const deadline = Date.now() + 120_000; count() < KEYS * EVENTS && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 200));
    const received = Date.now();
    // Anything handed out again past its acknowledgement would come within a moment of the rest.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    done = true;
    await Promise.all(consumers);
    console.log(
      `ordered pull: ${KEYS * EVENTS} events published in ${published - started} ms, all received and acknowledged ${received - started} ms after the first publish`,
    );
    expect({ overlaps, twice }).toEqual({ overlaps: [], twice: [] });
    const inOrder = Array.from({ length: EVENTS }, (_, i) => [i + 1, String(i + 1).padStart(10, '0')]);
    for (let k = 0; k < KEYS; k++)
      expect({
        key: k,
        arrived: (acknowledged.get(`key-${k}`) ?? []).map((e) => [e.data.n, e.sequence]),
      }).toEqual({ key: k, arrived: inOrder });
  }, 240_000);
});
