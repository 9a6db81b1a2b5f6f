/**
 * Router matching cost per event as the number of stored subscriptions grows (dynalite, in
 * memory): time and DynamoDB requests/items per event with 1,000, 10,000 and 100,000 subscriptions
 * in the route index, and 1,000,000 when loading them is estimated to take under five minutes.
 *
 * The store is shaped after the Edukoppeling case of one subscription per person (seed 003, 3.3):
 * all but a fixed 40 subscriptions are per person (`types` + `exact subject`), and the fixed 40
 * are broad ones (by type, by type prefix, by source, and a few the index cannot narrow and keeps
 * under the catch-all key). Each event is of a person who has a subscription, so the number of
 * matches per event is the same at every size: what may grow is only the work to find them.
 *
 * Measured cold: every batch of 10 events gets a fresh matcher (as a new container would), so
 * each event pays its own lookups; the warm figure reuses one matcher across batches, as a busy
 * container does while no subscription changes. Both read a batch's keys together, as the router
 * does (`prefetch`: the keys' heads in one BatchGetItem); `perKey` is the same cold run reading one
 * key at a time (one Query per key, the router before heads). The baseline, measured in the same
 * run, is a full scan of the index at the smallest sizes — what matching would cost without it.
 * Run: `npx tsx bench/router.ts`, or `npm run bench -- router`. While working,
 * `KOERIER_BENCH_ROUTER_SIZES=1000,10000` measures only those sizes (and never the million).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { observeCalls } from '../functions/aws/aws-request-observer.js';
import { DynamoDbRouteIndex } from '../functions/aws/dynamodb-route-index.js';
import { SubscriptionMatcher, type RouteCandidate } from '../functions/core/routing/matcher.js';
import { routeEntriesOf, subscriptionMatches, type SubscriptionMatch } from '../functions/core/routing/route-keys.js';
import type { RouteEntry } from '../functions/core/routing/route-keys.js';
import { localName } from '../functions/config/resources.js';
import { startEmulators } from '../local/emulators.js';
import { countRequests } from '../test/support/request-counter.js';

const SIZES = sizesFromEnvironment() ?? [1_000, 10_000, 100_000];
const ONLY_LISTED_SIZES = sizesFromEnvironment() !== undefined;
const MILLION = 1_000_000;
/** Loading writes a head per route key besides the entries (importEntries): about twice the work of before heads. */
const LOAD_BUDGET_MS = 45 * 60 * 1000;
const EVENTS = 200;
const BATCH = 10;
const LOAD_CONCURRENCY = 8;
const LOAD_CHUNK = 250;
const SCAN_BASELINE_EVENTS = 5;

const TYPES = [
  'nl.edu.leerling.ingeschreven.v1',
  'nl.edu.leerling.uitgeschreven.v1',
  'nl.edu.cijfer.gegeven.v1',
  'nl.edu.rooster.gewijzigd.v1',
  'nl.edu.absentie.gemeld.v1',
];
const SOURCES = ['urn:nld:oin:00000001000000000001:systeem:lvs', 'urn:nld:oin:00000001000000000002:systeem:lvs'];

/** The 40 broad subscriptions present at every size. */
function broadSubscriptions(): SubscriptionMatch[] {
  const broad: SubscriptionMatch[] = [];
  for (const type of TYPES) broad.push({ types: [type] }, { types: [type] }, { types: [type], source: SOURCES[0]! });
  for (let i = 0; i < 10; i++)
    broad.push({ filters: [{ prefix: { type: i % 2 === 0 ? 'nl.edu.leerling.' : 'nl.edu.' } }] });
  for (let i = 0; i < 10; i++) broad.push({ source: SOURCES[i % 2]!, filters: [{ prefix: { type: 'nl.edu.' } }] });
  for (let i = 0; i < 5; i++) broad.push({ filters: [{ suffix: { type: `.v${i + 1}` } }] });
  return broad;
}

function personSubscription(person: number): SubscriptionMatch {
  return { types: [TYPES[person % TYPES.length]!], filters: [{ exact: { subject: `leerling/${person}` } }] };
}

