/**
 * `koerier load` against the laptop host (issue 35, "a load generator users can point at a stack"):
 * refuses to start unbounded, and at a rate two shared cores hold it publishes every event, reports
 * the 202 latency percentiles and, through the pull subscription it makes and removes, the
 * end-to-end delay of every event. The report is printed, so a CI run shows its figures.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestHost, type TestHost } from '../support/host.js';
import { cliUser, type CliUser } from '../support/koerier-cli.js';

vi.setConfig({ testTimeout: 120_000 });

const SOURCE = 'urn:nld:oin:00000001823288444000:systeem:lvs';
/** What the laptop holds on two shared cores with room to spare: the point is the report, not the figure. */
const RATE = 20;
const DURATION = 5;

let koerier: TestHost;
let cli: CliUser;
let publisher: Record<string, string>;

beforeAll(async () => {
  koerier = await startTestHost();
  cli = await cliUser(koerier.url);
  const secret = (client: string) => koerier.host.localConfig.clients[client]!.secret;
  publisher = { KOERIER_CLIENT_ID: 'dev-publisher', KOERIER_CLIENT_SECRET: secret('dev-publisher') };
  const login = await cli.run(['login', '--profile', 'subscriber', '--client-id', 'dev-subscriber'], {
    env: { KOERIER_CLIENT_SECRET: secret('dev-subscriber') },
  });
  expect(login.code, login.stderr).toBe(0);
});
afterAll(async () => {
  await cli?.remove();
  await koerier?.stop();
});

interface Report {
  publish: {
    elapsedSeconds: number;
    eventsSent: number;
    accepted: number;
    acceptedPerSecond: number;
    latency202: { count: number; p50: number; p99: number; p999: number };
    errorsByStatus: Record<string, number>;
    throttled429: number;
  };
  endToEnd?: { subscription: string; received: number; missing: number; delay: { p50: number; p99: number } };
}

describe('koerier load', () => {
  it('issue 35 load generator: refuses to start without both --rate and --duration, and beyond its bounds', async () => {
    for (const args of [
      ['--rate', '10'],
      ['--duration', '5'],
      ['--rate', '50001', '--duration', '1'],
    ]) {
      const result = await cli.run(['load', ...args], { env: publisher });
      expect(result.code, `load ${args.join(' ')}`).toBe(2);
      expect(result.stdout).toBe('');
    }
    const unbounded = await cli.run(['load', '--rate', '10'], { env: publisher });
    expect(unbounded.stderr).toMatch(/both --rate and --duration/);
  });

  it('issue 35 load generator: single publishes at a rate the laptop holds, every event accepted and pulled, the subscription removed', async () => {
    const result = await cli.run(
      [
        'load',
        '--rate',
        String(RATE),
        '--duration',
        String(DURATION),
        '--source',
        SOURCE,
        '--pull-profile',
        'subscriber',
      ],
      { env: publisher },
    );
    process.stdout.write(`koerier load --rate ${RATE} --duration ${DURATION} (laptop host):\n${result.stdout}`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Accepted 100 events in [\d.]+ s: [\d.]+ events\/s/);
    expect(result.stdout).toMatch(/202 +p50 [\d.]+ ms +p99 [\d.]+ ms +p99\.9 [\d.]+ ms/);
    expect(result.stdout).toMatch(/Pulled +100 events from \S+, 0 missing/);
    expect(result.stdout).toMatch(/End to end p50 [\d.]+ ms/);
    const subscription = /Pulled +\d+ events from (\S+),/.exec(result.stdout)![1]!;
    const token = await koerier.token('dev-subscriber');
    const shown = await fetch(`${koerier.url}/subscriptions/${subscription}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(shown.status).toBe(404);
  });

  it('issue 35 load generator: batches of 10 report accepted/s, percentiles and no errors as JSON', async () => {
    const result = await cli.run(
      [
        'load',
        '--rate',
        '100',
        '--duration',
        '3',
        '--batch',
        '10',
        '--source',
        SOURCE,
        '--pull-profile',
        'subscriber',
        '--json',
      ],
      { env: publisher },
    );
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    process.stdout.write(`koerier load --rate 100 --duration 3 --batch 10 --json:\n${result.stdout}\n`);
    expect(report.publish).toMatchObject({ eventsSent: 300, accepted: 300, errorsByStatus: {}, throttled429: 0 });
    expect(report.publish.latency202.count).toBe(30);
    const { p50, p99, p999 } = report.publish.latency202;
    expect(p50).toBeGreaterThan(0);
    expect(p99).toBeGreaterThanOrEqual(p50);
    expect(p999).toBeGreaterThanOrEqual(p99);
    // Accepted per second of the run as it took, however long a loaded host made it take.
    expect(report.publish.acceptedPerSecond).toBeCloseTo(300 / report.publish.elapsedSeconds, 0);
    expect(report.endToEnd).toMatchObject({ received: 300, missing: 0 });
    expect(report.endToEnd!.delay.p99).toBeGreaterThanOrEqual(report.endToEnd!.delay.p50);
  });
});
