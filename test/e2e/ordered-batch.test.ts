/**
 * Issue 33, "Push" on the laptop host: "Batch delivery, where the target takes batches, sends
 * consecutive events of one key in one request, in order" (ORD-6, core/delivery/ordered-run.ts). An
 * ordered push subscription in batch mode (application/cloudevents-batch+json), its target taking
 * batches; each key's events published one after another, each after the previous 202, over
 * several connections at once. The second test sends the same traffic one event per request (as
 * ./ordered-push.test.ts does) and compares what each costs per event.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi } from '../support/koerier-api.js';
import { publishKeysInTurn } from '../support/keyed-deliveries.js';
import type { TestHost } from '../support/host.js';
import { startOrderedTestHost } from '../support/ordered-test-host.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';
import { countRequests, type RequestCounter } from '../support/request-counter.js';
import { eventually } from '../support/waiting.js';

const KEYS = 8;
const EVENTS = 12;
const CONNECTIONS = 4;

interface Received {
  readonly partitionkey: string;
  readonly sequence: string;
  readonly data: { readonly n: number };
}

interface PerEvent {
  /** Requests to the target. */
  readonly requests: number;
  /** DynamoDB requests of the whole host (ingest, router, lanes, delivery records). */
  readonly dynamodb: number;
  /** SQS sends and deletes (receives are left out: idle polling counts there too). */
  readonly sqsSendsAndDeletes: number;
}

const authority = createLocalCertificateAuthority();
const receivers: HttpsReceiver[] = [];
const costs: Record<string, PerEvent> = {};
let koerier: TestHost;
let dynamodb: RequestCounter;
let sqs: RequestCounter;

beforeAll(async () => {
  koerier = await startOrderedTestHost(authority);
  dynamodb = countRequests(koerier.host.awsClients.dynamodb);
  sqs = countRequests(koerier.host.awsClients.sqs);
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await koerier?.stop();
});

/** KEYS × EVENTS published to a new ordered subscription; answers each request's events, as received. */
async function orderedRun(mode: 'batch' | 'structured'): Promise<Received[][]> {
  const receiver = await startHttpsReceiver({ authority });
  receivers.push(receiver);
  const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  const type = `nl.example.ordered-${mode}.${randomUUID().slice(0, 8)}.v1`;
  const created = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    ...(mode === 'batch' ? { contentmode: 'batch', batchsupported: true } : {}),
    sinkcredential: receiver.sinkCredential,
    ordering: { key: 'partitionkey' },
  });
  expect(created.status).toBe(201);
  const token = await koerier.token('dev-publisher', ['events:publish']);
  const source = 'urn:nld:oin:00000001234567890000:systeem:e2e';
  dynamodb.reset();
  sqs.reset();
  const started = Date.now();
  await publishKeysInTurn(koerier.url, token, { source, type, keys: KEYS, events: EVENTS, connections: CONNECTIONS });
  const received = () =>
    receiver.requests
      .filter((r) => r.method === 'POST')
      .map((r) => {
        const body = JSON.parse(r.body) as Received | Received[];
        if (mode === 'batch') expect(r.headers['content-type']).toMatch(/^application\/cloudevents-batch\+json/);
        return Array.isArray(body) ? body : [body];
      });
  const count = () => received().reduce((sum, events) => sum + events.length, 0);
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
  const requests = received();
  const events = KEYS * EVENTS;
  const sqsOf = (...names: string[]) => names.reduce((sum, name) => sum + (sqs.byOperation[name] ?? 0), 0);
  costs[mode] = {
    requests: requests.length / events,
    dynamodb: Number((dynamodb.total() / events).toFixed(2)),
    sqsSendsAndDeletes: Number(
      (
        sqsOf('SendMessageCommand', 'SendMessageBatchCommand', 'DeleteMessageCommand', 'DeleteMessageBatchCommand') /
        events
      ).toFixed(2),
    ),
  };
  console.log(
    `ordered ${mode} push: ${events} events in ${requests.length} requests ` +
      `(sizes ${JSON.stringify(requests.map((r) => r.length))}), all delivered ${delivered - started} ms ` +
      `after the first publish; per event: ${JSON.stringify(costs[mode])}`,
  );
  return requests;
}

/** Each key complete, in acceptance order (published as event n, numbered n), once. */
function expectEveryKeyInOrder(requests: readonly Received[][]): void {
  const inOrder = Array.from({ length: EVENTS }, (_, i) => i + 1);
  for (let k = 0; k < KEYS; k++) {
    const ofKey = requests.flat().filter((e) => e.partitionkey === `key-${k}`);
    expect({ key: k, arrived: ofKey.map((e) => [e.data.n, Number(e.sequence)]) }).toEqual({
      key: k,
      arrived: inOrder.map((n) => [n, n]),
    });
    expect(ofKey.every((e) => /^\d{10}$/.test(e.sequence))).toBe(true);
  }
}

describe('ordered batch delivery on the laptop host (issue 33, Push)', () => {
  it(`ORD-6: ${KEYS} keys × ${EVENTS} events to a target that takes batches: each request holds consecutive events of one key with contiguous sequences; each key arrives complete, in acceptance order, once, in fewer requests than events`, async () => {
    const requests = await orderedRun('batch');
    for (const events of requests) {
      // One key per request; its sequences consecutive and rising, each event its own.
      expect(new Set(events.map((e) => e.partitionkey)).size).toBe(1);
      const first = Number(events[0]!.sequence);
      expect(events.map((e) => Number(e.sequence))).toEqual(events.map((_, i) => first + i));
    }
    expectEveryKeyInOrder(requests);
    // Batches did form: fewer requests than events, and at least one request of several events.
    expect(requests.length).toBeLessThan(KEYS * EVENTS);
    expect(Math.max(...requests.map((events) => events.length))).toBeGreaterThan(1);
  }, 180_000);

  it('ORD-6: the same traffic one event per request costs more per event: a request, and more DynamoDB requests and queue messages', async () => {
    const requests = await orderedRun('structured');
    expectEveryKeyInOrder(requests);
    expect(requests.every((events) => events.length === 1)).toBe(true);
    const [batch, single] = [costs['batch']!, costs['structured']!];
    expect(single.requests).toBe(1);
    expect(batch.requests).toBeLessThan(single.requests);
    expect(batch.dynamodb).toBeLessThan(single.dynamodb);
    expect(batch.sqsSendsAndDeletes).toBeLessThan(single.sqsSendsAndDeletes);
  }, 180_000);
});
