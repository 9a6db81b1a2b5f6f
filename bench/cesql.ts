/**
 * CESQL filters (issue 32 item 6): what compiling and evaluating an expression costs, and whether
 * `sql` subscriptions keep routing indexed.
 *
 * - compile: parse + compile p50/p99 per expression, over the TCK's expressions when
 *   ../shared/testdata/cesql-tck (or KOERIER_CESQL_TCK) is there, and over Koerier's own examples.
 * - evaluate: p50/p99 per event of a realistic filter (the example) over 100,000 events,
 *   each timed on its own; the timer's own cost, measured the same way, is reported beside it.
 *   Goal: ≤ 5 µs p99.
 * - router: DynamoDB requests (and items read) per event with 10,000 subscriptions, once with
 *   today's `types` + `exact` filters and once with `sql` expressions that pin the same type, on
 *   dynalite, the router's matcher reading a batch's keys together (cold: a fresh matcher per
 *   batch of 10). Goal: unchanged.
 * Run: `npm run bench -- cesql`, or `npx tsx bench/cesql.ts`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbRouteIndex } from '../functions/aws/dynamodb-route-index.js';
import { localName } from '../functions/config/resources.js';
import { compileCesql } from '../functions/core/cesql/index.js';
import { SubscriptionMatcher, type RouteCandidate } from '../functions/core/routing/matcher.js';
import { routeEntriesOf, type RouteEntry, type SubscriptionMatch } from '../functions/core/routing/route-keys.js';
import { startEmulators } from '../local/emulators.js';
import { countRequests } from '../test/support/request-counter.js';
import { cesqlTckAvailable, cesqlTckCases } from '../test/support/cesql-tck.js';

const EXAMPLE =
  "type LIKE 'nl.edu.leerling.%' AND subject <> 'test' AND (EXISTS schoolcode AND schoolcode IN ('12AB', '34CD'))";
const OWN_EXPRESSIONS = [
  EXAMPLE,
  "type = 'nl.overheid.zaken.zaak.aangemaakt.v1' AND source LIKE 'urn:nld:oin:%'",
  "type IN ('nl.edu.leerling.ingeschreven.v1', 'nl.edu.leerling.uitgeschreven.v1') AND NOT (subject LIKE '%/test')",
  "(type LIKE 'nl.overheid.%' OR type LIKE 'nl.edu.%') AND INT(leerjaar) >= 3 AND LENGTH(TRIM(subject)) > 0",
  "CONCAT_WS('/', LOWER(schoolcode), SUBSTRING(subject, 1, 8)) LIKE '12ab/leerling%'",
];
const TYPES = [
  'nl.edu.leerling.ingeschreven.v1',
  'nl.edu.leerling.uitgeschreven.v1',
  'nl.edu.cijfer.gegeven.v1',
  'nl.edu.rooster.gewijzigd.v1',
  'nl.overheid.zaken.zaak.aangemaakt.v1',
];
const SUBSCRIPTIONS = 10_000;
const EVENTS = 200;
const BATCH = 10;

function percentiles(samples: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.at(-1)!) };
}

function microseconds(work: () => unknown): number {
  const started = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - started) / 1000;
}

function compileCosts(expressions: readonly string[], rounds: number) {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++)
    for (const text of expressions)
      samples.push(
        microseconds(() => {
          try {
            compileCesql(text);
          } catch {
            // The TCK's parse-error cases cost their refusal.
          }
        }),
      );
  return { expressions: expressions.length, rounds, microseconds: percentiles(samples.slice(expressions.length)) };
}

function evaluationCost() {
  const filter = compileCesql(EXAMPLE);
  const events = Array.from({ length: 1_000 }, (_, i) => ({
    specversion: '1.0',
    id: `e-${i}`,
    source: 'urn:nld:oin:00000001234567890000:systeem:las',
    type: TYPES[i % TYPES.length]!,
    subject: i % 7 === 0 ? 'test' : `leerling/${i}`,
    ...(i % 3 === 0 ? {} : { schoolcode: ['12AB', '34CD', '56EF'][i % 3]! }),
    leerjaar: i % 6,
  }));
  const timer: number[] = [];
  const samples: number[] = [];
  let matched = 0;
  for (let i = 0; i < 100_000; i++) {
    const event = events[i % events.length]!;
    timer.push(microseconds(() => undefined));
    samples.push(microseconds(() => filter.matches(event) && matched++));
  }
  return {
    expression: EXAMPLE,
    events: samples.length,
    matchedShare: round(matched / samples.length),
    microsecondsPerEvent: percentiles(samples.slice(10_000)),
    timerOverheadMicroseconds: percentiles(timer.slice(10_000)),
    goal: '≤ 5 µs p99 per event',
  };
}

/** One subscription per person: today's `types` + `exact`, or the same condition written in CESQL. */
function personMatch(person: number, dialect: 'exact' | 'sql'): SubscriptionMatch {
  const type = TYPES[person % TYPES.length]!;
  return dialect === 'exact'
    ? { types: [type], filters: [{ exact: { subject: `leerling/${person}` } }] }
    : { filters: [{ sql: `type = '${type}' AND subject = 'leerling/${person}' AND NOT EXISTS test` }] };
}

