/**
 * Push delivery on the laptop host, to local HTTPS receivers (a local certificate authority):
 *
 * - throughput: a deliveries queue filled with 3,000 deliveries to four subscriptions, drained by
 *   the real delivery handler behind four SQS poller loops (four function instances, batches of
 *   10, so 40 requests in flight at most), next to a floor of plain undici POSTs of the same
 *   bodies to the same receivers at the same concurrency, in the same run (ratio = Koerier/floor),
 *   next to the same poller draining the queue into a handler that does nothing (the ceiling
 *   the emulated queue sets), and next to the same poller draining it into a handler that makes
 *   the same calls as Koerier and nothing else: the same POSTs and the DynamoDB requests the
 *   delivery function made in the same run (bench/support/same-calls-floor.ts), the floor
 *   Koerier is judged by here;
 * - the AWS requests each delivery costs the delivery function, counted by SDK middleware on the
 *   clients the handler really uses (the poller's receive/delete are the event source mapping's,
 *   not the function's, and are left out as in AWS);
 * - end-to-end latency from the ingest's 202 to the receiver (p50, p99), through ingest, inbound
 *   queue, router and delivery, on the laptop's pollers (batching window 0 s, woken by arrivals);
 * - the router's batching window as a trade-off: invocations per event and the wait it adds, at
 *   low and high traffic, for 0 s and the deployment's 1 s.
 *
 * The emulators (single-threaded JavaScript) set the ceiling here; the ratio and the call counts
 * are what carry over to AWS. Run: `npx tsx bench/delivery.ts`.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { Agent, request } from 'undici';
import { credentialCipherFor } from '../functions/aws/credential-cipher.js';
import { DynamoDbRouteIndex } from '../functions/aws/dynamodb-route-index.js';
import { DynamoDbSubscriptionStore } from '../functions/aws/dynamodb-subscription-store.js';
import { observeAttempts, type ObservableClient } from '../functions/aws/aws-request-observer.js';
import { CreateQueueCommand, SendMessageBatchCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createDynamoDbClient, createSqsClient } from '../functions/aws/clients.js';
import { settingEnv } from '../functions/config.js';
import { sealSinkCredential } from '../functions/core/credentials/sink-credential.js';
import { encodeDeliveryMessage } from '../functions/core/delivery-message/delivery-message.js';
import { functions, tables } from '../functions/config/resources.js';
import { startPoller } from '../local/event-source-poller.js';
import { LAPTOP_BATCHES_IN_FLIGHT, type KoerierHost } from '../local/host.js';
import { startBenchHost } from './bench-host.js';
import {
  createLocalCertificateAuthority,
  startHttpsReceiver,
  type HttpsReceiver,
} from '../test/support/https-receiver.js';
import { apiAs, publishEvents } from '../test/support/koerier-api.js';
import { subscriptionDraft } from '../test/support/subscription-draft.js';
import {
  DynamoDbCallRecorder,
  floorAgent as sameCallsAgent,
  replayableHeaders,
  sameCallsHandler,
  type FloorTarget,
  type WrittenItem,
} from './support/same-calls-floor.js';

const SUBSCRIPTIONS = 4;
const DELIVERIES = 3000;
const INSTANCES = 4;
/** Drains of the full queue by each of the idle handler, Koerier and the same-calls floor, in turns; the best of each counts. */
const ROUNDS = 3;
const BATCH = functions.delivery.queueTrigger.batchSize;
const CONCURRENCY = INSTANCES * BATCH;
const LATENCY_EVENTS = 200;
const LATENCY_SPACING_MS = 25;
const TYPE = 'nl.example.bench.delivered.v1';
/** Issues 15 and 27: delivery ≥ 0.8× its floor of the same calls; the 202 to the webhook on the laptop, p50 ≤ 60 ms and p99 ≤ 200 ms. */
const GOAL = { ratioToSameCalls: 0.8, endToEndMs: { p50: 60, p99: 200 } } as const;

