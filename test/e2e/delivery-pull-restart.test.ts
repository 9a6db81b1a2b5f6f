/**
 * A laptop host restarted with its state keeps its pull subscriptions' queues and their events
 * (local/host.ts `recreatePullQueues`, local/sqs-journal.ts): the queues are made at run time, not
 * from functions/config/resources.ts, so the host makes them again on start and the journal puts their
 * messages back.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startKoerierHost, type KoerierHost } from '../../local/host.js';
import { callApi, tryPublish } from '../support/koerier-api.js';

let dir: string | undefined;
const hosts: KoerierHost[] = [];

afterAll(async () => {
  await Promise.all(hosts.map((host) => host.stop()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function start(): Promise<KoerierHost> {
  dir ??= await mkdtemp(join(tmpdir(), 'koerier-pull-restart-'));
  const host = await startKoerierHost({
    port: 0,
    stateDir: join(dir, 'state'),
    configFile: join(dir, 'koerier.local.json'),
    log: () => undefined,
  });
  hosts.push(host);
  return host;
}

/** A POST to `host`'s API, answered whatever its status. */
const call = (host: KoerierHost, token: string, path: string, body: unknown) =>
  callApi(host.apiUrl, token, 'POST', path, body);

describe('pull across a laptop restart (CARD-7)', () => {
  it('EDU-17: an event waiting in a pull queue is there after a restart, with its delivery key; the queue takes new events', async () => {
    const first = await start();
    const consumer = await first.issueToken('dev-subscriber');
    const publisher = await first.issueToken('dev-publisher');
    const type = `nl.example.restart.${randomUUID().slice(0, 8)}.v1`;
    const created = await call(first, consumer, '/subscriptions', { delivery: 'pull', types: [type] });
    const id = created.body['id'] as string;
    const publish = (host: KoerierHost, token: string) =>
      tryPublish(host.apiUrl, token, {
        specversion: '1.0',
        id: randomUUID(),
        source: 'urn:nld:oin:00000001234567890000:systeem:restart',
        type,
        data: {},
      });
    expect((await publish(first, publisher)).status).toBe(202);
    // Received once (lock 10 s) and not settled: it must come back after the restart.
    const before = await call(first, consumer, `/subscriptions/${id}/events/receive`, {
      waitseconds: 20,
      lockseconds: 10,
    });
    const [lock] = before.body['locks'] as { deliverykey: string }[];
    expect(lock).toBeDefined();
    await first.stop();

    const second = await start();
    const consumerAgain = await second.issueToken('dev-subscriber');
    const after = await call(second, consumerAgain, `/subscriptions/${id}/events/receive`, { waitseconds: 20 });
    expect(after.status).toBe(200);
    expect(after.body['locks']).toMatchObject([{ deliverykey: lock!.deliverykey, deliverycount: 2 }]);
    expect((await publish(second, await second.issueToken('dev-publisher'))).status).toBe(202);
    const fresh = await call(second, consumerAgain, `/subscriptions/${id}/events/receive`, { waitseconds: 20 });
    expect(fresh.body['locks']).toMatchObject([{ deliverycount: 1 }]);
  });
});