async function routerRequests(dialect: 'exact' | 'sql') {
  const emulators = await startEmulators();
  const dynamodb = new DynamoDBClient({
    region: emulators.region,
    endpoint: emulators.endpoints.dynamodb,
    credentials: {
      accessKeyId: emulators.awsEnvironment['AWS_ACCESS_KEY_ID']!,
      secretAccessKey: emulators.awsEnvironment['AWS_SECRET_ACCESS_KEY']!,
    },
  });
  try {
    const index = new DynamoDbRouteIndex(dynamodb, localName.table('routes'));
    const requests = countRequests(dynamodb);
    const work: { subscription: RouteCandidate; entries: RouteEntry[] }[] = [];
    for (let person = 0; person < SUBSCRIPTIONS; person++) {
      const match = personMatch(person, dialect);
      work.push({
        subscription: {
          subscriptionId: `person-${person}`,
          owner: 'bench',
          match,
          contentMode: 'structured',
          batchSupported: false,
          delivery: 'push',
        },
        entries: routeEntriesOf(match),
      });
    }
    const shapes = new Set(work.flatMap((w) => w.entries.map((entry) => entry.shape)));
    for (let next = 0; next < work.length; next += 250) await index.importEntries(work.slice(next, next + 250));
    await index.bumpGeneration();
    const events = Array.from({ length: EVENTS }, (_, i) => {
      const person = (42 + i * 7919) % SUBSCRIPTIONS;
      return {
        specversion: '1.0',
        id: `bench-${i}`,
        source: 'urn:nld:oin:00000001000000000001:systeem:lvs',
        type: TYPES[person % TYPES.length]!,
        subject: `leerling/${person}`,
      };
    });
    const route = async () => {
      requests.reset();
      let matches = 0;
      const started = process.hrtime.bigint();
      for (let start = 0; start < events.length; start += BATCH) {
        const matcher = new SubscriptionMatcher(index);
        await matcher.refresh();
        const batch = events.slice(start, start + BATCH);
        await matcher.prefetch(batch);
        for (const found of await Promise.all(batch.map((event) => matcher.match(event)))) matches += found.length;
      }
      return {
        msPerEvent: round(Number(process.hrtime.bigint() - started) / 1e6 / events.length),
        dynamodbRequestsPerEvent: round(requests.total() / events.length),
        matchesPerEvent: round(matches / events.length),
      };
    };
    await route();
    return { dialect, subscriptions: SUBSCRIPTIONS, shapes: [...shapes], cold: await route() };
  } finally {
    dynamodb.destroy();
    await emulators.stop();
  }
}

export async function run(): Promise<Record<string, unknown>> {
  const tck = cesqlTckCases().map((c) => c.expression);
  const compile = {
    tck: cesqlTckAvailable ? compileCosts(tck, 200) : 'skipped: the TCK is not at ../shared/testdata/cesql-tck',
    own: compileCosts(OWN_EXPRESSIONS, 2_000),
  };
  const evaluate = evaluationCost();
  const exact = await routerRequests('exact');
  const sql = await routerRequests('sql');
  return {
    description:
      'CESQL (issue 32): parse+compile per expression; evaluation per event of the issue example; router DynamoDB requests per event with 10,000 subscriptions pinning a type, exact vs sql',
    compile,
    evaluate,
    router: { exact, sql, goal: 'DynamoDB requests per event unchanged from exact to sql' },
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await run(), null, 2));
}
