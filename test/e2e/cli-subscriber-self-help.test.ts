/**
 * Issue 30 item 5: the `koerier` CLI answers a subscriber's first-bad-day questions without an
 * operator. Against the whole laptop host and a real HTTP receiver: a subscription the receiver
 * refuses says why and what next, and exits non-zero; `revalidate` and `update` finish the job;
 * `deliveries` filters; `payload get` fetches data sent by reference; tables fit 100 columns.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { exitCodes } from '../../cli/exit-codes.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, publishEvent } from '../support/koerier-api.js';
import { cliUser, createPushSubscription, type CliUser } from '../support/koerier-cli.js';
import { eventually } from '../support/waiting.js';

// Every CLI run is a process start (about a second, several under load on two cores).
vi.setConfig({ testTimeout: 90_000 });

const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';

let koerier: TestHost;
let cli: CliUser;
let subscriber: Record<string, string>;
let receiver: Server;
let sink: string;
/** Whether the receiver consents to the validation handshake (405 until it does). */
let consents = false;
const delivered: string[] = [];

beforeAll(async () => {
  koerier = await startTestHost();
  cli = await cliUser(koerier.url);
  const secret = koerier.host.localConfig.clients['dev-subscriber']!.secret;
  subscriber = {
    KOERIER_CLIENT_ID: 'dev-subscriber',
    KOERIER_CLIENT_SECRET: secret,
    KOERIER_SINK_CLIENT_SECRET: secret,
  };
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'OPTIONS') {
        if (!consents) return void response.writeHead(405).end();
        const origin = request.headers['webhook-request-origin'];
        return void response.writeHead(200, { 'webhook-allowed-origin': String(origin) }).end();
      }
      delivered.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  sink = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await cli?.remove();
  receiver?.close();
  await koerier?.stop();
});

function run(args: string[]) {
  return cli.run(args, { env: subscriber });
}

/** Every line of a table the CLI printed fits 100 columns. */
function expectFits(stdout: string): void {
  for (const line of stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
}

describe('koerier subscriptions as a subscriber helps itself (issue 30 item 5)', () => {
  let id: string;
  const type = `nl.edu.leerling.ingeschreven.${randomUUID().slice(0, 8)}`;

  it('SELF-5, issue 30 item 5: a subscription the receiver refuses prints the reason and the next step, and exits 6', async () => {
    const created = await createPushSubscription(cli, { sink, type, origin: koerier.origin, subscriber, json: false });
    expect(created.code, created.stderr).toBe(exitCodes.inactive);
    const line = /^Created push subscription (\S+): rejected: (.+)\.$/m.exec(created.stdout);
    expect(line, created.stdout).not.toBeNull();
    id = line![1]!;
    expect(line![2]).toMatch(/405/);
    expect(created.stderr).toContain(`Next:`);
    expect(created.stderr).toContain(`koerier subscriptions revalidate ${id}`);
  });

  it('SELF-5, issue 30 item 5: revalidate, once the receiver consents, makes it active and exits 0', async () => {
    consents = true;
    const validated = await run(['subscriptions', 'revalidate', id]);
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stdout).toMatch(new RegExp(`^Validated subscription ${id}: active`, 'm'));
  });

  it('SELF-5, issue 30 item 5: update changes only the members given', async () => {
    const updated = await run(['subscriptions', 'update', id, '--type', type, '--type', `${type}.groot`, '--json']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ id, status: 'active', sink, types: [type, `${type}.groot`] });
    const nothing = await run(['subscriptions', 'update', id]);
    expect(nothing.code).toBe(exitCodes.usage);
  });

  it('SELF-5, issue 30 item 5: deliveries filters by outcome, event and age, in a table of at most 100 columns', async () => {
    const publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
    const eventId = randomUUID();
    await publishEvent(publisher, { id: eventId, source: SOURCE, type, subject: 'leerling/1', data: { n: 1 } });
    await eventually('the delivery', () => delivered.length >= 1 || undefined, { timeoutMs: 30_000 });
    let last: Awaited<ReturnType<typeof run>> | undefined;
    const listed = await eventually(
      () => `the attempt listed; last printed: ${last?.stdout ?? ''}${last?.stderr ?? ''}`,
      async () => {
        // COLUMNS: the width a table must fit where the output is not a terminal.
        last = await cli.run(['deliveries', id, '--outcome', 'delivered', '--event', eventId, '--since', '1h'], {
          env: { ...subscriber, COLUMNS: '100' },
        });
        return last.stdout.includes('delivered') ? last : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(listed.code).toBe(0);
    expectFits(listed.stdout);
    const none = await run(['deliveries', id, '--outcome', 'dead-lettered']);
    expect(none.stdout).toContain('No delivery attempts.');
    const badAge = await run(['deliveries', id, '--since', 'yesterday']);
    expect(badAge.code).toBe(exitCodes.usage);
  });

  it('SELF-5, issue 30 item 5: payload get fetches the data behind a dataref, byte for byte', async () => {
    const publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
    const large = { rooster: 'x'.repeat(100 * 1024) };
    const before = delivered.length;
    await publishEvent(publisher, {
      source: SOURCE,
      type: `${type}.groot`,
      datacontenttype: 'application/json',
      data: large,
    });
    const event = await eventually('the event by reference', () =>
      delivered.length > before ? (JSON.parse(delivered.at(-1)!) as { dataref?: string }) : undefined,
    );
    expect(event.dataref).toMatch(/\/payloads\//);
    const file = join(cli.cwd, 'rooster.json');
    const fetched = await run(['payload', 'get', event.dataref!, '--output', file]);
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(large);
    const foreign = await run(['payload', 'get', 'https://elders.example/plaatje.png']);
    expect(foreign.code).toBe(exitCodes.usage);
  });

  it('SELF-5, issue 30 item 5: a gateway URL without its version path is named as the cause', async () => {
    const result = await cli.run(['subscriptions', 'list'], {
      env: { ...subscriber, KOERIER_URL: new URL(koerier.url).origin },
    });
    expect(result.stderr).toContain('has no version path');
    expect(result.stderr).toContain(`${new URL(koerier.url).origin}/v1`);
  });
});
