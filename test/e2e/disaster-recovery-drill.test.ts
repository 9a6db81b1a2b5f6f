/**
 * Issue 35, "the drill, on the laptop" (DR-1; docs/DISASTER-RECOVERY.md, "The drill"). A laptop
 * host accepts events continuously for a push and a pull subscriber while its archive and its
 * subscriptions are copied to a second location as they are written; then the host is killed
 * (SIGKILL) with deliveries in flight and its state directory deleted; a new host starts on an
 * empty state directory, gets the replicated archive and subscriptions, and a replay of the lost
 * window (docs/REPLAY.md) delivers every event the first host accepted (every 202) at least once.
 *
 * What stands for what:
 * - the second Region's archive bucket (S3 replication, `koerier:bucketReplicas`): a map of archive
 *   objects this test copies from the first host's S3 every 100 ms, put into the new host's archive
 *   bucket when it starts (on AWS the standby's bucket is the replica itself);
 * - the global subscriptions table (`koerier:globalTableRegions`): the table's items, scanned on the
 *   same beat and put into the new host's table; the partner directory comes from the settings,
 *   which both hosts share (as both stacks share their deployment settings);
 * - a multi-Region KMS key: the first host's laptop key files, copied once at its start, which the
 *   new host is pointed at (`KOERIER_LOCAL_KEYS_DIR`): the subscriptions' sink credentials are
 *   encrypted under them and must decrypt in the second Region;
 * - the API name moving: the publisher, the receivers and the pull consumer talk to the new host.
 *
 * Events accepted but not yet archived and replicated are the RPO of docs/DISASTER-RECOVERY.md and
 * cannot be replayed: the drill stops publishing and lets the replication catch up before the kill
 * (and prints how long that took), so what it asserts is the replay's promise, not the RPO.
 */
import { randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, PutItemCommand, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { localName } from '../../functions/config/resources.js';
import { ARCHIVE_PREFIX, decodeArchiveObject } from '../../functions/core/replay/archive-format.js';
import { startKoerierHost, type KoerierHost } from '../../local/host.js';
import { defaultLocalConfig, type LocalConfig } from '../../local/local-config-file.js';
import type { EmulatorClientSettings } from '../../local/emulators.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';
import { hostProcessToken, startHostProcess } from '../support/host-process.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { eventually } from '../support/waiting.js';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
const WORKER = fileURLToPath(new URL('./disaster-recovery-host.ts', import.meta.url));
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:dr-drill';
const TYPE = `nl.example.drill.${randomUUID().slice(0, 8)}.v1`;
/** How long the first host accepts events before the replication is let catch up and it is killed. */
const PUBLISH_MS = 4_000;
const MIN_ACCEPTED = 20;
const REPLICATION_BEAT_MS = 100;

const authority = createLocalCertificateAuthority();
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Delivery {
  readonly id: string;
  readonly at: number;
  /** The replay marker the delivery came with: `Koerier-Replay-Id`, or the pull lock's `replay.id`. */
  readonly replayId: string | undefined;
}

/** The first host, in its own process: `kill()` is SIGKILL, nothing is flushed or stopped. */
async function startFirstHost(stateDir: string, configFile: string, settings: Record<string, string>) {
  // Node itself with tsx's loader, not the tsx command: that one runs the host in a child process
  // of its own, which a SIGKILL of the command would leave running.
  const host = await startHostProcess(
    {
      command: process.execPath,
      args: ['--import', 'tsx', WORKER, stateDir, configFile],
      readyPattern: /^ready (.*)$/m,
      cwd: REPOSITORY,
      env: { ...process.env, ...settings },
      timeoutMs: 60_000,
    },
    (child) => cleanups.push(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')),
  );
  const line = host.match[1]!;
  const ready = JSON.parse(line) as {
    url: string;
    apiUrl: string;
    s3: EmulatorClientSettings;
    dynamodb: EmulatorClientSettings;
  };
  return {
    ...ready,
    kill: async () => {
      host.child.kill('SIGKILL');
      await host.exited;
    },
  };
}

/**
 * The second location: archive objects and subscription items copied from the first host as they
 * are written, until `stop()` (the Region is gone).
 */
function replicate(first: { s3: EmulatorClientSettings; dynamodb: EmulatorClientSettings }) {
  const s3 = new S3Client({ ...first.s3, forcePathStyle: true });
  const dynamodb = new DynamoDBClient(first.dynamodb);
  const objects = new Map<string, { body: Buffer; contentType?: string }>();
  let subscriptions: Record<string, AttributeValue>[] = [];
  let running = true;
  const beat = async () => {
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({
          Bucket: localName.bucket('archive'),
          Prefix: ARCHIVE_PREFIX,
          ContinuationToken: token,
        }),
      );
      for (const { Key } of page.Contents ?? []) {
        if (!Key || objects.has(Key)) continue;
        const object = await s3.send(new GetObjectCommand({ Bucket: localName.bucket('archive'), Key }));
        objects.set(Key, {
          body: Buffer.from(await object.Body!.transformToByteArray()),
          ...(object.ContentType ? { contentType: object.ContentType } : {}),
        });
      }
      token = page.NextContinuationToken;
    } while (token);
    const items: Record<string, AttributeValue>[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await dynamodb.send(
        new ScanCommand({ TableName: localName.table('subscriptions'), ExclusiveStartKey: startKey }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    subscriptions = items;
  };
  const loop = (async () => {
    while (running) {
      await beat();
      await new Promise((resolve) => setTimeout(resolve, REPLICATION_BEAT_MS));
    }
  })();
  return {
    objects,
    subscriptions: () => subscriptions,
    archivedIds: () => new Set([...objects.values()].flatMap(({ body }) => decodeArchiveObject(body).map((e) => e.id))),
    async stop() {
      running = false;
      await loop;
      s3.destroy();
      dynamodb.destroy();
    },
  };
}

/** Puts the replicated archive and subscriptions into the new host, and its pull queues, as a standby has them. */
async function restoreInto(host: KoerierHost, replica: ReturnType<typeof replicate>, pullId: string) {
  for (const [key, { body, contentType }] of replica.objects) {
    await host.awsClients.s3.send(
      new PutObjectCommand({ Bucket: localName.bucket('archive'), Key: key, Body: body, ContentType: contentType }),
    );
  }
  for (const item of replica.subscriptions()) {
    await host.awsClients.dynamodb.send(
      new PutItemCommand({ TableName: localName.table('subscriptions'), Item: item }),
    );
  }
  // A pull subscription's queue is not in the table: the standby makes it, as the host does on start.
  const pull = await host.dependencies.subscriptions.get(pullId);
  await host.dependencies.pullQueues.create(pullId, pull!.pull!);
}

const tally = (deliveries: readonly Delivery[]) => {
  const ids = new Set(deliveries.map((d) => d.id));
  return { deliveries: deliveries.length, events: ids.size, duplicates: deliveries.length - ids.size, ids };
};

describe('issue 35, the drill (DR-1): a host lost with events in flight, recovered from the replicated archive', () => {
  it('DR-1: after the state directory is destroyed, a new host from the replicated archive and subscriptions replays every accepted event at least once, repeats marked', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'koerier-drill-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const firstState = join(dir, 'first', '.koerier');
    const keysReplica = join(dir, 'keys-replica');
    const configFile = join(dir, 'koerier.local.json');
    const config: LocalConfig = { ...defaultLocalConfig(), validationAgreedClients: ['dev-subscriber'] };
    await writeFile(configFile, JSON.stringify(config), { mode: 0o600 });
    await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
    const settings = {
      [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
      [settingEnv.deliveryRetryInitialSeconds]: '1',
      [settingEnv.deliveryRetryMaxDelaySeconds]: '2',
      // The receiver refuses half the events until the loss; that must not open its breaker.
      [settingEnv.deliveryBreakerFailures]: '1000',
      [settingEnv.logLevel]: 'warn',
    };

    // Push receiver: until the loss it refuses every odd event (503), so those are in retry, in
    // flight, when the host dies; the even ones are delivered by the first host and come again.
    let lost = false;
    const pushDelivered: Delivery[] = [];
    const receiver: HttpsReceiver = await startHttpsReceiver({
      authority,
      script: (_n, request) => {
        const event = JSON.parse(request.body) as { id: string; data: { n: number } };
        if (!lost && event.data.n % 2 === 1) return { respond: 503 };
        pushDelivered.push({ id: event.id, at: Date.now(), replayId: request.headers['koerier-replay-id'] });
        return { respond: 204 };
      },
    });
    cleanups.push(() => receiver.close());

    const first = await startFirstHost(firstState, configFile, settings);
    await mkdir(keysReplica, { recursive: true, mode: 0o700 });
    await cp(join(firstState, 'keys'), keysReplica, { recursive: true });
    let apiUrl = first.apiUrl;
    const subscriber = await hostProcessToken(first.url, config, 'dev-subscriber');
    const publisher = await hostProcessToken(first.url, config, 'dev-publisher');
    const push = await callApi(apiUrl, subscriber, 'POST', '/subscriptions', {
      sink: receiver.url,
      types: [TYPE],
      validation: 'agreed',
      sinkcredential: receiver.sinkCredential,
    });
    expect(push.status).toBe(201);
    const pull = await callApi(apiUrl, subscriber, 'POST', '/subscriptions', { delivery: 'pull', types: [TYPE] });
    expect(pull.status).toBe(201);
    const pushId = push.body['id'] as string;
    const pullId = pull.body['id'] as string;

    const replica = replicate(first);
    const pullDelivered: Delivery[] = [];
    const receiveOnce = async (bearer: string, maxevents: number) => {
      const answer = await callApi(apiUrl, bearer, 'POST', `/subscriptions/${pullId}/events/receive`, {
        maxevents,
        waitseconds: 0,
      });
      expect(answer.status).toBe(200);
      const events = answer.body['events'] as { id: string }[];
      const locks = answer.body['locks'] as { locktoken: string; replay?: { id: string } }[];
      events.forEach((event, i) =>
        pullDelivered.push({ id: event.id, at: Date.now(), replayId: locks[i]!.replay?.id }),
      );
      if (locks.length > 0) {
        const acknowledged = await callApi(apiUrl, bearer, 'POST', `/subscriptions/${pullId}/events/acknowledge`, {
          locktokens: locks.map((lock) => lock.locktoken),
        });
        expect(acknowledged.status).toBe(200);
      }
    };

    // Publishing and a slow pull consumer, side by side, for PUBLISH_MS.
    const drillStart = Date.now();
    const accepted: string[] = [];
    let publishing = true;
    let next = 0;
    const refused: string[] = [];
    // Three publishers side by side, each sending its next event when the last was answered.
    const publisherLoop = async () => {
      while (publishing) {
        const n = next++;
        const id = `drill-${n}-${randomUUID()}`;
        const answer = await tryPublish(apiUrl, publisher, {
          specversion: '1.0',
          id,
          source: SOURCE,
          type: TYPE,
          data: { n },
        });
        if (answer.status === 202) accepted.push(id);
        else refused.push(`${answer.status} ${answer.text.slice(0, 200)}`);
      }
    };
    const publishers = [publisherLoop(), publisherLoop(), publisherLoop()];
    const consumerLoop = (async () => {
      while (publishing) {
        await receiveOnce(subscriber, 3);
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, PUBLISH_MS));
    // On a loaded laptop four seconds may hold few events: go on until there are enough to count.
    await eventually(`${MIN_ACCEPTED} accepted events`, () => accepted.length >= MIN_ACCEPTED, {
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    publishing = false;
    await Promise.all([...publishers, consumerLoop]);
    const publishedFor = Date.now() - drillStart;

    // The replica catches up with every 202 (the RPO window), then the Region is lost.
    const catchUpStart = Date.now();
    await eventually(
      'every accepted event in the replicated archive',
      () => {
        const archived = replica.archivedIds();
        return accepted.every((id) => archived.has(id));
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    const replicationLagMs = Date.now() - catchUpStart;
    await replica.stop();
    const beforeLoss = { push: tally(pushDelivered), pull: tally(pullDelivered) };
    await first.kill();
    await rm(firstState, { recursive: true, force: true });
    const destroyedAt = Date.now();
    lost = true;

    // The new host: an empty state directory, the same configuration file and settings, the replicated keys.
    const second = await startKoerierHost({
      port: 0,
      stateDir: join(dir, 'second', '.koerier'),
      configFile,
      log: () => undefined,
      settings: { ...settings, [settingEnv.localKeysDir]: keysReplica },
    });
    cleanups.push(() => second.stop());
    apiUrl = second.apiUrl;
    await restoreInto(second, replica, pullId);
    const subscriberAgain = await hostProcessToken(second.url, config, 'dev-subscriber');
    // The lost window: everything since the drill began (a second before it, for clock rounding).
    const window = { from: new Date(drillStart - 1_000).toISOString(), to: new Date().toISOString() };
    for (const id of [pushId, pullId]) {
      const started = await callApi(apiUrl, subscriberAgain, 'POST', `/subscriptions/${id}/replays`, window);
      expect(started.status).toBe(202);
    }

    const pullDone = eventually(
      'every accepted event pulled after the recovery',
      async () => {
        await receiveOnce(subscriberAgain, 32);
        const pulled = tally(pullDelivered).ids;
        return accepted.every((id) => pulled.has(id));
      },
      { timeoutMs: 90_000, intervalMs: 100 },
    );
    const pushDone = eventually(
      'every accepted event pushed after the recovery',
      () => {
        const pushed = tally(pushDelivered).ids;
        return accepted.every((id) => pushed.has(id));
      },
      { timeoutMs: 90_000, intervalMs: 100 },
    );
    await Promise.all([pullDone.catch(() => undefined), pushDone.catch(() => undefined)]);

    const after = (deliveries: readonly Delivery[]) => deliveries.filter((d) => d.at >= destroyedAt);
    const firstFromNewHost = Math.min(...[...after(pushDelivered), ...after(pullDelivered)].map((d) => d.at));
    const figures = {
      publishedForMs: publishedFor,
      accepted: accepted.length,
      refused: refused.slice(0, 3),
      replicationCatchUpMs: replicationLagMs,
      deliveredBeforeLoss: { push: beforeLoss.push.events, pull: beforeLoss.pull.events },
      deliveredAfterRecovery: { push: after(pushDelivered).length, pull: after(pullDelivered).length },
      duplicates: { push: tally(pushDelivered).duplicates, pull: tally(pullDelivered).duplicates },
      neverDelivered: {
        push: accepted.filter((id) => !tally(pushDelivered).ids.has(id)).length,
        pull: accepted.filter((id) => !tally(pullDelivered).ids.has(id)).length,
      },
      timeToRecoverMs: firstFromNewHost - destroyedAt,
    };
    console.log(`disaster-recovery drill: ${JSON.stringify(figures, null, 2)}`);

    // At least once: every 202, to both subscribers.
    expect(figures.accepted).toBeGreaterThanOrEqual(MIN_ACCEPTED);
    expect(figures.neverDelivered).toEqual({ push: 0, pull: 0 });
    // Events were in flight when the host died: refused pushes in retry, and a pull backlog.
    expect(beforeLoss.push.events).toBeLessThan(accepted.length);
    expect(beforeLoss.pull.events).toBeLessThan(accepted.length);
    // The marker: every delivery of the new host is a replay's and says so; the first host's never did.
    for (const delivery of [...after(pushDelivered), ...after(pullDelivered)]) expect(delivery.replayId).toBeTruthy();
    for (const delivery of [...pushDelivered, ...pullDelivered].filter((d) => d.at < destroyedAt))
      expect(delivery.replayId).toBeUndefined();
    // Everything delivered before the loss came again: each of those repeats carries the marker.
    expect(figures.duplicates.push).toBeGreaterThanOrEqual(beforeLoss.push.events);
    expect(figures.duplicates.pull).toBeGreaterThanOrEqual(beforeLoss.pull.events);
  }, 240_000);
});
