/**
 * Ordered push delivery per key (issue 33, docs/ORDERING.md) on the laptop host, against
 * unordered push in the same run, through the whole path (ingest, inbound queue, router, lanes in
 * dynalite, deliveries queue, delivery function) to local HTTPS receivers:
 *
 * - throughput: KEYS keys × EVENTS_PER_KEY events, published over PUBLISH_CONNECTIONS connections
 *   (each owns a quarter of the keys and sends event n of each in one request, then event n + 1
 *   after the 202), to an ordered subscription
 *   (`ordering: {key: "partitionkey"}`) and, in rounds taken in turns (U O O U …), to an unordered
 *   one of the same sink. Two rates per round: events over the time from the first publish to the
 *   last delivery (what a publisher sees; the ordered side pays the settling window once), and
 *   events over the time from the first delivery to the last (the drain itself). Goal: ordered ≥
 *   0.7× unordered with 100 keys. Pull the same way: the same traffic to a pull subscription
 *   (ordered or not) read by PULL_CONSUMERS consumers side by side, each receiving up to
 *   PULL_MAX_EVENTS and acknowledging at once; events over the time from the first publish to
 *   the last acknowledgement, rounds in turns U O O U.
 * - latency of the other keys while one key is blocked: LATENCY_KEYS keys, one event per key
 *   every LATENCY_SPACING_MS in turn, each alone in its request, the 202 to the receiver; once
 *   with every key taken, once with `key-0` refused (500, retried every 1–2 s, `block`). The p99
 *   of the other keys is compared. Goal: within 10 %.
 *
 * The circuit breaker is per subscription (docs/ORDERING.md, "Limits"): its threshold is set out of
 * reach here so that the lanes are measured, not the breaker. The emulators are single-threaded
 * JavaScript in this process: the ratio carries over to AWS, the rates do not.
 * Run: `npm run bench -- ordered-delivery` (or `npx tsx bench/ordered-delivery.ts`).
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { settingEnv } from '../functions/config.js';
import type { KoerierHost } from '../local/host.js';
import { startBenchHost } from './bench-host.js';
import {
  createLocalCertificateAuthority,
  startHttpsReceiver,
  type HttpsReceiver,
  type ReceiverScript,
} from '../test/support/https-receiver.js';
import { apiAs, callApi, publishEvents, type KoerierClient } from '../test/support/koerier-api.js';
import { countRequests, type RequestCounter } from '../test/support/request-counter.js';

const KEYS = 100;
const EVENTS_PER_KEY = Number(process.env['BENCH_ORDERED_EVENTS_PER_KEY'] ?? 10);
const PUBLISH_CONNECTIONS = 4;
/** Throughput rounds per side, in turns U O O U. */
const ROUNDS = 2;
/** Pull: consumers reading side by side, and the most events each receive asks for. */
const PULL_CONSUMERS = 4;
const PULL_MAX_EVENTS = 20;
const LATENCY_KEYS = 20;
const LATENCY_EVENTS = Number(process.env['BENCH_ORDERED_LATENCY_EVENTS'] ?? 300);
const LATENCY_SPACING_MS = 20;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:bench';
const GOAL = { throughputRatio: 0.7, otherKeysP99Ratio: 1.1 } as const;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await sleep(50);
  }
}

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

interface Bench {
  readonly host: KoerierHost;
  readonly manager: string;
  readonly publisher: KoerierClient;
  readonly authority: ReturnType<typeof createLocalCertificateAuthority>;
  readonly receivers: HttpsReceiver[];
  /** The host's AWS requests (every function shares one client per service). */
  readonly dynamodb: RequestCounter;
  readonly sqs: RequestCounter;
}

/**
 * AWS requests per delivered event in a round: on the laptop the single-threaded emulators, in this
 * process, answer them all, so their count sets the ceiling a round's rate meets. The functions'
 * requests only: the queue pollers' receives and deletes (Lambda's event source mapping on AWS,
 * not billed per request) go through a client of their own and are not counted, on either side.
 */
