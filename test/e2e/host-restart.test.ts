/**
 * review #22: a restart of the laptop host in the middle of retries loses nothing. Five events go
 * to a receiver that answers 503; once each has failed its first attempt and waits for its retry,
 * the host stops as Ctrl-C stops it — once through `host.stop()`, once as the real `npm start`
 * process on SIGINT — and starts again on the same state. Every event arrives, and its delivery
 * history ends in `delivered`, not `retrying`.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_BASE_PATH } from '../../functions/config/resources.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { defaultLocalConfig, type LocalConfig } from '../../local/local-config-file.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';
import { hostProcessToken, startHostProcess } from '../support/host-process.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import { eventually } from '../support/waiting.js';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
const WORKER = fileURLToPath(new URL('./host-restart-worker.ts', import.meta.url));
const TSX = join(REPOSITORY, 'node_modules', '.bin', 'tsx');
const EVENTS = 5;
/** The backoff each failed delivery waits: long enough to stop and start the host within it. */
const RETRY_SECONDS = 6;

/**
 * Review #14 makes a push subscription carry a credential; receivers that run their own token
 * endpoint offer one as `sinkCredential`. Passed on when the receiver has it.
 */
function sinkCredentialOf(receiver: object): Record<string, unknown> {
  return 'sinkCredential' in receiver ? { sinkcredential: receiver.sinkCredential } : {};
}

const authority = createLocalCertificateAuthority();
let dir: string;
const children: ChildProcess[] = [];
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-restart-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await rm(dir, { recursive: true, force: true });
});

interface RunningHost {
  readonly url: string;
  /** Stops it as Ctrl-C does; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Handler settings through the environment, as a user of `npm start` would give them. */
function environment(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: '0',
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.deliveryRetryInitialSeconds]: String(RETRY_SECONDS),
    [settingEnv.deliveryRetryMaxDelaySeconds]: String(RETRY_SECONDS),
    // Five 503s in a row would open the target's circuit breaker and postpone the retries by its
    // cooldown; this test is about the restart, not the breaker.
    [settingEnv.deliveryBreakerFailures]: '100',
    [settingEnv.logLevel]: 'warn',
  };
}

async function spawnHost(
  cwd: string,
  args: string[],
  readyPattern: RegExp,
  stopWith: (child: ChildProcess) => void,
): Promise<RunningHost> {
  const host = await startHostProcess({ command: TSX, args, readyPattern, cwd, env: environment() }, (child) =>
    children.push(child),
  );
  return {
    url: host.match[1]!,
    stop() {
      stopWith(host.child);
      return host.exited;
    },
  };
}

const startWorker = (cwd: string) =>
  spawnHost(cwd, [WORKER], /^ready (http:\/\/\S+)$/m, (child) => child.stdin!.write('stop\n'));
const startNpmStart = (cwd: string) =>
  spawnHost(cwd, [join(REPOSITORY, 'local', 'main.ts')], /API\s+(http:\/\/127\.0\.0\.1:\d+)/, (child) =>
    child.kill('SIGINT'),
  );

interface Attempt {
  readonly attempt: number;
  readonly status?: number;
  readonly outcome: string;
}

async function restartInTheMiddleOfRetries(start: (cwd: string) => Promise<RunningHost>): Promise<void> {
  const cwd = await mkdtemp(join(dir, 'host-'));
  const config: LocalConfig = { ...defaultLocalConfig(), validationAgreedClients: ['dev-subscriber'] };
  await writeFile(join(cwd, 'koerier.local.json'), JSON.stringify(config), { mode: 0o600 });

  // 503 to everything until the host has been restarted, then 204.
  let restarted = false;
  const receiver = await startHttpsReceiver({
    authority,
    script: () => (restarted ? { respond: 204 } : { respond: 503 }),
  });
  receivers.push(receiver);

  const first = await start(cwd);
  const subscriber = await hostProcessToken(first.url, config, 'dev-subscriber');
  const publisher = await hostProcessToken(first.url, config, 'dev-publisher');
  const type = `nl.example.restart.${randomUUID().slice(0, 8)}.v1`;
  const created = await callApi(`${first.url}${API_BASE_PATH}`, subscriber, 'POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    ...sinkCredentialOf(receiver),
  });
  expect(created.status).toBe(201);
  const subscriptionId = created.body['id'] as string;

  const ids = Array.from({ length: EVENTS }, () => randomUUID());
  for (const id of ids) {
    const published = await tryPublish(`${first.url}${API_BASE_PATH}`, publisher, {
      specversion: '1.0',
      id,
      source: 'urn:nld:oin:00000001234567890000:systeem:restart',
      type,
      data: { n: id },
    });
    expect(published.status).toBe(202);
  }

  // Every event failed its first attempt, and its history says it waits for a retry.
  await receiver.waitForRequests(EVENTS, { timeoutMs: 20_000 });
  const history = async (url: string, bearer: string) => {
    const response = await fetch(`${url}${API_BASE_PATH}/subscriptions/${subscriptionId}/deliveries`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    return ((await response.json()) as { attempts: Attempt[] }).attempts;
  };
  await eventually(
    'five retrying attempts',
    async () => {
      const attempts = await history(first.url, subscriber);
      return attempts.filter((a) => a.outcome === 'retrying').length === EVENTS ? attempts : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 200 },
  );

  expect(await first.stop()).toBe(0);
  restarted = true;
  const before = receiver.requests.length;

  const second = await start(cwd);
  try {
    const delivered = await eventually(
      'every event delivered after the restart',
      async () => {
        const ok = receiver.requests.slice(before).filter((request) => request.method === 'POST');
        const seen = new Set(ok.map((request) => (JSON.parse(request.body) as { id: string }).id));
        return ids.every((id) => seen.has(id)) ? seen : undefined;
      },
      { timeoutMs: RETRY_SECONDS * 1000 + 30_000, intervalMs: 200 },
    );
    expect([...delivered].sort()).toEqual([...ids].sort());
    const subscriberAgain = await hostProcessToken(second.url, config, 'dev-subscriber');
    const attempts = await eventually(
      'five delivered attempts in the history',
      async () => {
        const list = await history(second.url, subscriberAgain);
        return list.filter((a) => a.outcome === 'delivered').length === EVENTS ? list : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    // One failed attempt and one delivery per event: the retry is the second attempt.
    expect(attempts.filter((a) => a.outcome === 'delivered').map((a) => [a.attempt, a.status])).toEqual(
      Array.from({ length: EVENTS }, () => [2, 204]),
    );
  } finally {
    expect(await second.stop()).toBe(0);
  }
}

// The two ways of stopping share nothing but the certificate authority (each has its own working
// directory, host, ports and receiver), so they run side by side: most of each is the retry wait.
describe.concurrent('review #22: restart of the laptop host in the middle of retries', () => {
  it('review #22: host.stop() while five deliveries wait for their retries, start again on the same state: all five delivered, history delivered', async () => {
    await restartInTheMiddleOfRetries(startWorker);
  }, 120_000);

  it('review #22: npm start stopped with SIGINT while five deliveries wait for their retries, started again: all five delivered, history delivered', async () => {
    await restartInTheMiddleOfRetries(startNpmStart);
  }, 120_000);
});
