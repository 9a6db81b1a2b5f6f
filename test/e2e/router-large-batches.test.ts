/**
 * Issue 15, items 3 and 5 on the laptop host: with `koerier:batchSizes` `{"router": 100}` the
 * router's poller gathers up to 100 events in its 1 s window, as a deployment's event source then
 * does, and one router invocation routes them all: every event reaches its subscriber once, none
 * fails, and the per-batch requests (the archive object among them) are shared by the batch.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { batchesLogged } from '../support/batch-log.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { eventually } from '../support/waiting.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let receiver: HttpsReceiver;

beforeAll(async () => {
  koerier = await startTestHost(
    { [settingEnv.validationAgreedClients]: 'dev-subscriber' },
    { batchingWindowSeconds: { router: 1 }, batchSizes: { router: 100 }, trustAuthority: authority },
  );
  receiver = await startHttpsReceiver({ authority });
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
});

const routerBatchesLogged = () => batchesLogged(koerier, 'router');

describe('router batches above 10 on the laptop host', () => {
  it('issue 15 #3: with koerier:batchSizes {"router": 100}, one router invocation takes more than 10 events and every event is delivered once', async () => {
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
    const publisher = await koerier.token('dev-publisher', ['events:publish']);
    const type = `nl.example.routerbatch.${randomUUID().slice(0, 8)}.v1`;
    const created = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
    });
    expect(created.status).toBe(201);

    // Ten batch requests of ten, all at once: the router's 1 s window opens with the first and gathers the rest.
    const events = Array.from({ length: 100 }, (_, n) => ({
      specversion: '1.0',
      id: randomUUID(),
      source: 'urn:nld:oin:00000001234567890000:systeem:e2e',
      type,
      data: { n },
    }));
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, request) =>
        tryPublish(koerier.url, publisher, events.slice(request * 10, request * 10 + 10)),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 10 }, () => 202));

    const requests = await receiver.waitForRequests(100, { timeoutMs: 60_000 });
    const deliveredIds = requests.map((request) => (JSON.parse(request.body) as { id: string }).id).sort();
    expect(deliveredIds).toEqual(events.map((event) => event.id).sort());

    // A batch's log line is written once its invocation has returned, which can be after its deliveries arrived.
    const routerBatches = await eventually(
      () => `router batch lines adding up to 100 records, saw ${JSON.stringify(routerBatchesLogged())}`,
      () => {
        const batches = routerBatchesLogged();
        return batches.reduce((sum, line) => sum + (line.received ?? 0), 0) >= 100 && batches;
      },
    );
    expect(routerBatches.reduce((sum, line) => sum + (line.received ?? 0), 0)).toBe(100);
    expect(routerBatches.every((line) => line.failed === 0)).toBe(true);
    expect(Math.max(...routerBatches.map((line) => line.received ?? 0))).toBeGreaterThan(10);
  });
});