function roundRequests(bench: Bench, events: number, elapsedMs: number) {
  return {
    requestsPerEvent: requestsPerEvent(bench, events),
    // The emulators' pace over the round (the functions' DynamoDB and SQS requests): alike on both
    // sides when it is the requests, not the ordering's waits, that set the rate.
    awsRequestsPerSecond: Math.round((bench.dynamodb.total() + bench.sqs.total()) / (elapsedMs / 1000)),
  };
}

function requestsPerEvent(bench: Bench, events: number) {
  const per = (n: number) => Number((n / events).toFixed(2));
  const byOperation = Object.fromEntries(
    Object.entries(bench.dynamodb.byOperation)
      .sort(([, a], [, b]) => b - a)
      .map(([name, n]) => [name, per(n)]),
  );
  return { dynamodb: per(bench.dynamodb.total()), sqs: per(bench.sqs.total()), dynamodbByOperation: byOperation };
}

/** A subscription of its own type to a receiver of its own; ordered or not. */
async function subscribe(bench: Bench, ordered: boolean, script?: ReceiverScript) {
  const receiver = await startHttpsReceiver({ authority: bench.authority, ...(script ? { script } : {}) });
  bench.receivers.push(receiver);
  const type = `nl.example.bench.ordered.${randomUUID().slice(0, 8)}.v1`;
  const created = await callApi(bench.host.apiUrl, bench.manager, 'POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
    ...(ordered ? { ordering: { key: 'partitionkey', onFailure: 'block' } } : {}),
  });
  if (created.status !== 201) throw new Error(`subscription answered ${created.status}: ${created.text}`);
  return { receiver, type };
}

/**
 * KEYS keys × `eventsPerKey` events of `type`: connection c owns the keys k with k %
 * PUBLISH_CONNECTIONS = c and sends event n of all of them in one request, then event n + 1 after
 * the 202, so every key's events are accepted in order.
 */
async function publishKeys(bench: Bench, type: string, eventsPerKey: number): Promise<void> {
  await Promise.all(
    Array.from({ length: PUBLISH_CONNECTIONS }, async (_, c) => {
      const keys = Array.from({ length: KEYS }, (_, k) => k).filter((k) => k % PUBLISH_CONNECTIONS === c);
      for (let n = 1; n <= eventsPerKey; n++) {
        const batch = keys.map((k) => ({
          specversion: '1.0',
          id: randomUUID(),
          source: SOURCE,
          type,
          partitionkey: `key-${k}`,
          data: { n },
        }));
        const { response } = await publishEvents(bench.publisher, batch);
        if (response.status !== 202) throw new Error(`publish answered ${response.status}`);
      }
    }),
  );
}

/** One throughput round: every event published, then waited for at the receiver. */
async function throughputRound(bench: Bench, ordered: boolean, eventsPerKey = EVENTS_PER_KEY) {
  const { receiver, type } = await subscribe(bench, ordered);
  const total = KEYS * eventsPerKey;
  bench.dynamodb.reset();
  bench.sqs.reset();
  const started = Date.now();
  await publishKeys(bench, type, eventsPerKey);
  const published = Date.now();
  await until(
    () => receiver.requests.length >= total,
    600_000,
    () => `${receiver.requests.length} of ${total} delivered`,
  );
  const first = receiver.requests[0]!.receivedAt;
  const last = Math.max(...receiver.requests.map((r) => r.receivedAt));
  const requests = roundRequests(bench, total, last - started);
  const outOfOrder = ordered ? keysOutOfOrder(receiver) : 0;
  return {
    side: ordered ? 'ordered' : 'unordered',
    publishMs: published - started,
    publishToLastDeliveryMs: last - started,
    firstToLastDeliveryMs: last - first,
    endToEndPerSecond: Math.round(total / ((last - started) / 1000)),
    drainPerSecond: Math.round(total / ((last - first) / 1000)),
    keysOutOfOrder: outOfOrder,
    ...requests,
  };
}

/**
 * One pull throughput round: a pull subscription (ordered or not) read by PULL_CONSUMERS consumers
 * side by side, each receiving up to PULL_MAX_EVENTS and acknowledging them at once, while the
 * same traffic as a push round is published; from the first publish to the last acknowledgement.
 */
