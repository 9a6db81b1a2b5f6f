/**
 * Issue 8, item 1 end to end on the laptop host: one accepted event whose `source` + `id` run to
 * 4 KB, published with nine normal events in one batch request (so the ingest writes them with
 * one SendMessageBatch and the router's poller, gathering for 1 s as a deployment's does, takes all ten in one
 * invocation), and all ten
 * arrive at a real HTTPS receiver. Before the keys were bounded the routing ledger's write failed
 * for the long one and the router failed all ten.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { batchesLogged } from '../support/batch-log.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let receiver: HttpsReceiver;

beforeAll(async () => {
  koerier = await startTestHost(
    { [settingEnv.validationAgreedClients]: 'dev-subscriber' },
    // A deployment's router gathers for 1 s, so the ten reach it together. The laptop's 0 s takes what one
    // receive finds ready, which may be the first of the ten alone (as SQS may answer a short poll).
    { batchingWindowSeconds: { router: 1 }, trustAuthority: authority },
  );
  receiver = await startHttpsReceiver({ authority });
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
});

describe('router batch isolation on the laptop host', () => {
  it('review #1: an event whose source + id are 4 KB, in one router batch with nine normal events: all ten are delivered', async () => {
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
    const publisher = await koerier.token('dev-publisher', ['events:publish']);
    const type = `nl.example.isolation.${randomUUID().slice(0, 8)}.v1`;
    const created = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
    });
    expect(created.status).toBe(201);

    const long = {
      specversion: '1.0',
      id: `${randomUUID()}-${'i'.repeat(1024)}`,
      source: `urn:nld:oin:00000001234567890000:systeem:${'s'.repeat(3000)}`, // with the id: 4,096 bytes and more
      type,
      data: { n: 0 },
    };
    expect(Buffer.byteLength(long.source + long.id)).toBeGreaterThanOrEqual(4096);
    const normal = Array.from({ length: 9 }, (_, index) => ({
      specversion: '1.0',
      id: randomUUID(),
      source: 'urn:nld:oin:00000001234567890000:systeem:e2e',
      type,
      data: { n: index + 1 },
    }));
    const events = [normal[0]!, normal[1]!, normal[2]!, normal[3]!, long, ...normal.slice(4)];
    const accepted = await tryPublish(koerier.url, publisher, events);
    // The ingest takes the 4 KB source as it is: CloudEvents sets no length limit on it.
    expect(accepted.status).toBe(202);

    const requests = await receiver.waitForRequests(10, { timeoutMs: 30_000 });
    const deliveredIds = requests.map((request) => (JSON.parse(request.body) as { id: string }).id).sort();
    expect(deliveredIds).toEqual(events.map((event) => event.id).sort());
    const longDelivered = requests.find((request) => (JSON.parse(request.body) as { id: string }).id === long.id)!;
    expect(JSON.parse(longDelivered.body)).toMatchObject({ source: long.source, id: long.id });
    for (const request of requests) expect(request.headers['authorization']).toBe(`Bearer ${receiver.accessToken}`);

    // The ten went through the router together, and it failed none of them.
    const routerBatches = batchesLogged(koerier, 'router');
    expect(routerBatches.map((line) => [line.received, line.failed])).toEqual([[10, 0]]);
  });
});