const calls = { dynamodb: 0, sqs: 0, poller: 0 };

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** A written item under a sort key of its own (the same length): its delivery ids replaced by new ones. */
function newAttemptKey(item: WrittenItem): WrittenItem {
  const sortKey = tables.deliveries.sortKey!.name;
  const key = item[sortKey]?.S;
  return key === undefined ? item : { ...item, [sortKey]: { S: key.replace(UUID, () => randomUUID()) } };
}

/** Every attempt a client sends, counted by SDK middleware inside the retries. */
function count(client: ObservableClient, counter: keyof typeof calls): void {
  observeAttempts(client, () => calls[counter]++);
}

function event(id = randomUUID()): string {
  return JSON.stringify({
    specversion: '1.0',
    id,
    source: 'urn:nld:oin:00000001234567890000:systeem:bench',
    type: TYPE,
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { leerling: 'L-42', school: '12AB', naam: 'Jan Jansen', klas: '3b' },
  });
}

/**
 * With BENCH_DELIVERY_PROFILE=<file>, a V8 CPU profile of the delivery phase alone (the queue
 * already full, from the poller's start to the last POST), for `bench/support/cpu-profile-summary.ts`;
 * with BENCH_DELIVERY_FLOOR_PROFILE=<file>, one of the same-calls floor's drain, to set beside it.
 */
async function profiled<T>(file: string | undefined, work: () => Promise<T>): Promise<T> {
  if (!file) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
  }
}

const percentile = (sorted: readonly number[], q: number) =>
  Number((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1));
const received = (receivers: readonly HttpsReceiver[]) =>
  receivers.reduce((sum, receiver) => sum + receiver.requests.length, 0);

/** The host's arrival notice for one queue, as `startPoller`'s `onArrival` takes it. */
function arrivalsIn(host: KoerierHost, queueUrl: string) {
  const name = queueUrl.split('/').at(-1);
  return (listener: () => void) => host.emulators.onSqsArrival((queue) => queue === name && listener());
}

interface TrafficFigures {
  readonly events: number;
  readonly invocations: number;
  readonly invocationsPerEvent: number;
  readonly waitP50Ms: number;
  readonly waitP99Ms: number;
}

/** Invocations per event and the wait before the invocation, for one batching window, at low and high traffic. */
async function windowTradeOff(
  host: KoerierHost,
  sqs: SQSClient,
  windowSeconds: number,
): Promise<{ lowTraffic: TrafficFigures; highTraffic: TrafficFigures }> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: `koerier-bench-window-${windowSeconds}-${randomUUID().slice(0, 8)}` }),
  );
  const queueUrl = QueueUrl!;
  let invocations = 0;
  const waits: number[] = [];
  const poller = await startPoller({
    queueUrl,
    handler: (async (event: { Records: { body: string }[] }) => {
      invocations++;
      const now = Date.now();
      for (const record of event.Records) waits.push(now - Number(record.body));
      return { batchItemFailures: [] };
    }) as never,
    batchSize: 10,
    maxBatchingWindowSeconds: windowSeconds,
    waitTimeSeconds: 20,
    onArrival: arrivalsIn(host, queueUrl),
    client: sqs,
    log: () => {},
  });
  const traffic = async (events: number, perSend: number, spacingMs: number): Promise<TrafficFigures> => {
    invocations = 0;
    waits.length = 0;
    for (let sent = 0; sent < events; sent += perSend) {
      const at = String(Date.now());
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Array.from({ length: perSend }, (_, i) => ({ Id: String(i), MessageBody: at })),
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, spacingMs));
    }
    await until(
      () => waits.length >= events,
      60_000,
      () => `${waits.length} of ${events} received with a ${windowSeconds} s window`,
    );
    const sorted = [...waits].sort((a, b) => a - b);
    return {
      events,
      invocations,
      invocationsPerEvent: Number((invocations / events).toFixed(3)),
      waitP50Ms: percentile(sorted, 0.5),
      waitP99Ms: percentile(sorted, 0.99),
    };
  };
  try {
    return { lowTraffic: await traffic(20, 1, 200), highTraffic: await traffic(1000, 10, 20) };
  } finally {
    await poller.stop();
  }
}