async function pullThroughputRound(bench: Bench, ordered: boolean, eventsPerKey = EVENTS_PER_KEY) {
  const type = `nl.example.bench.ordered-pull.${randomUUID().slice(0, 8)}.v1`;
  const created = await callApi(bench.host.apiUrl, bench.manager, 'POST', '/subscriptions', {
    delivery: 'pull',
    types: [type],
    ...(ordered ? { ordering: { key: 'partitionkey', onFailure: 'block' } } : {}),
  });
  if (created.status !== 201) throw new Error(`subscription answered ${created.status}: ${created.text}`);
  const id = created.body['id'] as string;
  const total = KEYS * eventsPerKey;
  /** Per key, the `n` of each acknowledged event, in the order acknowledged. */
  const acknowledged = new Map<string, number[]>();
  let count = 0;
  let lastAt = 0;
  let refused = 0;
  const consume = async () => {
    while (count < total) {
      const answer = await callApi(bench.host.apiUrl, bench.manager, 'POST', `/subscriptions/${id}/events/receive`, {
        maxevents: PULL_MAX_EVENTS,
        waitseconds: 1,
        lockseconds: 30,
      });
      if (answer.status !== 200) {
        refused++;
        continue;
      }
      const events = answer.body['events'] as { partitionkey: string; data: { n: number } }[];
      if (events.length === 0) continue;
      const locks = answer.body['locks'] as { locktoken: string }[];
      // Booked as acknowledged as the acknowledgement goes out: from then on another consumer may
      // get the key's next event, and its acknowledgement may come back before this one does.
      for (const event of events)
        acknowledged.set(event.partitionkey, [...(acknowledged.get(event.partitionkey) ?? []), event.data.n]);
      const settled = await callApi(
        bench.host.apiUrl,
        bench.manager,
        'POST',
        `/subscriptions/${id}/events/acknowledge`,
        {
          locktokens: locks.map((lock) => lock.locktoken),
        },
      );
      const failed = new Set(
        (settled.status === 200 ? (settled.body['failed'] as { locktoken: string }[]) : locks).map((l) => l.locktoken),
      );
      if (failed.size > 0) refused++;
      for (const [i, event] of events.entries()) {
        if (!failed.has(locks[i]!.locktoken)) {
          count++;
          continue;
        }
        // Not acknowledged after all: it comes back when its lock ends.
        const ofKey = acknowledged.get(event.partitionkey)!;
        ofKey.splice(ofKey.lastIndexOf(event.data.n), 1);
      }
      lastAt = Date.now();
    }
  };
  bench.dynamodb.reset();
  bench.sqs.reset();
  const started = Date.now();
  const consumers = Array.from({ length: PULL_CONSUMERS }, () => consume());
  await publishKeys(bench, type, eventsPerKey);
  const published = Date.now();
  await Promise.race([
    Promise.all(consumers),
    sleep(600_000).then(() => {
      throw new Error(`timed out: ${count} of ${total} acknowledged`);
    }),
  ]);
  const requests = roundRequests(bench, total, lastAt - started);
  return {
    side: ordered ? 'ordered' : 'unordered',
    publishMs: published - started,
    publishToLastAcknowledgementMs: lastAt - started,
    endToEndPerSecond: Math.round(total / ((lastAt - started) / 1000)),
    keysOutOfOrder: ordered ? [...acknowledged.values()].filter((ns) => ns.some((n, i) => n !== i + 1)).length : 0,
    // Receives or acknowledgements answered other than 200, or acknowledgements that failed in part.
    refused,
    ...requests,
  };
}

