/**
 * The `koerier` CLI as a partner uses it, against the whole laptop host: `login` and `send` (single,
 * binary, batch, a folder of 1,000 events through a proxy that turns one answer into a 503).
 * Issue 16, item 1.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAnswerDroppingProxy } from '../support/answer-dropping-proxy.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs } from '../support/koerier-api.js';
import { cliUser, type CliUser } from '../support/koerier-cli.js';
import { eventually } from '../support/waiting.js';

// Every CLI run is a process start (about a second, several under load on two cores), and most tests make several.
vi.setConfig({ testTimeout: 60_000 });

const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';
const event = (type: string, extra: Record<string, unknown> = {}) => ({
  specversion: '1.0',
  id: randomUUID(),
  source: SOURCE,
  type,
  ...extra,
});

let koerier: TestHost;
let cli: CliUser;
let publisher: Record<string, string>;

beforeAll(async () => {
  koerier = await startTestHost();
  cli = await cliUser(koerier.url);
  publisher = {
    KOERIER_CLIENT_ID: 'dev-publisher',
    KOERIER_CLIENT_SECRET: koerier.host.localConfig.clients['dev-publisher']!.secret,
  };
});
afterAll(async () => {
  await cli?.remove();
  await koerier?.stop();
});

/** A pull subscription of dev-subscriber for `type`, through the API, to see what `send` published. */
async function pullSubscription(
  type: string,
): Promise<(max?: number) => Promise<{ events: Record<string, unknown>[] }>> {
  const api = apiAs(koerier.url, await koerier.token('dev-subscriber'));
  const { data: created } = await api.POST('/subscriptions', { body: { delivery: 'pull', types: [type] } });
  const id = created!.id;
  return async (max = 10) => {
    const { data: received } = await api.POST('/subscriptions/{id}/events/receive', {
      params: { path: { id } },
      body: { maxevents: max, waitseconds: 1 },
    });
    return received as unknown as { events: Record<string, unknown>[] };
  };
}