/**
 * The latency's floor on this machine: the two queue hops of the chain (inbound → router →
 * deliveries → delivery) with handlers that only pass the message on, on pollers wired as the
 * host wires its own, at the same spacing: from SendMessage's answer to the second invocation.
 */
async function twoQueueHops(host: KoerierHost, sqs: SQSClient): Promise<{ p50: number; p99: number }> {
  const queue = async (hop: string) =>
    (await sqs.send(new CreateQueueCommand({ QueueName: `koerier-bench-hop-${hop}-${randomUUID().slice(0, 8)}` })))
      .QueueUrl!;
  const [first, second] = [await queue('a'), await queue('b')];
  const answeredAt = new Map<string, number>();
  const arrivedAt = new Map<string, number>();
  const hop = (queueUrl: string, handler: (bodies: string[]) => Promise<void>) =>
    startPoller({
      queueUrl,
      handler: (async (event: { Records: { body: string }[] }) => {
        await handler(event.Records.map((record) => record.body));
        return { batchItemFailures: [] };
      }) as never,
      batchSize: BATCH,
      batchesInFlight: LAPTOP_BATCHES_IN_FLIGHT,
      waitTimeSeconds: 20,
      onArrival: arrivalsIn(host, queueUrl),
      client: sqs,
      log: () => {},
    });
  const pollers = [
    await hop(first, async (bodies) => {
      await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: second,
          Entries: bodies.map((body, i) => ({ Id: String(i), MessageBody: body })),
        }),
      );
    }),
    await hop(second, async (bodies) => {
      const now = Date.now();
      for (const body of bodies) arrivedAt.set(body, now);
    }),
  ];
  try {
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const id = randomUUID();
      await sqs.send(new SendMessageCommand({ QueueUrl: first, MessageBody: id }));
      // The clock starts at SendMessage's answer, as the end-to-end figure starts at the 202.
      answeredAt.set(id, Date.now());
      await new Promise((resolve) => setTimeout(resolve, LATENCY_SPACING_MS));
    }
    await until(
      () => arrivedAt.size >= LATENCY_EVENTS,
      60_000,
      () => `${arrivedAt.size} of ${LATENCY_EVENTS} hop messages through`,
    );
  } finally {
    await Promise.all(pollers.map((poller) => poller.stop()));
  }
  const sorted = [...arrivedAt].map(([id, at]) => at - answeredAt.get(id)!).sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