function requestsRatio(rounds: readonly { side: string; requestsPerEvent: ReturnType<typeof requestsPerEvent> }[]) {
  const mean = (side: string, field: 'dynamodb' | 'sqs') => {
    const of = rounds.filter((r) => r.side === side).map((r) => r.requestsPerEvent[field]);
    return Number((of.reduce((a, b) => a + b, 0) / of.length).toFixed(2));
  };
  const side = (name: string) => ({ dynamodb: mean(name, 'dynamodb'), sqs: mean(name, 'sqs') });
  const unordered = side('unordered');
  const ordered = side('ordered');
  const all = (s: typeof unordered) => s.dynamodb + s.sqs;
  return { unordered, ordered, unorderedOverOrdered: Number((all(unordered) / all(ordered)).toFixed(2)) };
}

function keysOutOfOrder(receiver: HttpsReceiver): number {
  const byKey = new Map<string, number[]>();
  for (const r of receiver.requests) {
    const event = JSON.parse(r.body) as { partitionkey: string; data: { n: number } };
    byKey.set(event.partitionkey, [...(byKey.get(event.partitionkey) ?? []), event.data.n]);
  }
  return [...byKey.values()].filter((ns) => ns.some((n, i) => n !== i + 1)).length;
}

/** Latencies (202 to receiver) of every key but `key-0`, sorted; `key-0` refused throughout when `blocked`. */
async function otherKeysLatency(bench: Bench, blocked: boolean) {
  const refuseKey0: ReceiverScript = (_, request) =>
    (JSON.parse(request.body) as { partitionkey: string }).partitionkey === 'key-0'
      ? { respond: 500 }
      : { respond: 204 };
  const { receiver, type } = await subscribe(bench, true, blocked ? refuseKey0 : undefined);
  const acceptedAt = new Map<string, number>();
  let others = 0;
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const key = `key-${i % LATENCY_KEYS}`;
    const id = randomUUID();
    const event = { specversion: '1.0', id, source: SOURCE, type, partitionkey: key, data: { i } };
    const { response } = await publishEvents(bench.publisher, event);
    if (response.status !== 202) throw new Error(`publish answered ${response.status}`);
    acceptedAt.set(id, Date.now());
    if (key !== 'key-0') others++;
    await sleep(LATENCY_SPACING_MS);
  }
  const otherRequests = () =>
    receiver.requests.filter((r) => (JSON.parse(r.body) as { partitionkey: string }).partitionkey !== 'key-0');
  await until(
    () => otherRequests().length >= others,
    300_000,
    () => `${otherRequests().length} of ${others} other keys' events delivered`,
  );
  const latencies = otherRequests()
    .map((r) => r.receivedAt - acceptedAt.get((JSON.parse(r.body) as { id: string }).id)!)
    .sort((a, b) => a - b);
  const key0Attempts = receiver.requests.length - otherRequests().length;
  return {
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1)!,
    samples: latencies.length,
    key0Attempts,
  };
}

/**
 * A warm-up round of each side (2 events per key, not counted), then ROUNDS rounds of each in turns
 * U O O U …, so that whatever happens at one moment of the run falls on both sides alike.
 */