describe('koerier login', () => {
  it('gets a token with client credentials from KOERIER_URL alone (the token URL found from the gateway), keeps it in a 0600 file in a 0700 folder, and says so', async () => {
    const secretFile = join(cli.cwd, 'publisher.secret');
    await writeFile(secretFile, `${publisher['KOERIER_CLIENT_SECRET']}\n`, { mode: 0o600 });
    const result = await cli.run(['login', '--client-id', 'dev-publisher', '--client-secret-file', secretFile]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Logged in to ${koerier.url} as dev-publisher`);
    const config = JSON.parse(await readFile(join(cli.configDir, 'config.json'), 'utf8')) as {
      profiles: Record<string, Record<string, string>>;
    };
    expect(config.profiles['default']).toEqual({
      url: koerier.url,
      tokenUrl: `${koerier.origin}/oauth/token`,
      clientId: 'dev-publisher',
    });
    for (const file of ['config.json', 'credentials.json', 'tokens.json'])
      expect((await stat(join(cli.configDir, file))).mode & 0o777, file).toBe(0o600);
    expect((await stat(cli.configDir)).mode & 0o777).toBe(0o700);
    const tokens = JSON.parse(await readFile(join(cli.configDir, 'tokens.json'), 'utf8')) as Record<
      string,
      { accessToken: string; expiresAt: number }
    >;
    const cached = tokens[`${koerier.origin}/oauth/token dev-publisher`];
    expect(cached?.accessToken.split('.')).toHaveLength(3);
    expect(cached!.expiresAt).toBeGreaterThan(Date.now() + 30 * 60_000);
  });

  it('uses the cached token while it is good and fetches a new one a minute before it expires', async () => {
    const tokensFile = join(cli.configDir, 'tokens.json');
    const key = `${koerier.origin}/oauth/token dev-publisher`;
    const file = event('nl.edu.leerling.ingeschreven');
    await writeFile(join(cli.cwd, 'cached.json'), JSON.stringify(file));
    // A token that still works but has 30 s left: the CLI must not use it, lest it expire in flight.
    const nearlyExpired = await koerier.token('dev-publisher');
    await writeFile(
      tokensFile,
      JSON.stringify({ [key]: { accessToken: nearlyExpired, expiresAt: Date.now() + 30_000 } }),
      { mode: 0o600 },
    );
    expect((await cli.run(['send', 'cached.json'])).code).toBe(0);
    const renewed = (
      JSON.parse(await readFile(tokensFile, 'utf8')) as Record<string, { accessToken: string; expiresAt: number }>
    )[key]!;
    expect(renewed.accessToken).not.toBe(nearlyExpired);
    expect(renewed.expiresAt).toBeGreaterThan(Date.now() + 30 * 60_000);

    // A good one is used as it is: a token no server issued proves it (the gateway answers 401, and the CLI then renews once).
    await writeFile(tokensFile, JSON.stringify({ [key]: { ...renewed, accessToken: 'not-a-token' } }), { mode: 0o600 });
    const again = await cli.run(['send', 'cached.json', '--json']);
    expect(again.code).toBe(0);
    expect(
      (JSON.parse(await readFile(tokensFile, 'utf8')) as Record<string, { accessToken: string }>)[key]!.accessToken,
    ).not.toBe('not-a-token');
  });

  it("exits 3 with the token endpoint's reason for a wrong secret, and never takes the secret as an argument", async () => {
    const wrong = await cli.run(['login', '--profile', 'wrong', '--client-id', 'dev-publisher'], {
      env: { KOERIER_CLIENT_SECRET: 'wrong' },
    });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toContain('invalid_client');
    const asArgument = await cli.run(['login', '--client-id', 'dev-publisher', '--client-secret', 'x']);
    expect(asArgument.code).toBe(2);
    expect(asArgument.stderr).toContain("unknown option '--client-secret'");
  });
});

describe('koerier send', () => {
  it('publishes one file in structured mode as its very bytes, and the subscriber receives it', async () => {
    const receive = await pullSubscription('nl.edu.cli.single');
    const text = JSON.stringify(
      event('nl.edu.cli.single', { datacontenttype: 'application/json', data: { leerling: 'L-42' } }),
      null,
      1,
    );
    await writeFile(join(cli.cwd, 'single.json'), text);
    const result = await cli.run(['send', 'single.json'], { env: publisher });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Sent 1 event in 1 request (structured): 1 accepted, 0 rejected.');
    const received = await eventually('the event at the subscriber', async () => (await receive()).events[0]);
    expect(received).toEqual(JSON.parse(text));
  });

  it('publishes in binary mode: the attributes as ce- headers, data_base64 as the body bytes', async () => {
    const receive = await pullSubscription('nl.edu.cli.binary');
    const published = event('nl.edu.cli.binary', {
      subject: 'leerling/42 ë',
      datacontenttype: 'application/pdf',
      data_base64: Buffer.from('%PDF-1.7 …').toString('base64'),
    });
    const result = await cli.run(['send', '--mode', 'binary', '-'], {
      env: publisher,
      stdin: JSON.stringify(published),
    });
    expect(result.stdout).toContain('(binary): 1 accepted, 0 rejected.');
    const received = await eventually('the binary event at the subscriber', async () => (await receive()).events[0]);
    expect(received).toEqual(published);
  });

  it('publishes a batch file in one request (--mode batch) and lists every rejected event of a refused batch with its reasons and requirement IDs', async () => {
    const receive = await pullSubscription('nl.edu.cli.batch');
    const batch = [1, 2, 3].map((n) => event('nl.edu.cli.batch', { data: { n } }));
    await writeFile(join(cli.cwd, 'batch.json'), JSON.stringify(batch));
    const sent = await cli.run(['send', '--mode', 'batch', 'batch.json', '--json'], { env: publisher });
    expect(sent.code).toBe(0);
    const summary = JSON.parse(sent.stdout) as { requests: number; accepted: number; results: { status: number }[] };
    expect(summary).toMatchObject({ requests: 1, accepted: 3 });
    expect(summary.results[0]!.status).toBe(202);
    const ids = new Set<unknown>();
    await eventually('the three batch events', async () => {
      for (const e of (await receive()).events) ids.add(e['id']);
      return ids.size === 3;
    });
    expect(ids).toEqual(new Set(batch.map((e) => e.id)));

    await writeFile(
      join(cli.cwd, 'broken.json'),
      JSON.stringify([event('nl.edu.cli.batch'), { ...event('leerling'), time: 'yesterday' }]),
    );
    const refused = await cli.run(['send', '--mode', 'batch', 'broken.json'], { env: publisher });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('0 accepted, 2 rejected');
    expect(refused.stdout).toMatch(/broken\.json\[1\]: type: .*\(reverse-dns, CE-6\)/);
    expect(refused.stdout).toMatch(/broken\.json\[1\]: time: .*\(timestamp, CE-10\)/);
  });

  it('EDU-IDEM: sends a folder of 1,000 events with a progress bar; the request whose 202 a proxy turned into a 503 is retried after Retry-After with the same Idempotency-Key, and the gateway replays its answer instead of accepting the events again', async () => {
    const folder = join(cli.cwd, 'many');
    await mkdir(folder);
    await Promise.all(
      Array.from({ length: 1000 }, (_, n) =>
        writeFile(join(folder, `event-${n}.json`), JSON.stringify(event('nl.edu.cli.bulk', { data: { n } }))),
      ),
    );

    // A real proxy in front of the gateway: every request goes through; the third POST's real answer is dropped for a 503.
    const proxy = await startAnswerDroppingProxy(koerier.url, {
      watch: (method, url) => method === 'POST' && url === '/events',
      drop: (posts) => posts.length === 3,
    });
    const seen = proxy.seen;
    const proxyUrl = proxy.url;
    try {
      const started = Date.now();
      const result = await cli.run(
        [
          'send',
          'many',
          '--mode',
          'batch',
          '--batch-size',
          '100',
          '--progress',
          '--json',
          '--token-url',
          `${koerier.origin}/oauth/token`,
        ],
        {
          env: { ...publisher, KOERIER_URL: proxyUrl },
        },
      );
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout) as {
        events: number;
        requests: number;
        accepted: number;
        rejected: number;
        retries: number;
        results: { idempotencyKey: string; retries: number }[];
      };
      expect(summary).toMatchObject({ events: 1000, requests: 10, accepted: 1000, rejected: 0, retries: 1 });
      expect(result.stderr).toMatch(/Sending \[[█░]+\] 1000\/1000 100%/);

      const dropped = seen.find((_, index) => index === 2)!;
      expect(dropped.status).toBe(202);
      const retries = seen.filter((request) => request.key === dropped.key);
      expect(retries).toEqual([dropped, { key: dropped.key, status: 202, replayed: true }]);
      expect(new Set(seen.map((request) => request.key)).size).toBe(10);
      expect(summary.results.find((r) => r.retries === 1)?.idempotencyKey).toBe(dropped.key);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // Retry-After: 1 was waited for
    } finally {
      await proxy.close();
    }
  }, 90_000);
});
