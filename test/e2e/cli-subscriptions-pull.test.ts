/**
 * The `koerier` CLI as a subscriber uses it, against the whole laptop host: subscriptions, pull
 * with --exec (acknowledged only when the command succeeds), listen receiving a real delivery after
 * the validation handshake, and a dead-letter redrive with its progress bar. Issue 16, item 1.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestHost, type TestHost } from '../support/host.js';
import { apiAs, publishEvents } from '../support/koerier-api.js';
import { cliUser, createPushSubscription, startListen, type CliUser } from '../support/koerier-cli.js';
import { eventually } from '../support/waiting.js';

// Every CLI run is a process start (about a second, several under load on two cores), and most tests make several.
vi.setConfig({ testTimeout: 60_000 });

const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';

let koerier: TestHost;
let cli: CliUser;
let subscriber: Record<string, string>;

beforeAll(async () => {
  koerier = await startTestHost();
  cli = await cliUser(koerier.url);
  const secret = (client: string) => koerier.host.localConfig.clients[client]!.secret;
  subscriber = { KOERIER_CLIENT_ID: 'dev-subscriber', KOERIER_CLIENT_SECRET: secret('dev-subscriber') };
});
afterAll(async () => {
  await cli?.remove();
  await koerier?.stop();
});

/** Publishes `count` events of `type` in one batch request; answers their ids. */
async function publishBatch(
  type: string,
  count: number,
  data: (n: number) => unknown = (n) => ({ n }),
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const events = ids.map((id, n) => ({ specversion: '1.0', id, source: SOURCE, type, data: data(n) }));
  const token = await koerier.token('dev-publisher', ['events:publish']);
  expect((await publishEvents(apiAs(koerier.url, token), events)).accepted.acceptedCount).toBe(count);
  return ids;
}

async function createPull(type: string, extra: string[] = []): Promise<string> {
  const created = await cli.run(['subscriptions', 'create', '--pull', '--type', type, ...extra, '--json'], {
    env: subscriber,
  });
  expect(created.code, created.stderr).toBe(0);
  return (JSON.parse(created.stdout) as { id: string }).id;
}

async function deadLetterCount(subscription: string): Promise<number> {
  const token = await koerier.token('dev-subscriber');
  const answer = await fetch(`${koerier.url}/subscriptions/${subscription}/dead-letters?limit=100`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await answer.json()) as { deadLetters: unknown[] }).deadLetters.length;
}

