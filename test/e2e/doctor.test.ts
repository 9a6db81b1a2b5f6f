/**
 * `koerier doctor` (issue 27 §3), the real binary against the whole laptop host, the same code an
 * operator runs against a stack in AWS after `cdk deploy`: every step passing (table and --json),
 * one step broken (a consumer whose token lacks `events:consume`) with its failing row, exit
 * status 1 and the subscription deleted all the same, and Ctrl-C in the middle of a run.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DOCTOR_TYPE } from '../../cli/commands/doctor-checks.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { cliUser, type CliUser } from '../support/koerier-cli.js';

// A doctor run is a process start and about seventeen requests; a few seconds on two busy cores.
vi.setConfig({ testTimeout: 90_000 });

const STEPS = [
  'API description',
  '/health',
  'token for dev-publisher',
  'token for dev-subscriber',
  'no token → 401',
  'pull subscription',
  'publish 1 event (structured)',
  'publish a batch of 10',
  'publish 1 event (binary)',
  'publish 1 MiB (claim check)',
  'same Idempotency-Key again',
  'broken event → 400',
  'receive (pull)',
  'arrived as sent',
  'claim check data',
  'acknowledge',
  'clean up',
];

interface DoctorJson {
  ok: boolean;
  gateway: string;
  source: string;
  publisher: string;
  consumer: string;
  interrupted: boolean;
  steps: { step: string; result: string; latencyMs: number | null; detail: string; got?: string; meaning?: string }[];
}

let koerier: TestHost;
let cli: CliUser;
/** The laptop's way: dev-publisher publishes (its grant covers every source), dev-subscriber consumes (entitled to every type). */
let clients: Record<string, string>;

beforeAll(async () => {
  koerier = await startTestHost();
  cli = await cliUser(koerier.url);
  const secret = (client: string) => koerier.host.localConfig.clients[client]!.secret;
  clients = {
    KOERIER_CLIENT_ID: 'dev-publisher',
    KOERIER_CLIENT_SECRET: secret('dev-publisher'),
    KOERIER_CONSUMER_CLIENT_ID: 'dev-subscriber',
    KOERIER_CONSUMER_CLIENT_SECRET: secret('dev-subscriber'),
    // Wide enough that a table row's first line holds what the assertions look for.
    COLUMNS: '220',
  };
});
afterAll(async () => {
  await cli?.remove();
  await koerier?.stop();
});

