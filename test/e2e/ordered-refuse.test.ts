/**
 * Issue 33, ORD-1 on the laptop host: an ordered subscription with `withoutKey: "refuse"`. The ingest
 * refuses a keyless event the subscription would receive (400 ordering-key-missing, nothing stored:
 * the receiver never gets it), accepts a keyed one (delivered with `sequence`) and a keyless one the
 * subscription's filter does not match. The subscription store lists the subscription in the route
 * index's `#key-required` partition, which the ingest reads (cached 5 s per container).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { callApi } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { problemTypeUri } from '../support/problem-types.js';

const authority = createLocalCertificateAuthority();
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e';
let koerier: TestHost;
let dir: string;
let receiver: HttpsReceiver;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-ordered-refuse-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
  });
  receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('withoutKey refuse on the laptop host (issue 33)', () => {
  it('ORD-1: an ordered subscription with withoutKey refuse: a keyed event is 202 and delivered with its sequence, a keyless one it would receive is 400 ordering-key-missing naming the attribute and the subscription and never delivered, a keyless one its filter does not match is 202', async () => {
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
    const type = `nl.example.refuse.${randomUUID().slice(0, 8)}.v1`;
    const created = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [type],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
      ordering: { key: 'partitionkey', withoutKey: 'refuse' },
    });
    expect(created.status).toBe(201);
    const subscriptionId = String(created.body['id']);
    const publisher = await koerier.token('dev-publisher', ['events:publish']);
    const publish = (event: Record<string, unknown>) =>
      callApi(
        koerier.url,
        publisher,
        'POST',
        '/events',
        JSON.stringify({ specversion: '1.0', id: randomUUID(), source: SOURCE, ...event }),
        { 'content-type': 'application/cloudevents+json' },
      );

    const keyed = await publish({ type, partitionkey: 'leerling-42', data: { n: 1 } });
    expect(keyed.status).toBe(202);

    const keyless = await publish({ type, data: { n: 2 } });
    expect(keyless.status).toBe(400);
    expect(keyless.headers.get('content-type')).toContain('application/problem+json');
    expect(keyless.body).toMatchObject({
      type: problemTypeUri('ordering-key-missing'),
      title: 'Ordering key missing',
      status: 400,
    });
    expect(keyless.body['errors']).toEqual([
      expect.objectContaining({ attribute: 'partitionkey', requirement: 'ORD-1' }),
    ]);
    expect(String((keyless.body['errors'] as { message: string }[])[0]!.message)).toContain(subscriptionId);

    const unmatched = await publish({ type: `${type}.other`, data: { n: 3 } });
    expect(unmatched.status).toBe(202);

    await receiver.waitForRequests(1, { timeoutMs: 60_000 });
    // The refused event was stored nowhere: had it been queued, it would arrive unordered about now.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const delivered = receiver.requests
      .filter((r) => r.method === 'POST')
      .map((r) => JSON.parse(r.body) as { partitionkey?: string; sequence?: string; data: { n: number } });
    expect(delivered).toEqual([expect.objectContaining({ partitionkey: 'leerling-42', sequence: '0000000001' })]);
  }, 120_000);
});
