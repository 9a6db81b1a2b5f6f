/**
 * Issue 9, item 1 (must show): two laptop hosts in one process, used side by side. Each host
 * builds its own configuration and dependencies (functions/composition/aws-dependencies.ts) and
 * hands them to the functions; neither writes process.env. So each answers with its own settings
 * and tokens, counts its own publish window, and delivers its own events to its own subscriber.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, KoerierProblem, publishEvents } from '../support/koerier-api.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';

const authority = createLocalCertificateAuthority();
let dir: string;
let environmentBefore: Record<string, string | undefined>;
const hosts: { name: string; koerier: TestHost; receiver: HttpsReceiver }[] = [];

beforeAll(async () => {
  environmentBefore = { ...process.env };
  dir = await mkdtemp(join(tmpdir(), 'koerier-two-hosts-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  for (const [name, publishRate] of [
    ['a', '50'],
    ['b', '1'],
  ] as const) {
    const koerier = await startTestHost(
      {
        [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
        [settingEnv.validationAgreedClients]: 'dev-subscriber',
        [settingEnv.webhookOrigin]: `host-${name}.local`,
        [settingEnv.publishRatePerMinute]: publishRate,
      },
      { exportEnvironment: false },
    );
    hosts.push({ name, koerier, receiver: await startHttpsReceiver({ authority }) });
  }
}, 120_000);

afterAll(async () => {
  for (const { koerier, receiver } of hosts) {
    await receiver.close();
    await koerier.stop();
  }
  await rm(dir, { recursive: true, force: true });
});

/** The status a publication was answered with, a refusal's included; no retries, so a 429 is seen as answered. */
const publishedStatus = (koerier: TestHost, token: string, event: Record<string, unknown>) =>
  publishEvents(apiAs(koerier.url, token, { retries: 0 }), event).then(
    ({ response }) => response.status,
    (refusal: KoerierProblem) => refusal.status,
  );

describe('two laptop hosts in one process', () => {
  it('issue 9: starting two hosts writes nothing to process.env', () => {
    expect(hosts).toHaveLength(2);
    expect({ ...process.env }).toEqual(environmentBefore);
  });

  it('issue 9: each host runs with its own configuration, on its own emulators', () => {
    const [a, b] = hosts.map((host) => host.koerier.host);
    expect(a!.config.auth.issuer).toBe(a!.url);
    expect(b!.config.auth.issuer).toBe(b!.url);
    expect([a!.config.publishRatePerMinute, b!.config.publishRatePerMinute]).toEqual([50, 1]);
    expect(a!.config.resources.queueUrl('inbound')).not.toBe(b!.config.resources.queueUrl('inbound'));
  });

  it('issue 9: a token of one host is refused by the other (each verifies against its own issuer and keys)', async () => {
    const [a, b] = hosts.map((host) => host.koerier);
    const tokenOfA = await a!.token('dev-publisher', ['events:publish']);
    const atB = await publishEvents(apiAs(b!.url, tokenOfA, { retries: 0 }), {
      specversion: '1.0',
      id: randomUUID(),
      source: 'urn:nld:oin:00000001234567890000:systeem',
      type: 'nl.example.two.v1',
    }).catch((refusal: KoerierProblem) => refusal);
    expect(atB).toBeInstanceOf(KoerierProblem);
    expect((atB as KoerierProblem).status).toBe(401);
    expect((atB as KoerierProblem).headers.get('content-type')).toBe('application/problem+json');
  });

  it('issue 9: each host delivers its own events to its own subscriber, with its own origin, and counts its own publish window (WH-7)', async () => {
    const type = `nl.example.two-hosts.${randomUUID().slice(0, 8)}.v1`;
    const published = new Map<string, string>();
    for (const { name, koerier, receiver } of hosts) {
      const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
      const { response: created } = await apiAs(koerier.url, subscriber).POST('/subscriptions', {
        body: { sink: receiver.url, types: [type], validation: 'agreed', sinkcredential: receiver.sinkCredential },
      });
      expect(created.status).toBe(201);
      const id = `${name}-${randomUUID()}`;
      const accepted = await publishedStatus(koerier, await koerier.token('dev-publisher', ['events:publish']), {
        specversion: '1.0',
        id,
        source: 'urn:nld:oin:00000001234567890000:systeem',
        type,
        data: { host: name },
      });
      expect(accepted).toBe(202);
      published.set(name, id);
    }

    for (const { name, receiver } of hosts) {
      const [delivered] = await receiver.waitForRequests(1, { timeoutMs: 30_000 });
      expect(JSON.parse(delivered!.body)).toMatchObject({ id: published.get(name), data: { host: name } });
      expect(delivered!.headers['webhook-request-origin']).toBe(`host-${name}.local`);
    }

    // Host b allows one publish request per minute, host a fifty. Three more requests span at most
    // two windows (whatever the clock's minute does meanwhile), so b refuses at least one; a none.
    const statuses = async (koerier: TestHost) => {
      const token = await koerier.token('dev-publisher', ['events:publish']);
      const answers: number[] = [];
      for (let n = 0; n < 3; n++)
        answers.push(
          await publishedStatus(koerier, token, {
            specversion: '1.0',
            id: randomUUID(),
            source: 'urn:nld:oin:00000001234567890000:systeem',
            type: `${type}.unrouted`,
          }),
        );
      return answers;
    };
    const [a, b] = hosts.map((host) => host.koerier);
    expect(await statuses(b!)).toContain(429);
    expect(await statuses(a!)).toEqual([202, 202, 202]);

    // Nothing crossed over: each receiver got exactly its host's deliveries.
    const deliveredIds = (receiver: HttpsReceiver) =>
      receiver.requests.filter((r) => r.method === 'POST').map((r) => (JSON.parse(r.body) as { id: string }).id);
    expect(deliveredIds(hosts[1]!.receiver)).toEqual([published.get('b')]);
    expect(deliveredIds(hosts[0]!.receiver)).not.toContain(published.get('b'));
  });
});