async function until(condition: () => boolean, timeoutMs: number, progress: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`benchmark run did not finish in time: ${progress()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export async function run(): Promise<Record<string, unknown>> {
  const authority = createLocalCertificateAuthority();
  const benchHost = await startBenchHost('delivery', {
    prepare: async (dir) => {
      await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
      return { [settingEnv.outboundCaFile]: join(dir, 'ca.pem') };
    },
    // The delivery function is started below, as four instances, once its queue is full.
    queueTriggers: ['router'],
  });
  const { host } = benchHost;
  const receivers = await Promise.all(Array.from({ length: SUBSCRIPTIONS }, () => startHttpsReceiver({ authority })));
  const floorAgent = new Agent({ connections: CONCURRENCY, connect: { ca: authority.certificatePem } });
  // The pollers' own client, made as the host makes its pollers' (local/host.ts): the queue-only
  // ceiling, Koerier's drain and the floor's all receive with it.
  const feeder = createSqsClient(host.emulators.clientSettings('sqs'));
  // The floor of the same calls: its own SDK DynamoDB client, made as the function's
  // (functions/aws/clients.ts), and its own keep-alive pool, so neither Koerier's counts nor its
  // connections include the floor's.
  const floorDynamoDb = createDynamoDbClient(host.emulators.clientSettings('dynamodb'));
  const floorHttps = sameCallsAgent(authority.certificatePem);
  try {
    const dynamodb = host.awsClients.dynamodb;
    const subscriptions = new DynamoDbSubscriptionStore(
      dynamodb,
      host.config.resources.table('subscriptions'),
      new DynamoDbRouteIndex(dynamodb, host.config.resources.table('routes')),
    );
    const ids: string[] = [];
    for (const receiver of receivers) {
      const id = randomUUID();
      ids.push(id);
      // WH-3: every push subscription carries a credential; the receiver is its own token endpoint.
      const credential = await sealSinkCredential(
        receiver.clientCredentials,
        id,
        credentialCipherFor(host.config.resources.key('credentials'), { localKeysDir: host.config.localKeysDir! }),
      );
      await subscriptions.create(
        subscriptionDraft({ id, owner: 'dev-subscriber', sink: receiver.url, types: [TYPE], credential }),
      );
    }

    // Floor: the same POSTs with nothing around them (run in each round below).
    const body = event();
    const floorRequests = DELIVERIES;
    const postsAlone = async (): Promise<number> => {
      let next = 0;
      const floorStarted = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < floorRequests) {
            const index = next++;
            const response = await request(receivers[index % SUBSCRIPTIONS]!.url, {
              method: 'POST',
              dispatcher: floorAgent,
              headers: {
                'content-type': 'application/cloudevents+json; charset=utf-8',
                'idempotency-key': randomUUID(),
              },
              body,
            });
            await response.body.dump();
          }
        }),
      );
      return (performance.now() - floorStarted) / 1000;
    };
    let floorSeconds = Number.POSITIVE_INFINITY;

    // Koerier: fill the deliveries queue, then let the delivery function drain it.
    const queueUrl = host.config.resources.queueUrl('deliveries');
    /**
     * The poller each drain runs on, the idle handler's, Koerier's and the same-calls floor's alike:
     * four instances taking batches of ten, woken by an arrival as the host wires its own pollers
     * (SQS's long poll answers at once).
     */
    const drainingPoller = (functionName: string, drainHandler: unknown) =>
      startPoller({
        queueUrl,
        handler: drainHandler as never,
        functionName,
        batchSize: BATCH,
        concurrency: INSTANCES,
        waitTimeSeconds: 1,
        client: feeder,
        onArrival: arrivalsIn(host, queueUrl),
        log: () => {},
      });
    /** Fills the queue; answers each delivery's event text by its id (what the same-calls floor posts). */
    const fill = async (): Promise<Map<string, string>> => {
      const bodies = new Map<string, string>();
      const messages = Array.from({ length: DELIVERIES }, (_, i) => {
        const deliveryId = randomUUID();
        const text = event();
        bodies.set(deliveryId, text);
        return encodeDeliveryMessage({
          version: 1,
          deliveryId,
          subscriptionId: ids[i % SUBSCRIPTIONS]!,
          events: [text],
          createdAt: Date.now(),
        });
      });
      for (let i = 0; i < messages.length; i += 10) {
        await feeder.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: messages.slice(i, i + 10).map((m, j) => ({ Id: String(j), MessageBody: m })),
          }),
        );
      }
      return bodies;
    };

    // Second floor: what the emulated queue alone allows — the same poller, a handler that does
    // nothing. The POSTs alone, it and Koerier run in turns, ROUNDS times each, and the best of
    // each counts: the machine is shared, and its load moves between one run and the next.
    const { handlerFor } = await import('../functions/handlers/delivery.js');
    // The host's own dependencies: the delivery function runs as the host would run it.
    const handler = handlerFor(() => host.dependencies);
    let queueSeconds = Number.POSITIVE_INFINITY;
    let koerierSeconds = Number.POSITIVE_INFINITY;
    let sameCallsSeconds = Number.POSITIVE_INFINITY;
    // Every round's drain time: how far apart the rounds are says how far to trust the best of them.
    const koerierRounds: number[] = [];
    const sameCallsRounds: number[] = [];
    const recorder = new DynamoDbCallRecorder(host.awsClients.dynamodb);
    const floorCalls: Record<string, number> = {};
    observeAttempts(floorDynamoDb, ({ operation }) => void (floorCalls[operation] = (floorCalls[operation] ?? 0) + 1));
    let sameCallsDrains = 0;
    let queueOnlyPollerCalls = 0;
    let deliveryPollerCalls = 0;
    let webhookConnections = 0;
    const connections = () => receivers.reduce((sum, receiver) => sum + receiver.connectionCount, 0);
    // The poller's own requests (receive, delete) are counted on its client, the function's on the host's.
    count(feeder, 'poller');
    count(host.awsClients.dynamodb, 'dynamodb');
    count(host.awsClients.sqs, 'sqs');
    for (let round = 0; round < ROUNDS; round++) {
      floorSeconds = Math.min(floorSeconds, await postsAlone());
      await fill();
      calls.poller = 0;
      let drained = 0;
      const queueStarted = performance.now();
      const idle = await drainingPoller('idle', async (event: { Records: unknown[] }) => {
        drained += event.Records.length;
        return { batchItemFailures: [] };
      });
      await until(
        () => drained >= DELIVERIES,
        120_000,
        () => `${drained} of ${DELIVERIES} drained by the idle handler`,
      );
      queueSeconds = Math.min(queueSeconds, (performance.now() - queueStarted) / 1000);
      await idle.stop();
      queueOnlyPollerCalls += calls.poller;

      await fill();
      calls.poller = 0;
      const before = received(receivers);
      const connectedBefore = connections();
      let poller: Awaited<ReturnType<typeof startPoller>> | undefined;
      const started = performance.now();
      // The profile, when asked for, is of the last round's delivery phase alone.
      const drain = async () => {
        poller = await drainingPoller('delivery', handler);
        await until(
          () => received(receivers) - before >= DELIVERIES,
          120_000,
          () =>
            `${received(receivers) - before} of ${DELIVERIES} delivered; per receiver ${receivers.map((r) => r.requests.length).join(', ')}`,
        );
      };
      recorder.recording = true;
      await profiled(round === ROUNDS - 1 ? process.env['BENCH_DELIVERY_PROFILE'] : undefined, drain);
      koerierRounds.push((performance.now() - started) / 1000);
      koerierSeconds = Math.min(...koerierRounds);
      await poller?.stop();
      recorder.recording = false;
      deliveryPollerCalls += calls.poller;
      webhookConnections += connections() - connectedBefore;

      // The floor of the same calls, after Koerier's drain: it sends what Koerier sent so far.
      const bodies = await fill();
      const targets = new Map<string, FloorTarget>(
        receivers.map((receiver, i) => [
          ids[i]!,
          { url: new URL(receiver.url), headers: replayableHeaders(receiver.requests.at(-1)!.headers) },
        ]),
      );
      const floorBefore = received(receivers);
      let floorPoller: Awaited<ReturnType<typeof startPoller>> | undefined;
      const floorStarted = performance.now();
      await profiled(round === ROUNDS - 1 ? process.env['BENCH_DELIVERY_FLOOR_PROFILE'] : undefined, async () => {
        floorPoller = await drainingPoller(
          'delivery-floor',
          sameCallsHandler({
            dynamodb: floorDynamoDb,
            replay: recorder.replay(DELIVERIES * (round + 1), newAttemptKey),
            agent: floorHttps,
            targets,
            bodies,
          }),
        );
        await until(
          () => received(receivers) - floorBefore >= DELIVERIES,
          120_000,
          () => `${received(receivers) - floorBefore} of ${DELIVERIES} posted by the same-calls floor`,
        );
      });
      sameCallsRounds.push((performance.now() - floorStarted) / 1000);
      sameCallsSeconds = Math.min(...sameCallsRounds);
      await floorPoller?.stop();
      sameCallsDrains += DELIVERIES;
    }
    const drains = DELIVERIES * ROUNDS;
    const deliveryCalls = { dynamodb: calls.dynamodb, sqs: calls.sqs };

    // End-to-end latency: publish one event at a time, from the 202 to the receiver, through the
    // host's router and the delivery function polled as the host polls it.
    const latencyPoller = await startPoller({
      queueUrl,
      handler: handler as never,
      functionName: 'delivery',
      batchSize: BATCH,
      // As the host runs it (local/host.ts): one receive loop, up to five batches at once.
      batchesInFlight: LAPTOP_BATCHES_IN_FLIGHT,
      waitTimeSeconds: 1,
      client: feeder,
      onArrival: arrivalsIn(host, queueUrl),
      log: () => {},
    });
    // No retry: a refusal stops the run, and no wait enters a latency.
    const publishing = apiAs(host.apiUrl, await host.issueToken('dev-publisher'), { retries: 0 });
    const acceptedAt = new Map<string, number>();
    const latencyReceiver = receivers[0]!;
    const already = latencyReceiver.requests.length;
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const id = randomUUID();
      await publishEvents(publishing, event(id));
      acceptedAt.set(id, Date.now());
      await new Promise((resolve) => setTimeout(resolve, LATENCY_SPACING_MS));
    }
    await until(
      () => latencyReceiver.requests.length - already >= LATENCY_EVENTS,
      60_000,
      () => `${latencyReceiver.requests.length - already} of ${LATENCY_EVENTS} latency events received`,
    );
    const latencies = latencyReceiver.requests
      .slice(already)
      .map((r) => r.receivedAt - acceptedAt.get((JSON.parse(r.body) as { id: string }).id)!)
      .sort((a, b) => a - b);
    await latencyPoller.stop();
    const hops = await twoQueueHops(host, feeder);

    const batchingWindow = {
      description:
        'the router’s batching window, measured on the laptop’s event-source poller with a handler that only counts: invocations per event and the wait from SendMessage to the invocation, at low traffic (5 events/s) and high traffic (about 500 events/s)',
      window0s: await windowTradeOff(host, feeder, 0),
      window1s: await windowTradeOff(host, feeder, 1),
    };

    const deliveriesPerSecond = Math.round(DELIVERIES / koerierSeconds);
    const sameCallsPerSecond = Math.round(DELIVERIES / sameCallsSeconds);
    const perMessage = (counts: Record<string, number>, messages: number) =>
      Object.fromEntries(
        Object.entries(counts).map(([operation, count]) => [operation, Number((count / messages).toFixed(3))]),
      );
    const floorPerSecond = Math.round(floorRequests / floorSeconds);
    return {
      concurrency: CONCURRENCY,
      throughput: {
        deliveries: DELIVERIES,
        subscriptions: SUBSCRIPTIONS,
        rounds: ROUNDS,
        koerier: {
          seconds: Number(koerierSeconds.toFixed(2)),
          deliveriesPerSecond,
          note: 'the fastest of its rounds',
          perSecondByRound: koerierRounds.map((seconds) => Math.round(DELIVERIES / seconds)),
        },
        baseline: {
          description:
            'plain undici POSTs of the same body to the same receivers at the same concurrency (the fastest of its rounds)',
          seconds: Number(floorSeconds.toFixed(2)),
          postsPerSecond: floorPerSecond,
        },
        ratio: Number((deliveriesPerSecond / floorPerSecond).toFixed(3)),
        queueOnly: {
          description:
            'the same poller draining the emulated queue into a handler that does nothing: the laptop’s ceiling (the fastest of its rounds, drained in turns with Koerier’s)',
          seconds: Number(queueSeconds.toFixed(2)),
          messagesPerSecond: Math.round(DELIVERIES / queueSeconds),
        },
        ratioToQueueOnly: Number((deliveriesPerSecond / (DELIVERIES / queueSeconds)).toFixed(3)),
        ratioToQueueOnlyBefore: {
          value: 0.497,
          description:
            'bench/results/delivery.json before issue 15’s delivery changes (2026-11-23T21:28Z, load 9.3, one round each)',
        },
        goalRatioToQueueOnly: 0.8,
        queueAndPosts: {
          description:
            'what one thread does when it both drains the queue (queueOnly) and makes the POSTs (baseline), if both kept the CPU busy: 1 / (1/queueOnly + 1/baseline). The bench, the emulators, the receivers and the delivery function share one thread here; where the two overlap in waiting for each other a delivery can do better, up to the smaller of the two',
          messagesPerSecond: Math.round(1 / (queueSeconds / DELIVERIES + floorSeconds / floorRequests)),
        },
        ratioToQueueAndPosts: Number(
          (deliveriesPerSecond * (queueSeconds / DELIVERIES + floorSeconds / floorRequests)).toFixed(3),
        ),
        sameCalls: {
          description:
            'the same poller and queue draining into a handler with no Koerier code that makes Koerier’s calls: per message the same HTTPS POST (same body bytes, receivers and headers, a keep-alive node:https Agent shaped as the safe client’s), per batch the DynamoDB requests the delivery function sent in this run, replayed at its rate per message through an SDK DynamoDB client made as the function’s (functions/aws/clients.ts, bench/support/same-calls-floor.ts); the fastest of its rounds, drained in turns with Koerier’s',
          seconds: Number(sameCallsSeconds.toFixed(2)),
          messagesPerSecond: sameCallsPerSecond,
          perSecondByRound: sameCallsRounds.map((seconds) => Math.round(DELIVERIES / seconds)),
          dynamodbRequestsPerMessage: perMessage(floorCalls, sameCallsDrains),
        },
        ratioToSameCalls: Number((deliveriesPerSecond / sameCallsPerSecond).toFixed(3)),
        goalRatioToSameCalls: GOAL.ratioToSameCalls,
        meetsGoalRatioToSameCalls: deliveriesPerSecond / sameCallsPerSecond >= GOAL.ratioToSameCalls,
      },
      awsRequestsPerDelivery: {
        dynamodb: Number((deliveryCalls.dynamodb / drains).toFixed(3)),
        dynamodbByOperation: perMessage(recorder.perMessage(1), drains),
        sqs: Number((deliveryCalls.sqs / drains).toFixed(3)),
        note: 'made by the delivery function on the happy path; receiving and deleting messages is the event source mapping’s work',
      },
      webhookConnections: {
        perDrain: Math.round(webhookConnections / ROUNDS),
        note: 'TCP connections the receivers accepted while the delivery function drained 3,000 deliveries: its keep-alive pool reuses them (the SSRF guard judges each when it connects)',
      },
      pollerRequestsPerMessage: {
        queueOnly: Number((queueOnlyPollerCalls / drains).toFixed(3)),
        delivery: Number((deliveryPollerCalls / drains).toFixed(3)),
        note: 'the laptop poller’s ReceiveMessage and DeleteMessageBatch requests (empty receives included) per message, in each phase',
      },
      endToEndLatencyMs: {
        events: LATENCY_EVENTS,
        from: 'the ingest’s 202 to the receiver',
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        queueHopsOnly: {
          description:
            'the same two queue hops with handlers that only pass the message on, same pollers and spacing, same run: from SendMessage’s answer to the second invocation',
          ...hops,
        },
        before: {
          description:
            'bench/results/delivery.json before issue 15’s laptop changes (2026-11-23T21:28Z, load 9.3): another run',
          p50: 100,
          p99: 395,
        },
        goal: GOAL.endToEndMs,
        meetsGoal:
          percentile(latencies, 0.5) <= GOAL.endToEndMs.p50 && percentile(latencies, 0.99) <= GOAL.endToEndMs.p99,
        note: 'the laptop host’s batching window is 0 s (LAPTOP_BATCHING_WINDOW_SECONDS); a deployment’s router waits up to its 1 s window (see batchingWindow)',
      },
      batchingWindow,
      loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
    };
  } finally {
    feeder.destroy();
    floorDynamoDb.destroy();
    floorHttps.destroy();
    await floorAgent.close();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await benchHost.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await run(), null, 2)}\n`);
  process.exit(0);
}