function indexed(id: string, match: SubscriptionMatch): { subscription: RouteCandidate; entries: RouteEntry[] } {
  return {
    subscription: {
      subscriptionId: id,
      owner: 'bench',
      match,
      contentMode: 'structured',
      batchSupported: false,
      delivery: 'push',
    },
    entries: routeEntriesOf(match),
  };
}

function eventFor(person: number, sequence: number): Record<string, string> {
  return {
    specversion: '1.0',
    id: `bench-${sequence}`,
    source: SOURCES[person % 2]!,
    type: TYPES[person % TYPES.length]!,
    subject: `leerling/${person}`,
  };
}

/**
 * `count` different persons spread over the whole population (a prime stride), the same way at
 * every size: no event finds its person's key already cached by an earlier event.
 */
function persons(count: number, population: number, offset: number): number[] {
  return Array.from({ length: count }, (_, i) => (offset + i * 7919) % population);
}

export async function run(): Promise<Record<string, unknown>> {
  const emulators = await startEmulators();
  const dynamodb = new DynamoDBClient({
    region: emulators.region,
    endpoint: emulators.endpoints.dynamodb,
    credentials: {
      accessKeyId: emulators.awsEnvironment['AWS_ACCESS_KEY_ID']!,
      secretAccessKey: emulators.awsEnvironment['AWS_SECRET_ACCESS_KEY']!,
    },
  });
  const tableName = localName.table('routes');
  const index = new DynamoDbRouteIndex(dynamodb, tableName);
  const requests = countRequests(dynamodb);
  let itemsRead = 0;
  observeCalls(dynamodb, {
    afterCall: (_, __, answer) => {
      const output = answer as { Count?: number; Responses?: Record<string, unknown[]> };
      if (typeof output.Count === 'number') itemsRead += output.Count;
      for (const items of Object.values(output.Responses ?? {})) itemsRead += items.length;
    },
  });

  const broad = broadSubscriptions();
  let loaded = 0;
  const load = async (target: number) => {
    const people = target - broad.length;
    const started = Date.now();
    const from = Math.max(0, loaded - broad.length);
    const work: { subscription: RouteCandidate; entries: RouteEntry[] }[] = [];
    if (loaded === 0) broad.forEach((match, i) => work.push(indexed(`broad-${i}`, match)));
    for (let person = from; person < people; person++)
      work.push(indexed(`person-${person}`, personSubscription(person)));
    let next = 0;
    await Promise.all(
      Array.from({ length: LOAD_CONCURRENCY }, async () => {
        while (next < work.length) {
          const chunk = work.slice(next, (next += LOAD_CHUNK));
          await index.importEntries(chunk);
        }
      }),
    );
    await index.bumpGeneration();
    loaded = target;
    return { added: work.length, ms: Date.now() - started };
  };

  const measure = async (population: number) => {
    const people = population - broad.length;
    const events = persons(EVENTS, people, 42).map((person, i) => eventFor(person, i));
    const expectedMatches = events.map(
      (event) => broad.filter((match) => subscriptionMatches(match, event)).length + 1,
    );

    const route = async (warm: boolean, together = true) => {
      let shared = new SubscriptionMatcher(index);
      requests.reset();
      itemsRead = 0;
      let matches = 0;
      const started = process.hrtime.bigint();
      for (let start = 0; start < events.length; start += BATCH) {
        if (!warm) shared = new SubscriptionMatcher(index);
        await shared.refresh();
        const batch = events.slice(start, start + BATCH);
        if (together) await shared.prefetch(batch);
        const found = await Promise.all(batch.map((event) => shared.match(event)));
        found.forEach((candidates, i) => {
          if (candidates.length !== expectedMatches[start + i])
            throw new Error(`event ${start + i}: ${candidates.length} matches, expected ${expectedMatches[start + i]}`);
          matches += candidates.length;
        });
      }
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      return {
        msPerEvent: round(ms / events.length),
        dynamodbRequestsPerEvent: round(requests.total() / events.length),
        itemsReadPerEvent: round(itemsRead / events.length),
        matchesPerEvent: round(matches / events.length),
      };
    };
    await route(false); // warm up the process, not the matcher
    return {
      subscriptions: population,
      cold: await route(false),
      warm: await route(true),
      perKey: { cold: await route(false, false), warm: await route(true, false) },
    };
  };

  const scanBaseline = async (population: number) => {
    const people = population - broad.length;
    const events = persons(SCAN_BASELINE_EVENTS, people, 7).map((person, i) => eventFor(person, i));
    requests.reset();
    itemsRead = 0;
    const started = process.hrtime.bigint();
    for (const event of events) {
      let startKey: Record<string, never> | undefined;
      do {
        const page = await dynamodb.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: startKey }));
        for (const item of page.Items ?? []) {
          if (item['match']?.S) subscriptionMatches(JSON.parse(item['match'].S) as SubscriptionMatch, event);
        }
        startKey = page.LastEvaluatedKey as Record<string, never> | undefined;
      } while (startKey);
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    return {
      subscriptions: population,
      msPerEvent: round(ms / events.length),
      dynamodbRequestsPerEvent: round(requests.total() / events.length),
      itemsReadPerEvent: round(itemsRead / events.length),
    };
  };

  try {
    const loads: Record<string, unknown>[] = [];
    const results: Awaited<ReturnType<typeof measure>>[] = [];
    const baseline: Awaited<ReturnType<typeof scanBaseline>>[] = [];
    for (const size of SIZES) {
      loads.push({ subscriptions: size, ...(await load(size)) });
      results.push(await measure(size));
      if (size <= 10_000) baseline.push(await scanBaseline(size));
    }
    // Time per added subscription at the largest load, times what a million would still need.
    const last = loads.at(-1) as { added: number; ms: number };
    const millionEstimateMs = Math.round((last.ms / last.added) * (MILLION - SIZES.at(-1)!));
    let million: string;
    if (ONLY_LISTED_SIZES) {
      million = 'skipped: KOERIER_BENCH_ROUTER_SIZES lists the sizes';
    } else if (millionEstimateMs < LOAD_BUDGET_MS) {
      loads.push({ subscriptions: MILLION, ...(await load(MILLION)) });
      results.push(await measure(MILLION));
      million = 'measured';
    } else {
      million = `skipped: loading the remaining 900,000 into dynalite would take about ${Math.round(millionEstimateMs / 1000)} s (budget ${LOAD_BUDGET_MS / 1000} s)`;
    }

    const smallest = results[0]!;
    const largest = results.at(-1)!;
    return {
      description:
        'Route index matching per event on dynalite (in memory), with 40 broad subscriptions plus per-person subscriptions filling the store; ' +
        'cold = a fresh matcher per batch of 10 events (index state read once per batch), warm = one matcher across batches; ' +
        "both read the batch's route keys together (heads, BatchGetItem); perKey = the same with one Query per route key",
      events: EVENTS,
      batchSize: BATCH,
      loads,
      results,
      baseline: { what: 'full scan of the route index per event, the cost without the index', results: baseline },
      ratioLargestToSmallest: {
        subscriptions: `${largest.subscriptions} / ${smallest.subscriptions}`,
        coldMsPerEvent: round(largest.cold.msPerEvent / smallest.cold.msPerEvent),
        coldDynamodbRequestsPerEvent: round(
          largest.cold.dynamodbRequestsPerEvent / smallest.cold.dynamodbRequestsPerEvent,
        ),
        coldItemsReadPerEvent: round(largest.cold.itemsReadPerEvent / smallest.cold.itemsReadPerEvent),
        warmMsPerEvent: round(largest.warm.msPerEvent / smallest.warm.msPerEvent),
      },
      goal: 'per-event cost within 2x from the smallest to the largest store; DynamoDB requests per event ≤ 2 cold, ≤ 1 warm (issue 15)',
      million,
    };
  } finally {
    dynamodb.destroy();
    await emulators.stop();
  }
}

function sizesFromEnvironment(): number[] | undefined {
  const listed = process.env['KOERIER_BENCH_ROUTER_SIZES'];
  return listed
    ? listed
        .split(',')
        .map(Number)
        .filter((size) => Number.isInteger(size) && size > 40)
    : undefined;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await run(), null, 2));
}