describe('koerier subscriptions', () => {
  it('creates a pull subscription with a filter, lists it, shows it, refuses to resume an active one (409, exit 1) and deletes it', async () => {
    const id = await createPull('nl.edu.cli.manage', [
      '--filter',
      'prefix:subject=leerling/',
      '--filter',
      '{"suffix":{"subject":"/1"}}',
      '--max-delivery-count',
      '3',
    ]);
    const listed = await cli.run(['subscriptions', 'list', '--json'], { env: subscriber });
    const mine = (
      JSON.parse(listed.stdout) as { id: string; filters: unknown[]; maxdeliverycount: number; status: string }[]
    ).find((s) => s.id === id);
    expect(mine).toMatchObject({
      status: 'active',
      maxdeliverycount: 3,
      filters: [{ prefix: { subject: 'leerling/' } }, { suffix: { subject: '/1' } }],
    });

    const table = await cli.run(['subs', 'list'], { env: subscriber });
    expect(table.stdout).toMatch(new RegExp(`│ ${id} │ pull +│ active +│ nl\\.edu\\.cli\\.manage`));
    const shown = await cli.run(['subscriptions', 'show', id], { env: subscriber });
    expect(shown.stdout).toContain(id);
    expect(shown.stdout).toMatch(/maxdeliverycount\s*│ 3/);

    const resumed = await cli.run(['subscriptions', 'resume', id], { env: subscriber });
    expect(resumed.code).toBe(1);
    expect(resumed.stderr).toContain('409 Subscription not suspended (subscription-not-suspended)');

    expect((await cli.run(['subscriptions', 'delete', id], { env: subscriber })).code).toBe(0);
    const gone = await cli.run(['subscriptions', 'show', id], { env: subscriber });
    expect(gone.code).toBe(4);
  });

  it('EDU-6, EDU-18: replays and the contract register through the CLI: a subscription\'s replays listed, "no subscription" for an unknown id, Koerier\'s own contract in the register', async () => {
    const id = await createPull('nl.edu.cli.routes');
    const replays = await cli.run(['replay', 'list', id], { env: subscriber });
    expect(replays.code, replays.stderr).toBe(0);
    const unknown = await cli.run(['replay', 'list', randomUUID()], { env: subscriber });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('no subscription');
    const contracts = await cli.run(['contracts', 'list', '--json'], { env: subscriber });
    expect(contracts.code, contracts.stderr).toBe(0);
    expect((JSON.parse(contracts.stdout) as { name: string }[]).map((contract) => contract.name)).toContain(
      'koerier-webhook',
    );
  });

  it('pauses a push subscription (deliveries wait as dead letters) and resumes it (they are sent); a pull subscription is not paused (409, exit 1)', async () => {
    const { listen, url } = await startListen(cli, ['--json']);
    const created = await createPushSubscription(cli, {
      sink: url,
      type: 'nl.edu.cli.pause',
      origin: koerier.origin,
      subscriber,
    });
    const { id } = JSON.parse(created.stdout) as { id: string };
    const paused = await cli.run(['subscriptions', 'pause', id], { env: subscriber });
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain(`Paused ${id}.`);
    const shown = JSON.parse(
      (await cli.run(['subscriptions', 'show', id, '--json'], { env: subscriber })).stdout,
    ) as Record<string, unknown>;
    expect(shown).toMatchObject({ status: 'suspended', suspendedfor: 'paused' });

    const [eventId] = await publishBatch('nl.edu.cli.pause', 1);
    await eventually('the delivery kept as a dead letter while paused', async () => (await deadLetterCount(id)) === 1, {
      timeoutMs: 15_000,
      intervalMs: 250,
    });
    expect(listen.stdout()).toBe('');

    const resumed = await cli.run(['subscriptions', 'resume', id], { env: subscriber });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`Resumed ${id}: active; 1 held deliveries sent again.`);
    const line = await eventually(
      'the held delivery at listen',
      () => listen.stdout().trim().split('\n').filter(Boolean)[0],
      { timeoutMs: 15_000 },
    );
    expect((JSON.parse(line) as { events: { id: string }[] }).events[0]?.id).toBe(eventId);
    await listen.stop();

    const pull = await createPull('nl.edu.cli.pause');
    const refused = await cli.run(['subscriptions', 'pause', pull], { env: subscriber });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('409 Not a push subscription (not-a-push-subscription)');
  });
});

describe('koerier pull', () => {
  it('CARD-7: --exec acknowledges an event only when the command exits 0: a failing command releases it and it comes back with its delivery count raised', async () => {
    const id = await createPull('nl.edu.cli.exec');
    const ids = await publishBatch('nl.edu.cli.exec', 2);
    const failing = await eventually(
      'both events at the failing command',
      async () => {
        const run = await cli.run(['pull', id, '--wait', '5', '--exec', 'cat > /dev/null; exit 3', '--json'], {
          env: subscriber,
        });
        return run.stdout.trim().split('\n').filter(Boolean).length === 2 ? run : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(failing.code).toBe(1);
    const released = failing.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; exitCode: number; settled: string });
    expect(new Set(released.map((line) => line.id))).toEqual(new Set(ids));
    expect(released.every((line) => line.exitCode === 3 && line.settled === 'released')).toBe(true);

    const handled = join(cli.cwd, `handled-${id}.txt`);
    const succeeding = `node -e "const e = JSON.parse(require('fs').readFileSync(0, 'utf8')); require('fs').appendFileSync(process.argv[1], e.id + ' ' + process.env.KOERIER_DELIVERY_COUNT + '\\n')" "${handled}"`;
    await eventually(
      'both events handled',
      async () => {
        await cli.run(['pull', id, '--wait', '5', '--exec', succeeding], { env: subscriber });
        const lines = (await readFile(handled, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean);
        return lines.length >= 2;
      },
      { timeoutMs: 20_000 },
    );
    const lines = (await readFile(handled, 'utf8')).trim().split('\n');
    expect(lines.sort()).toEqual(ids.map((eventId) => `${eventId} 2`).sort());

    const after = await cli.run(['pull', id, '--wait', '1'], { env: subscriber });
    expect(after.stdout).toContain('No events.');
  }, 60_000);
});

describe('koerier listen', () => {
  it('WH-4: answers the validation handshake, so a push subscription to it becomes active, and prints a real delivery with its Idempotency-Key and the event, never the token', async () => {
    const { listen, url } = await startListen(cli, ['--json']);
    const created = await createPushSubscription(cli, {
      sink: `${url}hook`,
      type: 'nl.edu.cli.listen',
      origin: koerier.origin,
      subscriber,
    });
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ status: 'active', sink: `${url}hook` });
    expect(listen.stderr()).toContain('validation request from koerier.local: consented');

    const [eventId] = await publishBatch('nl.edu.cli.listen', 1, () => ({ leerling: 'L-42' }));
    const line = await eventually(
      'the delivery printed by listen',
      () => listen.stdout().trim().split('\n').filter(Boolean)[0],
      { timeoutMs: 15_000 },
    );
    const delivery = JSON.parse(line) as {
      path: string;
      mode: string;
      idempotencyKey: string;
      authorization: string;
      answered: number;
      events: Record<string, unknown>[];
    };
    expect(delivery).toMatchObject({ path: '/hook', mode: 'structured', authorization: 'Bearer …', answered: 204 });
    expect(delivery.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(delivery.events).toEqual([
      { specversion: '1.0', id: eventId, source: SOURCE, type: 'nl.edu.cli.listen', data: { leerling: 'L-42' } },
    ]);
    const stopped = await listen.stop();
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).toContain('1 delivery received.');
  }, 60_000);
});

