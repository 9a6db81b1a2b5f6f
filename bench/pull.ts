/**
 * Pull delivery on the laptop host (docs/PULL.md, issue 10): one consumer draining a pull
 * subscription through Koerier's API, next to a floor of plain SQS on the same kind of queue, on
 * the same emulator, in the same run.
 *
 * - Koerier: one consumer, one call at a time: `POST …/events/receive` (`maxevents` 10 or 100,
 *   `waitseconds` 20, `lockseconds` 60), then `POST …/events/acknowledge` with every lock token it
 *   got, until all its events are acknowledged.
 * - Floor: the same with nothing around it, straight on the SQS emulator with the SDK: batch 10 is
 *   one `ReceiveMessage` (10 messages, no wait, the same 60 s visibility) then one
 *   `DeleteMessageBatch`; batch 100 is ten of each side by side (SQS hands out at most ten per
 *   call), as a plain SQS consumer would fetch a hundred.
 * - Every queue is a pull subscription's own queue (`koerier-pull-<id>`, made by the subscriptions
 *   API), all filled the same way: EVENTS events published through Koerier (`POST /events`,
 *   batches of 100) to one event type that every subscription of the run matches, so the router
 *   writes the very same messages to each queue. The floor reads the router's messages as they
 *   are (it does not look inside them).
 * - Order: a warm-up of both paths on two queues of their own, then batch 10 and batch 100, each
 *   as four rounds per side in the order K F F K K F F K (`interleaved`), so that whatever happens
 *   at one moment of the run falls on both sides alike.
 * - Receive latency (events waiting): every receive of the drains, from the request to the whole
 *   answer; for the floor the ReceiveMessage call (batch 100: the ten side by side).
 * - AWS requests per event delivered by pull: SDK middleware on the host's own clients (the ones
 *   the pull function runs on) counts every request of receive and acknowledge, divided by the
 *   events acknowledged.
 *
 * The emulators are single-threaded JavaScript in this one process, with the consumer, the API
 * emulation and the function: the figures are CPU per event on this laptop, so the ratio and the
 * call counts are what carry over to AWS. Run: `npm run bench -- pull` (or `npx tsx bench/pull.ts`;
 * `BENCH_PULL_EVENTS` sets EVENTS).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { Agent, request } from 'undici';
import type { KoerierHost } from '../local/host.js';
import { startBenchHost } from './bench-host.js';
import { apiAs, callApi, publishEvents } from '../test/support/koerier-api.js';
import { countRequests } from '../test/support/request-counter.js';

const EVENTS = Number(process.env['BENCH_PULL_EVENTS'] ?? 2000);
const WARM_UP_EVENTS = 300;
const PUBLISH_BATCH = 100;
const LOCK_SECONDS = 60;
const SQS_BATCH = 10;
const MAX_EMPTY_ROUNDS = 50;
/** Rounds per side, alternating (see `interleaved`); EVENTS must be a multiple of ROUNDS × 100. */
const ROUNDS = 4;
const TYPE = `nl.example.bench.pull.${randomUUID().slice(0, 8)}.v1`;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:bench';

/** What one drain measured, before it is added to the other rounds of the same side. */
interface DrainSample {
  readonly events: number;
  readonly seconds: number;
  readonly latencies: readonly number[];
  readonly cpuMicros: number;
}

interface Drain {
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly receiveLatencyMs: { readonly p50: number; readonly p99: number };
  /** CPU time of this one process (consumer, API emulation, function, emulators) per event. */
  readonly cpuMsPerEvent: number;
}

const percentile = (sorted: readonly number[], q: number) =>
  Number((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1));

function sampleOf(events: number, seconds: number, latencies: number[], cpuStart: NodeJS.CpuUsage): DrainSample {
  const cpu = process.cpuUsage(cpuStart);
  return { events, seconds, latencies, cpuMicros: cpu.user + cpu.system };
}

