/**
 * The bytes of log a routed and delivered event costs (issue 31 item 3): COST.md's CloudWatch Logs
 * line prices them. The laptop host runs every function at `info`, the level a deployment logs at
 * (functions/config.ts's default), one push subscriber receives every event, and every line any
 * function's logger writes while the events are published, routed and delivered is counted
 * (logger.observe), after a warm-up whose lines are not.
 *
 * Not counted, because the laptop has no such lines: Lambda's own START/END/REPORT lines and API
 * Gateway's access log (COST.md states them as modelled). `npm run bench -- log-volume`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { logger } from '../functions/app/logger.js';
import { settingEnv } from '../functions/config.js';
import { defaultBatchingWindows } from '../lib/stack-config.js';
import { startKoerierHost } from '../local/host.js';
import { createLocalCertificateAuthority, startHttpsReceiver } from '../test/support/https-receiver.js';

const EVENTS = 200;
const WARM_UP_EVENTS = 4;
/** Quiet this long after the last delivery and the log lines of the work are all written. */
const QUIET_MS = 2_500;

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = Number(loadavg()[0]!.toFixed(2));
  const dir = await mkdtemp(join(tmpdir(), 'koerier-bench-logs-'));
  const authority = createLocalCertificateAuthority();
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  const counted = { lines: 0, bytes: 0, on: false };
  // Each line as CloudWatch Logs ingests it: the text and its newline.
  const stopObserving = logger.observe((line) => {
    if (!counted.on) return;
    counted.lines++;
    counted.bytes += Buffer.byteLength(line) + 1;
  });
  const host = await startKoerierHost({
    port: 0,
    stateDir: join(dir, 'state'),
    configFile: join(dir, 'koerier.local.json'),
    batchingWindowSeconds: defaultBatchingWindows(),
    log: () => {},
    settings: {
      [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.publishRatePerMinute]: '100000',
      [settingEnv.logLevel]: 'info',
    },
  });
  const receiver = await startHttpsReceiver({ authority });
  try {
    const publisher = await host.issueToken('dev-publisher');
    const manager = await host.issueToken('dev-subscriber', ['subscriptions:manage']);
    const call = async (path: string, token: string, body: unknown, contentType: string) => {
      const response = await fetch(`${host.apiUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': contentType },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`POST ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    };
    const type = 'nl.bench.logs.v1';
    await call(
      '/subscriptions',
      manager,
      { sink: receiver.url, types: [type], validation: 'agreed', sinkcredential: receiver.sinkCredential },
      'application/json',
    );
    const publish = async (count: number) => {
      for (let i = 0; i < count; i++)
        await call(
          '/events',
          publisher,
          {
            specversion: '1.0',
            id: randomUUID(),
            source: 'urn:nld:oin:00000001234567890000:bench',
            type,
            datacontenttype: 'application/json',
            data: { leerling: 'L-42', school: '12AB', naam: 'Jan Jansen', klas: '3b' },
          },
          'application/cloudevents+json',
        );
    };
    await publish(WARM_UP_EVENTS);
    await receiver.waitForRequests(WARM_UP_EVENTS, { timeoutMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    counted.on = true;
    await publish(EVENTS);
    await receiver.waitForRequests(WARM_UP_EVENTS + EVENTS, { timeoutMs: 120_000 });
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    counted.on = false;
    return {
      loadAverageAtStart: loadAtStart,
      logLevel: 'info',
      scenario: 'single publishes of 67 bytes of data, each routed and delivered to one push subscriber',
      events: EVENTS,
      lines: counted.lines,
      bytes: counted.bytes,
      linesPerEvent: Number((counted.lines / EVENTS).toFixed(2)),
      bytesPerEvent: Math.round(counted.bytes / EVENTS),
    };
  } finally {
    stopObserving();
    await receiver.close();
    await host.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
