/**
 * At-least-once under a crash (EDU-9, EDU-17): 1,000 events to three push subscribers; the
 * delivery worker is killed with SIGKILL in the middle of the run and started again. Every event
 * reaches every subscriber, and what arrives twice carries the same Idempotency-Key both times,
 * so a receiver recognises the duplicate (EDU-IDEM-9).
 *
 * The host (API, router, emulators) runs in this process; only the delivery worker is a child
 * process, so SQS — in memory in the emulator — outlives the kill.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { apiAs, publishEvents, type SubscriptionRequest } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../support/https-receiver.js';
import { eventually } from '../support/waiting.js';

const EVENTS = 1000;
const BATCH = 50;
const TYPE = 'nl.example.crash.tested.v1';
const WORKER = fileURLToPath(new URL('./delivery-crash-worker.ts', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let dir: string;
const receivers: HttpsReceiver[] = [];
const workers: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-crash-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost(
    {
      [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.logLevel]: 'warn',
    },
    { queueTriggers: ['router'] },
  );
  // A killed worker's messages come back after the queue's visibility timeout: 5 s, not 3 minutes.
  const sqs = new SQSClient({});
  await sqs.send(
    new SetQueueAttributesCommand({
      QueueUrl: process.env[resourceEnv.queueUrl('deliveries')]!,
      Attributes: { VisibilityTimeout: '5' },
    }),
  );
  sqs.destroy();
}, 60_000);

afterAll(async () => {
  for (const worker of workers) worker.kill('SIGKILL');
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

function startWorker(): Promise<ChildProcess> {
  const worker = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    cwd: REPOSITORY,
    env: { ...process.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  workers.push(worker);
  return new Promise((resolve, reject) => {
    worker.once('exit', (code) => reject(new Error(`delivery worker exited early (${code})`)));
    worker.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(worker);
    });
  });
}

function kill(worker: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    worker.removeAllListeners('exit');
    worker.once('exit', () => resolve());
    worker.kill('SIGKILL');
  });
}

const posts = () => receivers.reduce((sum, receiver) => sum + receiver.requests.length, 0);

describe('a delivery worker killed mid-run', () => {
  it('EDU-9, EDU-17, EDU-IDEM-9: every one of 1,000 events reaches each of three subscribers at least once; duplicates share their Idempotency-Key', async () => {
    const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
    for (let i = 0; i < 3; i++) {
      // A little slow, as real receivers are: the run lasts long enough to be interrupted.
      const receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204, delayMs: 15 }) });
      receivers.push(receiver);
      const created = await apiAs(koerier.url, subscriber).POST('/subscriptions', {
        body: {
          sink: receiver.url,
          types: [TYPE],
          validation: 'agreed',
          sinkcredential: receiver.sinkCredential,
        } as SubscriptionRequest,
      });
      expect(created.response.status).toBe(201);
    }

    const first = await startWorker();
    const ids = Array.from({ length: EVENTS }, () => randomUUID());
    const publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
    for (let i = 0; i < ids.length; i += BATCH)
      await publishEvents(
        publisher,
        ids.slice(i, i + BATCH).map((id) => ({
          specversion: '1.0',
          id,
          source: 'urn:nld:oin:00000001234567890000:systeem:crash',
          type: TYPE,
          data: { id },
        })),
      );

    await eventually(
      () => `${0.3 * EVENTS * 3} deliveries before the kill (${posts()} so far)`,
      () => posts() >= 0.3 * EVENTS * 3,
      { timeoutMs: 60_000, intervalMs: 20 },
    );
    await kill(first);
    const atKill = posts();
    expect(atKill).toBeLessThan(EVENTS * 3);

    await startWorker();
    const everything = new Set<string>(ids);
    for (const [index, receiver] of receivers.entries()) {
      const received = () => new Set(receiver.requests.map((r) => (JSON.parse(r.body) as { id: string }).id)).size;
      await eventually(
        () => `all ${EVENTS} events at subscriber ${index + 1} (${received()} came)`,
        () => received() === EVENTS,
        {
          timeoutMs: 90_000,
          intervalMs: 250,
        },
      );
    }

    let duplicates = 0;
    for (const receiver of receivers) {
      const keysByEvent = new Map<string, Set<string>>();
      for (const request of receiver.requests) {
        const { id } = JSON.parse(request.body) as { id: string };
        expect(everything.has(id)).toBe(true);
        const keys = keysByEvent.get(id) ?? new Set<string>();
        keys.add(request.headers['idempotency-key']!);
        keysByEvent.set(id, keys);
      }
      expect(keysByEvent.size).toBe(EVENTS);
      for (const keys of keysByEvent.values()) expect(keys.size).toBe(1);
      duplicates += receiver.requests.length - EVENTS;
    }
    console.info(
      `crash test: ${atKill} deliveries before the kill, ${posts()} in all, ${duplicates} duplicates (recognised by key)`,
    );
  }, 180_000);
});
