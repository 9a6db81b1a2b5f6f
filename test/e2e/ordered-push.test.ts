/**
 * Issue 33 on the laptop host: an ordered push subscription end to end — the ingest's acceptance
 * positions, the router, lanes in dynalite, the deliveries queue, the delivery function — against
 * an HTTPS receiver. Each key's events are published one after another, each after the previous
 * 202, over several connections at once, and must arrive in that order. Pull is
 * ./ordered-pull.test.ts, push and pull side by side at the must-show's size
 * ./ordered-at-size.test.ts, a failing key under block/park/skip ./ordered-failures.test.ts; the
 * run after a kill -9 found a lost lane head and waits for its fix (docs/ORDERING.md).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi } from '../support/koerier-api.js';
import { publishKeysInTurn } from '../support/keyed-deliveries.js';
import type { TestHost } from '../support/host.js';
import { startOrderedTestHost } from '../support/ordered-test-host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';

/** The run's size: KEYS keys × EVENTS events, published over CONNECTIONS connections at once. */
const KEYS = 10;
const EVENTS = 12;
const CONNECTIONS = 5;

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let receiver: HttpsReceiver;

beforeAll(async () => {
  koerier = await startOrderedTestHost(authority);
  receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
});

describe('ordered push delivery on the laptop host (issue 33)', () => {
  it(`ORD-3: ${KEYS} keys × ${EVENTS} events over ${CONNECTIONS} connections: each key arrives in acceptance order (each event published after the previous one's 202), sequence 1..${EVENTS} without a gap, every event once`, async () => {
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
    const type = `nl.example.ordered.${randomUUID().slice(0, 8)}.v1`;
    const created = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
      ordering: { key: 'partitionkey' },
    });
    expect(created.status).toBe(201);
    expect(created.body['ordering']).toEqual({ key: 'partitionkey', withoutKey: 'unordered', onFailure: 'block' });
    const source = 'urn:nld:oin:00000001234567890000:systeem:e2e';
    const token = await koerier.token('dev-publisher', ['events:publish']);
    const started = Date.now();
    await publishKeysInTurn(koerier.url, token, { source, type, keys: KEYS, events: EVENTS, connections: CONNECTIONS });
    const published = Date.now();
    const requests = await receiver.waitForRequests(KEYS * EVENTS, { timeoutMs: 90_000 });
    const delivered = Date.now();
    // Anything delivered twice would come within a moment of the rest.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    console.log(
      `ordered push: ${KEYS * EVENTS} events published in ${published - started} ms, all delivered ${delivered - started} ms after the first publish`,
    );
    const events = receiver.requests.map(
      (r) => JSON.parse(r.body) as { partitionkey: string; sequence: string; data: { n: number } },
    );
    expect(events).toHaveLength(KEYS * EVENTS);
    const inOrder = Array.from({ length: EVENTS }, (_, i) => i + 1);
    for (let k = 0; k < KEYS; k++) {
      const ofKey = events.filter((e) => e.partitionkey === `key-${k}`);
      // As they arrived: [published as event n of the key, sequence].
      expect({ key: k, arrived: ofKey.map((e) => [e.data.n, Number(e.sequence)]) }).toEqual({
        key: k,
        arrived: inOrder.map((n) => [n, n]),
      });
      expect(ofKey.every((e) => /^\d{10}$/.test(e.sequence))).toBe(true);
    }
    expect(requests.length).toBeGreaterThanOrEqual(KEYS * EVENTS);
  }, 180_000);
});