/** One side's figures over all its rounds. */
function drainFigures(samples: readonly DrainSample[]): Drain {
  const events = samples.reduce((sum, s) => sum + s.events, 0);
  const seconds = samples.reduce((sum, s) => sum + s.seconds, 0);
  const latencies = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const cpuMicros = samples.reduce((sum, s) => sum + s.cpuMicros, 0);
  return {
    events,
    seconds: Number(seconds.toFixed(2)),
    eventsPerSecond: Math.round(events / seconds),
    receiveLatencyMs: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
    cpuMsPerEvent: Number((cpuMicros / 1000 / events).toFixed(3)),
  };
}

function event(): Record<string, unknown> {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: SOURCE,
    type: TYPE,
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { leerling: 'L-42', school: '12AB', naam: 'Jan Jansen', klas: '3b' },
  };
}

/** Koerier's API as one consumer sees it. */
class Consumer {
  private readonly agent = new Agent({ connections: 1 });

  constructor(
    private readonly host: KoerierHost,
    private readonly token: string,
  ) {}

  async call(path: string, body: unknown, extraHeaders: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const response = await request(`${this.host.apiUrl}${path}`, {
      method: 'POST',
      dispatcher: this.agent,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json', ...extraHeaders },
      body: JSON.stringify(body),
    });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`${path} answered ${response.statusCode}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  /** Receives and acknowledges `events` events, `batch` at a time. */
  async drain(subscriptionId: string, events: number, batch: number): Promise<DrainSample> {
    const latencies: number[] = [];
    let acknowledged = 0;
    const cpuStart = process.cpuUsage();
    const started = performance.now();
    while (acknowledged < events) {
      const t0 = performance.now();
      const received = await this.call(`/subscriptions/${subscriptionId}/events/receive`, {
        maxevents: Math.min(batch, events - acknowledged),
        waitseconds: 20,
        lockseconds: LOCK_SECONDS,
      });
      latencies.push(performance.now() - t0);
      const locks = received['locks'] as { locktoken: string }[];
      if (locks.length === 0)
        throw new Error(`subscription ${subscriptionId}: nothing received after ${acknowledged} of ${events}`);
      const answer = await this.call(`/subscriptions/${subscriptionId}/events/acknowledge`, {
        locktokens: locks.map((lock) => lock.locktoken),
      });
      const failed = answer['failed'] as unknown[];
      if (failed.length > 0) throw new Error(`acknowledge failed for ${failed.length}: ${JSON.stringify(failed[0])}`);
      acknowledged += (answer['succeeded'] as unknown[]).length;
    }
    return sampleOf(events, (performance.now() - started) / 1000, latencies, cpuStart);
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** The floor: plain SQS ReceiveMessage + DeleteMessageBatch, `batch` at a time (ten per call). */
async function floorDrain(sqs: SQSClient, queueUrl: string, events: number, batch: number): Promise<DrainSample> {
  const latencies: number[] = [];
  let deleted = 0;
  let empty = 0;
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  while (deleted < events) {
    const wanted = Math.min(batch, events - deleted);
    const calls = Array.from({ length: Math.ceil(wanted / SQS_BATCH) }, (_, i) =>
      Math.min(SQS_BATCH, wanted - i * SQS_BATCH),
    );
    const t0 = performance.now();
    const received = await Promise.all(
      calls.map(async (max) => {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: max,
            WaitTimeSeconds: 0,
            VisibilityTimeout: LOCK_SECONDS,
          }),
        );
        return Messages;
      }),
    );
    latencies.push(performance.now() - t0);
    const chunks = received.filter((messages) => messages.length > 0);
    // A short poll may come back empty with messages waiting (on SQS by sampling; on the emulator
    // when a busy event loop lets its 40 ms deadline pass before its 10 ms polling tick): try again.
    empty = chunks.length === 0 ? empty + 1 : 0;
    if (empty > MAX_EMPTY_ROUNDS)
      throw new Error(`floor: nothing received ${empty} times in a row after ${deleted} of ${events}`);
    const results = await Promise.all(
      chunks.map((messages: Message[]) =>
        sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
          }),
        ),
      ),
    );
    for (const result of results) {
      if ((result.Failed ?? []).length > 0)
        throw new Error(`floor: DeleteMessageBatch failed: ${JSON.stringify(result.Failed![0])}`);
      deleted += (result.Successful ?? []).length;
    }
  }
  return sampleOf(events, (performance.now() - started) / 1000, latencies, cpuStart);
}

/**
 * With `BENCH_PULL_PROFILE=<dir>`, each measured drain is CPU-profiled on its own into
 * `<dir>/<name>.cpuprofile` (open in Chrome DevTools), so the drains' time is not mixed with the fill's.
 */
/**
 * Koerier and the floor drain in ROUNDS rounds each, in the order K F F K K F F K: whatever
 * happens at one moment of the run (a compaction of the laptop's SQS journal, a garbage
 * collection, another process taking the CPU) falls on both sides alike rather than on the one
 * that happened to run then. (Request counting sees Koerier's requests only: the floor has an SQS
 * client of its own.)
 */
async function interleaved(
  koerier: (events: number, round: number) => Promise<DrainSample>,
  floor: (events: number, round: number) => Promise<DrainSample>,
): Promise<{ koerier: Drain; floor: Drain }> {
  const perRound = EVENTS / ROUNDS;
  const koerierSamples: DrainSample[] = [];
  const floorSamples: DrainSample[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const runKoerier = async () => koerierSamples.push(await koerier(perRound, round));
    const runFloor = async () => floorSamples.push(await floor(perRound, round));
    if (round % 2 === 0) {
      await runKoerier();
      await runFloor();
    } else {
      await runFloor();
      await runKoerier();
    }
  }
  return { koerier: drainFigures(koerierSamples), floor: drainFigures(floorSamples) };
}

async function measured<T>(name: string, drain: () => Promise<T>): Promise<T> {
  const dir = process.env['BENCH_PULL_PROFILE'];
  if (!dir) return drain();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  try {
    return await drain();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = Number(loadavg()[0]!.toFixed(2));
  const benchHost = await startBenchHost('pull', {
    // Only the router: it fills the pull queues; nothing else should run beside the drains.
    queueTriggers: ['router'],
  });
  const { host } = benchHost;
  // The floor is a plain SDK consumer, as one would write it against SQS; Koerier sends with its own SDK clients (functions/aws/clients.ts).
  const floorSqs = new SQSClient(host.emulators.clientSettings('sqs'));
  const publisher = await host.issueToken('dev-publisher', ['events:publish']);
  const manager = await host.issueToken('dev-subscriber', ['subscriptions:manage']);
  const consumer = new Consumer(host, await host.issueToken('dev-subscriber', ['events:consume']));
  try {
    const names = ['warmUpKoerier', 'warmUpFloor', 'koerier10', 'floor10', 'koerier100', 'floor100'] as const;
    const ids = {} as Record<(typeof names)[number], string>;
    const urls = {} as Record<(typeof names)[number], string>;
    for (const name of names) {
      const created = await callApi(host.apiUrl, manager, 'POST', '/subscriptions', {
        delivery: 'pull',
        types: [TYPE],
      });
      if (created.status !== 201) throw new Error(`subscription answered ${created.status}: ${created.text}`);
      ids[name] = created.body['id'] as string;
      urls[name] = (await floorSqs.send(new GetQueueUrlCommand({ QueueName: `koerier-pull-${ids[name]}` }))).QueueUrl!;
    }

    // Fill: EVENTS events through Koerier, which the router writes to every queue of the run.
    // One request at a time, no retry: a refusal stops the run, as before the generated client.
    const publishing = apiAs(host.apiUrl, publisher, { retries: 0 });
    const fillStarted = performance.now();
    for (let i = 0; i < EVENTS; i += PUBLISH_BATCH)
      await publishEvents(publishing, Array.from({ length: Math.min(PUBLISH_BATCH, EVENTS - i) }, event));
    const waiting = async (url: string) =>
      Number(
        (
          await floorSqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages'] }),
          )
        ).Attributes?.['ApproximateNumberOfMessages'],
      );
    const deadline = Date.now() + 300_000;
    for (const name of names) {
      while ((await waiting(urls[name])) < EVENTS) {
        if (Date.now() > deadline)
          throw new Error(`the router did not fill ${name} in time (${await waiting(urls[name])} of ${EVENTS})`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    const fillSeconds = (performance.now() - fillStarted) / 1000;

    await consumer.drain(ids.warmUpKoerier, WARM_UP_EVENTS / 2, 10);
    await consumer.drain(ids.warmUpKoerier, WARM_UP_EVENTS / 2, 100);
    await floorDrain(floorSqs, urls.warmUpFloor, WARM_UP_EVENTS / 2, 10);
    await floorDrain(floorSqs, urls.warmUpFloor, WARM_UP_EVENTS / 2, 100);

    const sqsRequests = countRequests(host.awsClients.sqs);
    const dynamodbRequests = countRequests(host.awsClients.dynamodb);
    const requestsOf = () => ({ sqs: { ...sqsRequests.byOperation }, dynamodb: { ...dynamodbRequests.byOperation } });
    const reset = () => {
      sqsRequests.reset();
      dynamodbRequests.reset();
    };

    reset();
    const batch10 = await interleaved(
      (events, round) => measured(`koerier10-${round}`, () => consumer.drain(ids.koerier10, events, 10)),
      (events, round) => measured(`floor10-${round}`, () => floorDrain(floorSqs, urls.floor10, events, 10)),
    );
    const requests10 = requestsOf();
    reset();
    const batch100 = await interleaved(
      (events, round) => measured(`koerier100-${round}`, () => consumer.drain(ids.koerier100, events, 100)),
      (events, round) => measured(`floor100-${round}`, () => floorDrain(floorSqs, urls.floor100, events, 100)),
    );
    const requests100 = requestsOf();

    const perEvent = (counts: Record<string, number>) =>
      Object.fromEntries(
        Object.entries(counts).map(([operation, count]) => [operation, Number((count / EVENTS).toFixed(3))]),
      );
    const total = (counts: { sqs: Record<string, number>; dynamodb: Record<string, number> }) =>
      Number(
        ([...Object.values(counts.sqs), ...Object.values(counts.dynamodb)].reduce((a, b) => a + b, 0) / EVENTS).toFixed(
          3,
        ),
      );
    const pair = (
      { koerier, floor }: { koerier: Drain; floor: Drain },
      requests: { sqs: Record<string, number>; dynamodb: Record<string, number> },
      batch: number,
    ) => ({
      koerier,
      floor,
      ratio: Number((koerier.eventsPerSecond / floor.eventsPerSecond).toFixed(3)),
      // The same comparison by CPU per event, which a busy shared machine disturbs less than wall time.
      cpuRatio: Number((floor.cpuMsPerEvent / koerier.cpuMsPerEvent).toFixed(3)),
      awsRequestsPerEvent: {
        total: total(requests),
        sqs: perEvent(requests.sqs),
        dynamodb: perEvent(requests.dynamodb),
        floor: Number(((2 * Math.ceil(batch / SQS_BATCH)) / batch).toFixed(3)),
      },
    });

    return {
      events: EVENTS,
      consumer: 'one, one call at a time: receive (waitseconds 20, lockseconds 60) then acknowledge every token',
      floor:
        'plain SQS on the same emulator: ReceiveMessage (10 per call, WaitTimeSeconds 0, VisibilityTimeout 60) + DeleteMessageBatch; batch 100 = ten of each side by side',
      fill: {
        how: 'published through Koerier (POST /events, batches of 100); the router writes the same messages to every pull queue of the run, floor queues included',
        queues: names.length,
        seconds: Number(fillSeconds.toFixed(2)),
      },
      batch10: pair(batch10, requests10, 10),
      batch100: pair(batch100, requests100, 100),
      goal: 'Koerier at least 70 % of the floor (issue 10)',
      note: 'everything (consumer, API emulation, pull function, SQS and DynamoDB emulators) shares one Node process on this machine',
      // The machine is shared: how busy it was says how far apart two runs may lie.
      loadAverage1m: { atStart: loadAtStart, atEnd: Number(loadavg()[0]!.toFixed(2)) },
    };
  } finally {
    await consumer.close();
    floorSqs.destroy();
    await benchHost.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await run(), null, 2)}\n`);
  process.exit(0);
}