/** dev-subscriber's subscriptions to the doctor's type, as the API lists them now. */
async function doctorSubscriptions(): Promise<{ id: string; source?: string }[]> {
  const token = await koerier.token('dev-subscriber');
  const answer = await fetch(`${koerier.url}/subscriptions?limit=100`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(answer.status).toBe(200);
  const { subscriptions } = (await answer.json()) as {
    subscriptions: { id: string; source?: string; types?: string[] }[];
  };
  return subscriptions.filter((subscription) => subscription.types?.includes(DOCTOR_TYPE));
}

/** The table row of a step: its cells, trimmed (the first line of a wrapped row). */
function row(table: string, step: string): string[] | undefined {
  const line = table.split('\n').find((text) => text.startsWith(`│ ${step} `));
  return line
    ?.split('│')
    .slice(1, -1)
    .map((cell) => cell.trim());
}

describe('koerier doctor', () => {
  it('CARD-3, CARD-7: koerier doctor against the laptop host passes every step — token, 401 without one, a pull subscription, structured, batch, binary and 1 MiB claim-check publications received as sent, the stored answer of a repeated Idempotency-Key, the 400 problem — in its table and in --json, and leaves no subscription', async () => {
    const table = await cli.run(['doctor'], { env: clients });
    expect(table.code, table.stdout + table.stderr).toBe(0);
    for (const step of STEPS) {
      const cells = row(table.stdout, step);
      expect(cells, `row ${step} in\n${table.stdout}`).toBeDefined();
      expect(cells![1], `${step}: ${cells!.join(' | ')}`).toBe('ok');
      expect(cells![2]).toMatch(/^[\d,]+ ms$/);
    }
    expect(row(table.stdout, '/health')![3]).toBe('ok (dynamodb ok, sqs ok, s3 ok)');
    expect(row(table.stdout, 'receive (pull)')![3]).toMatch(/^13 of 13 events/);
    expect(row(table.stdout, 'claim check data')![3]).toBe('1,048,576 bytes, digest and size match (200 from Koerier)');
    expect(row(table.stdout, 'same Idempotency-Key again')![3]).toMatch(
      /^202, the stored answer, Idempotent-Replayed: true/,
    );
    expect(row(table.stdout, 'broken event → 400')![3]).toBe('400 invalid-cloudevent: specversion (CE-5), id (CE-3)');
    expect(table.stdout).toMatch(
      new RegExp(
        `Koerier at ${koerier.url.replace(/[.]/g, '\\.')} works: 17 steps passed in [\\d.]+ s \\(dev-publisher publishing, dev-subscriber consuming`,
      ),
    );

    const json = await cli.run(['doctor', '--json'], { env: clients });
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as DoctorJson;
    expect(report).toMatchObject({
      ok: true,
      gateway: koerier.url,
      publisher: 'dev-publisher',
      consumer: 'dev-subscriber',
      interrupted: false,
    });
    expect(report.steps.map((step) => step.step)).toEqual(STEPS);
    for (const step of report.steps) {
      expect(step.result, `${step.step}: ${step.detail}`).toBe('ok');
      expect(step.latencyMs).toBeGreaterThanOrEqual(0);
      expect(step.got).toBeUndefined();
    }
    // Each run publishes under a source of its own, below the default grant prefix.
    expect(report.source).toMatch(/^urn:nld:koerier:doctor:\d{14}-[0-9a-f]{8}$/);
    expect(await doctorSubscriptions()).toEqual([]);
  });

  it('CARD-3, CARD-7: koerier doctor with a consumer whose token lacks events:consume fails the receive row with the 403 and what it usually means, exits 1, and still deletes its subscription', async () => {
    const result = await cli.run(['doctor'], { env: { ...clients, KOERIER_CONSUMER_SCOPE: 'subscriptions:manage' } });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const receive = row(result.stdout, 'receive (pull)')!;
    expect(receive.slice(0, 2)).toEqual(['receive (pull)', 'FAILED']);
    expect(receive[3]).toMatch(/^got: 403 Forbidden \(forbidden\): This operation needs the scope "events:consume"\./);
    expect(result.stdout).toMatch(
      /usually: dev-subscriber's token lacks the scope events:consume: give the client that scope at the identity provider/,
    );
    // The steps that needed the events are skipped, not failed: one cause, one failed row.
    expect(row(result.stdout, 'arrived as sent')!.slice(1)).toEqual(['skipped', '', 'nothing received']);
    expect(row(result.stdout, 'acknowledge')![1]).toBe('skipped');
    expect(result.stdout).toMatch(/1 of 17 steps FAILED against/);

    // The subscription was made, and is gone.
    const made = /│ pull subscription +│ ok +│ +[\d,]+ ms │ ([0-9a-f-]{36}): /.exec(result.stdout)?.[1];
    expect(made, result.stdout).toBeDefined();
    expect(row(result.stdout, 'clean up')!.slice(0, 2)).toEqual(['clean up', 'ok']);
    expect(row(result.stdout, 'clean up')![3]).toContain(`deleted subscription ${made}`);
    const token = await koerier.token('dev-subscriber');
    expect(
      (await fetch(`${koerier.url}/subscriptions/${made}`, { headers: { authorization: `Bearer ${token}` } })).status,
    ).toBe(404);
    expect(await doctorSubscriptions()).toEqual([]);
  });

  it('CARD-3: koerier doctor interrupted by Ctrl-C right after it subscribed skips the rest, deletes its subscription and exits 130', async () => {
    const running = cli.spawn(['doctor', '--progress', '--json'], { env: clients });
    running.child.stdin?.end();
    // Ctrl-C the moment the subscription exists (the progress line on stderr), mid-run.
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (running.stderr().includes('doctor: ok      pull subscription')) {
          running.child.stderr?.off('data', check);
          resolve();
        }
      };
      running.child.stderr?.on('data', check);
      void running.exited.then(() => reject(new Error(`doctor ended before it subscribed: ${running.stderr()}`)));
    });
    const result = await running.stop();
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain('koerier doctor: interrupted; deleting what this run made');
    const report = JSON.parse(result.stdout) as DoctorJson;
    expect(report.interrupted).toBe(true);
    expect(report.steps.map((step) => step.step)).toEqual(STEPS);
    expect(report.steps.find((step) => step.step === 'pull subscription')!.result).toBe('ok');
    expect(report.steps.find((step) => step.step === 'acknowledge')).toMatchObject({
      result: 'skipped',
      detail: 'interrupted (Ctrl-C)',
    });
    expect(report.steps.at(-1)).toMatchObject({ step: 'clean up', result: 'ok' });
    expect(report.steps.at(-1)!.detail).toMatch(/^deleted subscription [0-9a-f-]{36} and its queues/);
    expect(await doctorSubscriptions()).toEqual([]);
  });
});
