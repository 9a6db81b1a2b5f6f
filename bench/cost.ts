/**
 * The cost model's measurements (issue 15, item 5): the laptop host runs every function against
 * the emulators while bench/support/aws-usage.ts records, per stage (function) and per scenario,
 * the AWS requests by service and operation, their billing units, the invocations and the handler
 * time. bench/cost/model.ts turns bench/results/cost.json into docs/COST.md (`npm run cost`).
 *
 * Scenarios, each on an event type of its own so no other subscription matches:
 *   ingest only (single publishes, and batches of 10), push to 1, 3 and 10 subscribers, pull (one
 *   consumer receiving and acknowledging 10 at a time), and claim-checked 1 MiB events delivered
 *   by reference to one push subscriber that fetches the data.
 *
 * Request and unit counts carry over to AWS; handler times are the laptop's (the emulators answer
 * in-process, AWS over the network), so COST.md says so beside them. `npm run bench -- cost`;
 * bench/cost-router-batches.ts runs some of the same scenarios with the router taking batches of 100.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { settingEnv } from '../functions/config.js';
import { functions, type FunctionSpec } from '../functions/config/resources.js';
import { defaultBatchingWindows } from '../lib/stack-config.js';
import { settingsFromEnvironment, startKoerierHost, type KoerierHost } from '../local/host.js';
import {
  createLocalCertificateAuthority,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../test/support/https-receiver.js';
import { callApi } from '../test/support/koerier-api.js';
import { recordAwsUsage, recordsIn, type CostScenario } from './support/aws-usage.js';

const DEFAULT_EVENTS = 40;
const LARGE_EVENTS = 5;
const PUBLISH_CONCURRENCY = 4;
/** Quiet this long (no invocation running or started) and the scenario's work is done: the router's batching window is 1 s. */
const QUIET_MS = 2_500;

export interface CostRunOptions {
  /** `koerier:batchSizes` for the host's pollers, by function; default: functions/config/resources.ts's. */
  readonly batchSizes?: Readonly<Record<string, number>>;
  /** Events per scenario (the claim-checked one always takes LARGE_EVENTS). */
  readonly events?: number;
  /** The scenarios to run, by name (`push3`, not `push3<variant>`); default: every one. */
  readonly scenarios?: readonly string[];
  /** Added to each scenario's name and description, so a variant's results stand beside the default run's in COST.md. */
  readonly variant?: { readonly name: string; readonly description: string };
}

