/**
 * The 20-line receiver of receiver/README.md, run as it is written (issue 30 item 6), the way
 * `koerier listen` is tested (test/e2e/cli-subscriptions-pull.test.ts): as a process of its own,
 * with a push subscription made by the `koerier` CLI against the laptop host. The code block is read
 * from the README, so the README cannot drift from what works; the one change is where the package
 * comes from (`@koerier/receiver` is not installed in this repository: the source is imported).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { LOCAL_AUDIENCE } from '../../local/host.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, publishEvents } from '../support/koerier-api.js';
import { cliUser, createPushSubscription, type CliUser } from '../support/koerier-cli.js';
import { recordingProxy, type RecordingProxy } from '../support/receiver-kit-servers.js';
import { eventually } from '../support/waiting.js';

vi.setConfig({ testTimeout: 60_000 });

const README = new URL('../../receiver/README.md', import.meta.url);
const MARKER = '<!-- receiver.mjs:';
const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';

/** The README's complete receiver: the first js code block after its marker. */
async function readmeReceiverCode(): Promise<string> {
  const readme = await readFile(README, 'utf8');
  const section = readme.slice(readme.indexOf(MARKER));
  const code = /```js\n([\s\S]+?)```/.exec(section)?.[1];
  if (!code) throw new Error(`receiver/README.md has no js code block after "${MARKER}"`);
  return code;
}

let koerier: TestHost;
let cli: CliUser;
let dir: string;
let receiver: ChildProcess | undefined;
let proxy: RecordingProxy | undefined;

beforeAll(async () => {
  koerier = await startTestHost({ [settingEnv.deliveryRetryInitialSeconds]: '1' });
  cli = await cliUser(koerier.url);
  dir = await mkdtemp(join(tmpdir(), 'koerier-readme-receiver-'));
});
afterAll(async () => {
  receiver?.kill();
  await proxy?.close();
  await cli?.remove();
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("receiver/README.md's receiver (issue 30 item 6)", () => {
  it('issue 30 item 6: the README receiver is at most 20 lines of code', async () => {
    const lines = (await readmeReceiverCode()).split('\n').filter((line) => line.trim() !== '');
    expect(lines.length).toBeLessThanOrEqual(20);
  });

  it("issue 30 item 6, WH-4, WH-3, EDU-IDEM-15: the README receiver, run as written, consents to the handshake of a subscription the CLI creates, prints a signed delivery's event once, and answers Koerier's retry of it as a duplicate", async () => {
    const code = (await readmeReceiverCode()).replace(
      "from '@koerier/receiver'",
      `from '${pathToFileURL(join(import.meta.dirname, '../../receiver/src/index.ts')).href}'`,
    );
    expect(code).not.toContain('@koerier/receiver');
    const file = join(dir, 'receiver.mjs');
    await writeFile(file, code);
    let stdout = '';
    let stderr = '';
    receiver = spawn(process.execPath, ['--import', 'tsx', file], {
      env: {
        PATH: process.env['PATH'],
        PORT: '0',
        KOERIER_ORIGIN: 'koerier.local',
        KOERIER_URL: koerier.origin,
        TOKEN_JWKS_URL: `${koerier.origin}/.well-known/jwks.json`,
        TOKEN_ISSUER: koerier.origin,
        TOKEN_AUDIENCE: LOCAL_AUDIENCE,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    receiver.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    receiver.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const url = await eventually('the receiver to start', () => /Listening on (http:\/\/\S+)/.exec(stderr)?.[1], {
      timeoutMs: 20_000,
    });
    // In front of it, a proxy that records the exchanges and can lose an answer (a dropped connection).
    proxy = await recordingProxy(new URL(url).origin);

    const type = `nl.edu.readme.${randomUUID().slice(0, 8)}`;
    const secret = koerier.host.localConfig.clients['dev-subscriber']!.secret;
    const created = await createPushSubscription(cli, {
      sink: `${proxy.origin}/`,
      type,
      origin: koerier.origin,
      subscriber: { KOERIER_CLIENT_ID: 'dev-subscriber', KOERIER_CLIENT_SECRET: secret },
      args: ['--sign'],
    });
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ status: 'active', signdeliveries: true });
    expect(proxy.exchanges[0]).toMatchObject({
      method: 'OPTIONS',
      answer: { status: 200, headers: { 'webhook-allowed-origin': 'koerier.local', 'webhook-allowed-rate': '600' } },
    });

    // The first answer is lost: Koerier retries the delivery under the same Idempotency-Key.
    const id = randomUUID();
    proxy.loseNextAnswerTo(id);
    const token = await koerier.token('dev-publisher', ['events:publish']);
    const event = { specversion: '1.0', id, source: SOURCE, type, data: { leerling: 'L-42' } };
    expect((await publishEvents(apiAs(koerier.url, token), event)).response.status).toBe(202);
    const [first, retry] = await eventually(
      "Koerier's retry",
      () => {
        const posts = proxy!.exchanges.filter((exchange) => exchange.method === 'POST');
        return posts.length >= 2 && posts;
      },
      { timeoutMs: 30_000 },
    );
    const key = first!.headers['idempotency-key']!;
    expect(first!.headers['signature']).toBeDefined();
    expect(first).toMatchObject({ lost: true, answer: { status: 204 } });
    expect(retry).toMatchObject({ headers: { 'idempotency-key': key }, answer: { status: 200 } });
    expect(stdout.split('\n').filter(Boolean)).toEqual([`${type} ${id} ${key}`]);
  });
});
