/**
 * Issue 33, "Push" on the laptop host: "Batch delivery, where the target takes batches, sends
 * consecutive events of one key in one request, in order" (ORD-6, core/delivery/ordered-run.ts). An
 * ordered push subscription in batch mode (application/cloudevents-batch+json), its target taking
 * batches; each key's events published one after another, each after the previous 202, over
 * several connections at once. The one-event-per-request run is ./ordered-push.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { callApi } from '../support/koerier-api.js';
import { publishKeysInTurn } from '../support/keyed-deliveries.js';
import { startTestHost, type TestHost } from '../support/host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

const KEYS = 8;
const EVENTS = 12;
const CONNECTIONS = 4;

interface Received {
  readonly partitionkey: string;
  readonly sequence: string;
  readonly data: { readonly n: number };
}

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let dir: string;
let receiver: HttpsReceiver;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-ordered-batch-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
    [settingEnv.publishRatePerMinute]: '1000000',
    // As ./ordered-push.test.ts: room for the inbound queue's latency on a loaded laptop.
    [settingEnv.orderingSettlingMs]: '3000',
  });
  receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('ordered batch delivery on the laptop host (issue 33, Push)', () => {
  it(`ORD-6: ${KEYS} keys × ${EVENTS} events to a target that takes batches: each request holds consecutive events of one key with contiguous sequences; each key arrives complete, in acceptance order, once, in fewer requests than events`, async () => {
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
    const type = `nl.example.ordered-batch.${randomUUID().slice(0, 8)}.v1`;
    const created = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      contentmode: 'batch',
      batchsupported: true,
      sinkcredential: receiver.sinkCredential,
      ordering: { key: 'partitionkey' },
    });
    expect(created.status).toBe(201);
    const token = await koerier.token('dev-publisher', ['events:publish']);
    const source = 'urn:nld:oin:00000001234567890000:systeem:e2e';
    const started = Date.now();
    await publishKeysInTurn(koerier.url, token, { source, type, keys: KEYS, events: EVENTS, connections: CONNECTIONS });
    const batches = () =>
      receiver.requests
        .filter((r) => r.method === 'POST')
        .map((r) => {
          expect(r.headers['content-type']).toMatch(/^application\/cloudevents-batch\+json/);
          return JSON.parse(r.body) as Received[];
        });
    const count = () => batches().reduce((sum, batch) => sum + batch.length, 0);
    await eventually(
      () => `${KEYS * EVENTS} events, got ${count()}`,
      () => count() >= KEYS * EVENTS,
      {
        timeoutMs: 90_000,
      },
    );
    const delivered = Date.now();
    // Anything delivered twice would come within a moment of the rest.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const requests = batches();
    const sizes = requests.map((batch) => batch.length);
    console.log(
      `ordered batch push: ${KEYS * EVENTS} events in ${requests.length} requests ` +
        `(${(requests.length / (KEYS * EVENTS)).toFixed(2)} per event; sizes ${JSON.stringify(sizes)}), ` +
        `all delivered ${delivered - started} ms after the first publish`,
    );
    for (const batch of requests) {
      // One key per request; its sequences consecutive and rising, each event its own.
      expect(new Set(batch.map((e) => e.partitionkey)).size).toBe(1);
      const first = Number(batch[0]!.sequence);
      expect(batch.map((e) => Number(e.sequence))).toEqual(batch.map((_, i) => first + i));
      expect(batch.every((e) => /^\d{10}$/.test(e.sequence))).toBe(true);
    }
    const inOrder = Array.from({ length: EVENTS }, (_, i) => i + 1);
    for (let k = 0; k < KEYS; k++) {
      const ofKey = requests.flat().filter((e) => e.partitionkey === `key-${k}`);
      expect({ key: k, arrived: ofKey.map((e) => [e.data.n, Number(e.sequence)]) }).toEqual({
        key: k,
        arrived: inOrder.map((n) => [n, n]),
      });
    }
    // Batches did form: fewer requests than events, and at least one request of several events.
    expect(requests.length).toBeLessThan(KEYS * EVENTS);
    expect(Math.max(...sizes)).toBeGreaterThan(1);
  }, 180_000);
});