describe('koerier dead-letters', () => {
  it('EDU-18: lists the dead letters and redrives every one with a progress bar; pull --follow --exec then receives and acknowledges them all', async () => {
    const id = await createPull('nl.edu.cli.redrive', ['--max-delivery-count', '1']);
    const ids = await publishBatch('nl.edu.cli.redrive', 30);
    // Every event fails once; with maxdeliverycount 1 the next receive moves it to the dead letters.
    // Each run ends its receive itself: a --follow stopped mid-poll would leave a receive running on the gateway
    // that can lock the redriven events for its lock time, and with maxdeliverycount 1 send them straight back.
    await eventually(
      '30 dead letters',
      async () => {
        const failing = await cli.run(['pull', id, '--wait', '1', '-n', '100', '--exec', 'exit 1'], {
          env: subscriber,
        });
        expect(failing.stderr).not.toMatch(/koerier: (?!could not)/);
        return (await deadLetterCount(id)) === 30;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );

    const listed = await cli.run(['dead-letters', 'list', id, '--json'], { env: subscriber });
    const deadLetters = JSON.parse(listed.stdout) as { reason: string; events: { id: string }[] }[];
    expect(new Set(deadLetters.flatMap((d) => d.events.map((e) => e.id)))).toEqual(new Set(ids));

    const redriven = await cli.run(['dead-letters', 'redrive', id, '--chunk', '10', '--progress'], { env: subscriber });
    expect(redriven.code, redriven.stderr).toBe(0);
    expect(redriven.stdout).toContain('Redrove 30 of 30 dead letters.');
    expect(redriven.stderr).toMatch(/Redriving \[[█░]+\] 30\/30 100%/);
    expect(await deadLetterCount(id)).toBe(0);

    const handled = join(cli.cwd, `redriven-${id}.txt`);
    const follow = cli.spawn(
      ['pull', id, '--follow', '--wait', '1', '-n', '100', '--exec', `cat >> "${handled}"; echo >> "${handled}"`],
      { env: subscriber },
    );
    await eventually(
      'the 30 redriven events handled',
      async () => {
        if (follow.child.exitCode !== null)
          throw new Error(`pull --follow ended early (${follow.child.exitCode}): ${follow.stderr()}`);
        return (await readFile(handled, 'utf8').catch(() => '')).trim().split('\n').filter(Boolean).length >= 30;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 500,
      },
    );
    expect((await follow.stop()).code).toBe(0);
    const received = (await readFile(handled, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: string }).id);
    expect(received).toHaveLength(30);
    expect(new Set(received)).toEqual(new Set(ids));
    const after = await cli.run(['pull', id, '--wait', '1'], { env: subscriber });
    expect(after.stdout).toContain('No events.');
  }, 180_000);
});