async function inTurns<T>(round: (ordered: boolean, eventsPerKey?: number) => Promise<T>): Promise<T[]> {
  await round(false, 2);
  await round(true, 2);
  const rounds: T[] = [];
  for (let r = 0; r < ROUNDS; r++)
    for (const ordered of r % 2 === 0 ? [false, true] : [true, false]) rounds.push(await round(ordered));
  return rounds;
}

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = Number(loadavg()[0]!.toFixed(2));
  const authority = createLocalCertificateAuthority();
  const benchHost = await startBenchHost('ordered', {
    prepare: async (dir) => {
      await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
      return { [settingEnv.outboundCaFile]: join(dir, 'ca.pem') };
    },
    settings: {
      [settingEnv.validationAgreedClients]: 'dev-subscriber',
      [settingEnv.publishRatePerMinute]: '1000000',
      [settingEnv.deliveryRetryInitialSeconds]: '1',
      [settingEnv.deliveryRetryMaxDelaySeconds]: '2',
      [settingEnv.deliveryBreakerFailures]: '1000',
    },
  });
  const { host } = benchHost;
  const bench: Bench = {
    host,
    authority,
    receivers: [],
    dynamodb: countRequests(host.awsClients.dynamodb),
    sqs: countRequests(host.awsClients.sqs),
    manager: await host.issueToken('dev-subscriber', ['subscriptions:manage', 'events:consume']),
    publisher: apiAs(host.apiUrl, await host.issueToken('dev-publisher', ['events:publish']), { retries: 0 }),
  };
  try {
    const rounds = await inTurns((ordered, eventsPerKey) => throughputRound(bench, ordered, eventsPerKey));
    const best = (side: string, field: 'endToEndPerSecond' | 'drainPerSecond') =>
      Math.max(...rounds.filter((r) => r.side === side).map((r) => r[field]));
    const pullRounds = await inTurns((ordered, eventsPerKey) => pullThroughputRound(bench, ordered, eventsPerKey));
    const bestPull = (side: string) =>
      Math.max(...pullRounds.filter((r) => r.side === side).map((r) => r.endToEndPerSecond));
    const pullRatio = Number((bestPull('ordered') / bestPull('unordered')).toFixed(2));
    const latency = { unblocked: [] as unknown[], blocked: [] as unknown[] };
    const p99s = { unblocked: [] as number[], blocked: [] as number[] };
    for (const blocked of [false, true, true, false]) {
      const measured = await otherKeysLatency(bench, blocked);
      (blocked ? latency.blocked : latency.unblocked).push(measured);
      (blocked ? p99s.blocked : p99s.unblocked).push(measured.p99Ms);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const throughputRatio = Number(
      (best('ordered', 'endToEndPerSecond') / best('unordered', 'endToEndPerSecond')).toFixed(2),
    );
    const drainRatio = Number((best('ordered', 'drainPerSecond') / best('unordered', 'drainPerSecond')).toFixed(2));
    const p99Ratio = Number((mean(p99s.blocked) / mean(p99s.unblocked)).toFixed(2));
    return {
      loadAtStart,
      loadAtEnd: Number(loadavg()[0]!.toFixed(2)),
      settlingWindowMs: Number(process.env[settingEnv.orderingSettlingMs] ?? 1000),
      throughput: {
        keys: KEYS,
        eventsPerKey: EVENTS_PER_KEY,
        eventsPerRequest: KEYS / PUBLISH_CONNECTIONS,
        publishConnections: PUBLISH_CONNECTIONS,
        rounds,
        best: {
          unordered: {
            endToEndPerSecond: best('unordered', 'endToEndPerSecond'),
            drainPerSecond: best('unordered', 'drainPerSecond'),
          },
          ordered: {
            endToEndPerSecond: best('ordered', 'endToEndPerSecond'),
            drainPerSecond: best('ordered', 'drainPerSecond'),
          },
        },
        ratio: { endToEnd: throughputRatio, drain: drainRatio },
        // What the emulators answer per event, the sides' mean over their rounds, and unordered
        // over ordered: the throughput ratio the request counts alone would allow.
        requestsPerEvent: requestsRatio(rounds),
        goal: GOAL.throughputRatio,
        met: throughputRatio >= GOAL.throughputRatio,
      },
      pullThroughput: {
        keys: KEYS,
        eventsPerKey: EVENTS_PER_KEY,
        consumers: PULL_CONSUMERS,
        maxEventsPerReceive: PULL_MAX_EVENTS,
        rounds: pullRounds,
        best: { unordered: bestPull('unordered'), ordered: bestPull('ordered') },
        ratio: pullRatio,
        requestsPerEvent: requestsRatio(pullRounds),
        goal: GOAL.throughputRatio,
        met: pullRatio >= GOAL.throughputRatio,
      },
      otherKeysWhileOneBlocked: {
        keys: LATENCY_KEYS,
        events: LATENCY_EVENTS,
        spacingMs: LATENCY_SPACING_MS,
        order: 'unblocked, blocked, blocked, unblocked',
        ...latency,
        p99Ratio,
        goal: GOAL.otherKeysP99Ratio,
        met: p99Ratio <= GOAL.otherKeysP99Ratio,
      },
    };
  } finally {
    await Promise.all(bench.receivers.map((r) => r.close()));
    await benchHost.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await run(), null, 2));