export async function run(options: CostRunOptions = {}): Promise<Record<string, unknown>> {
  const EVENTS = options.events ?? DEFAULT_EVENTS;
  const wanted = (name: string) => options.scenarios === undefined || options.scenarios.includes(name);
  const variant = options.variant ?? { name: '', description: '' };
  const loadAtStart = Number(loadavg()[0]!.toFixed(2));
  const dir = await mkdtemp(join(tmpdir(), 'koerier-bench-cost-'));
  const authority = createLocalCertificateAuthority();
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  let inFlight = 0;
  let lastActivity = Date.now();
  // Set once the host (and so its clients) exists; the hook runs only after that.
  const recording: { usage?: ReturnType<typeof recordAwsUsage> } = {};
  const host: KoerierHost = await startKoerierHost({
    port: 0,
    stateDir: join(dir, 'state'),
    configFile: join(dir, 'koerier.local.json'),
    // A deployment's windows (the router gathers for 1 s), not the laptop's 0 s: how many records an
    // invocation takes sets the per-invocation requests (the archive's PutObject, the ledger's commit).
    batchingWindowSeconds: defaultBatchingWindows(),
    ...(options.batchSizes === undefined ? {} : { batchSizes: options.batchSizes }),
    // BENCH_HOST_LOG=1 shows the host's own log lines (on standard error).
    log: process.env['BENCH_HOST_LOG'] ? (line) => process.stderr.write(`${line}\n`) : () => {},
    settings: {
      ...settingsFromEnvironment(process.env),
      [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.publishRatePerMinute]: '100000',
      [settingEnv.logLevel]: 'error',
    },
    aroundInvocation: async (name, event, invoke) => {
      inFlight++;
      lastActivity = Date.now();
      try {
        return await (recording.usage ? recording.usage.invocation(name, recordsIn(event), invoke) : invoke());
      } finally {
        inFlight--;
        lastActivity = Date.now();
      }
    },
  });
  const recorder = recordAwsUsage(host.awsClients);
  recording.usage = recorder;
  const receivers: HttpsReceiver[] = [];
  const publisher = await host.issueToken('dev-publisher');
  const manager = await host.issueToken('dev-subscriber', ['subscriptions:manage']);
  const subscriber = await host.issueToken('dev-subscriber');
  const consumer = await host.issueToken('dev-subscriber', ['events:consume']);

  /** One call through the generated client, answered with its text; a refusal stops the run. A dataref is an absolute URL of the API. */
  const call = async (
    method: string,
    path: string,
    token: string,
    body?: unknown,
    contentType = 'application/json',
  ) => {
    const relative = path.startsWith(host.apiUrl) ? path.slice(host.apiUrl.length) : path;
    const headers = body === undefined ? {} : { 'content-type': contentType };
    const answer = await callApi(host.apiUrl, token, method, relative, body, headers);
    if (answer.status >= 300)
      throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return answer.text;
  };
  const settle = async () => {
    while (inFlight > 0 || Date.now() - lastActivity < QUIET_MS)
      await new Promise((resolve) => setTimeout(resolve, 100));
  };
  const event = (type: string, data: unknown) => ({
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:00000001234567890000:bench',
    type,
    datacontenttype: typeof data === 'string' ? 'text/plain' : 'application/json',
    data,
  });
  const sampleData = { leerling: 'L-42', school: '12AB', naam: 'Jan Jansen', klas: '3b' };
  /** Publishes `count` events, `batch` per request, `PUBLISH_CONCURRENCY` requests at a time. */
  const publish = async (type: string, count: number, batch: number, data: unknown = sampleData) => {
    let next = 0;
    const worker = async () => {
      while (next < count) {
        const size = Math.min(batch, count - next);
        next += size;
        const events = Array.from({ length: size }, () => event(type, data));
        if (batch === 1) await call('POST', '/events', publisher, events[0], 'application/cloudevents+json');
        else await call('POST', '/events', publisher, events, 'application/cloudevents-batch+json');
      }
    };
    await Promise.all(Array.from({ length: PUBLISH_CONCURRENCY }, worker));
  };
  const pushSubscribers = async (type: string, count: number) => {
    const started = await Promise.all(Array.from({ length: count }, () => startHttpsReceiver({ authority })));
    receivers.push(...started);
    for (const receiver of started) {
      await call('POST', '/subscriptions', manager, {
        sink: receiver.url,
        types: [type],
        validation: 'agreed',
        sinkcredential: receiver.sinkCredential,
      });
    }
    return started;
  };
  const scenarios: Record<string, CostScenario> = {};
  /** Runs `work` with the recorder reset before (after the setup has settled) and read after everything settled. */
  const measure = async (
    name: string,
    description: string,
    events: number,
    dataBytes: number,
    work: () => Promise<void>,
  ): Promise<void> => {
    await settle();
    recorder.reset();
    await work();
    await settle();
    scenarios[`${name}${variant.name}`] = {
      description: `${description}${variant.description}`,
      events,
      dataBytes,
      stages: recorder.snapshot(),
    };
  };
  const dataBytes = Buffer.byteLength(JSON.stringify(sampleData));

  try {
    // Warm-up: every function's first invocation builds its dependencies; not counted.
    const warmType = `nl.bench.cost.warm.v1`;
    const [warm] = await pushSubscribers(warmType, 1);
    await publish(warmType, 4, 1);
    await warm!.waitForRequests(4, { timeoutMs: 60_000 });

    if (wanted('ingestOnly'))
      await measure('ingestOnly', 'ingest only: single publishes, no subscriber for the type', EVENTS, dataBytes, () =>
        publish('nl.bench.cost.nobody.v1', EVENTS, 1),
      );
    if (wanted('ingestOnlyBatch10'))
      await measure(
        'ingestOnlyBatch10',
        'ingest only: batches of 10 per request, no subscriber for the type',
        EVENTS,
        dataBytes,
        () => publish('nl.bench.cost.nobody.batch.v1', EVENTS, 10),
      );
    if (wanted('push1Batch10')) {
      const type = 'nl.bench.cost.push1.batch.v1';
      const targets = await pushSubscribers(type, 1);
      await measure(
        'push1Batch10',
        'ingest + 1 push subscriber: batches of 10 per request, each event delivered to the subscriber',
        EVENTS,
        dataBytes,
        async () => {
          await publish(type, EVENTS, 10);
          await targets[0]!.waitForRequests(EVENTS, { timeoutMs: 120_000 });
        },
      );
    }
    for (const subscribers of [1, 3, 10]) {
      if (!wanted(`push${subscribers}`)) continue;
      const type = `nl.bench.cost.push${subscribers}.v1`;
      const targets = await pushSubscribers(type, subscribers);
      await measure(
        `push${subscribers}`,
        `ingest + ${subscribers} push subscriber${subscribers === 1 ? '' : 's'}: single publishes, each event delivered to every subscriber`,
        EVENTS,
        dataBytes,
        async () => {
          await publish(type, EVENTS, 1);
          await Promise.all(targets.map((target) => target.waitForRequests(EVENTS, { timeoutMs: 120_000 })));
        },
      );
    }
    if (wanted('pull')) {
      const type = 'nl.bench.cost.pull.v1';
      const created = JSON.parse(
        await call('POST', '/subscriptions', manager, { delivery: 'pull', types: [type] }),
      ) as { id: string };
      await measure(
        'pull',
        'ingest + 1 pull subscriber: single publishes; the consumer receives (up to 10, long poll) and acknowledges',
        EVENTS,
        dataBytes,
        async () => {
          await publish(type, EVENTS, 1);
          let acknowledged = 0;
          while (acknowledged < EVENTS) {
            const received = JSON.parse(
              await call('POST', `/subscriptions/${created.id}/events/receive`, consumer, {
                maxevents: 10,
                waitseconds: 20,
                lockseconds: 60,
              }),
            ) as { locks: { locktoken: string }[] };
            if (received.locks.length === 0) continue;
            const answer = JSON.parse(
              await call('POST', `/subscriptions/${created.id}/events/acknowledge`, consumer, {
                locktokens: received.locks.map((lock) => lock.locktoken),
              }),
            ) as { succeeded: unknown[] };
            acknowledged += answer.succeeded.length;
          }
        },
      );
    }
    if (wanted('claimCheck1MiB')) {
      const type = 'nl.bench.cost.large.v1';
      const [target] = await pushSubscribers(type, 1);
      const data = 'x'.repeat(1024 * 1024);
      await measure(
        'claimCheck1MiB',
        'ingest + 1 push subscriber, 1 MiB of data per event: claim-checked, delivered by reference, the subscriber fetches the data',
        LARGE_EVENTS,
        data.length,
        async () => {
          await publish(type, LARGE_EVENTS, 1, data);
          const delivered = await target!.waitForRequests(LARGE_EVENTS, { timeoutMs: 120_000 });
          for (const request of delivered) {
            const dataref = (JSON.parse(request.body) as { dataref?: string }).dataref;
            if (!dataref) throw new Error('a 1 MiB event was delivered without dataref');
            if ((await call('GET', dataref, subscriber)).length !== data.length)
              throw new Error('the fetched data is not the data published');
          }
        },
      );
    }

    return {
      description:
        'Per scenario and stage: AWS requests by service and operation, billing units, Lambda invocations, records and handler time, recorded on the laptop host (bench/support/aws-usage.ts). docs/COST.md is generated from this file (npm run cost).',
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: Number(loadavg()[0]!.toFixed(2)),
      functions: Object.fromEntries(
        Object.entries(functions).map(([name, spec]: [string, FunctionSpec]) => [
          name,
          {
            memoryMb: spec.memoryMb,
            queueTrigger: spec.queueTrigger ?? null,
            http: Boolean(spec.routes ?? spec.defaultRoute),
          },
        ]),
      ),
      costScenarios: scenarios,
    };
  } finally {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await host.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
