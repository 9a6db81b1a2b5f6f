/**
 * What the idempotency guard costs on DynamoDB (dynalite, in memory): requests per guarded request
 * counted by an SDK middleware (not estimated), and throughput of the guard's accepted path
 * (claim + complete) and replay path next to a floor measured in the same run: bare conditional
 * PutItem calls, the cheapest write that can hold a key at all. `process` is a no-op answering 202,
 * so only the guard is measured. Run: `npx tsx bench/idempotency.ts`.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDbIdempotencyStore } from '../functions/aws/dynamodb-idempotency-store.js';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { jsonResponse, type HttpRequest } from '../functions/core/http/messages.js';
import { withIdempotency, type IdempotencyContext } from '../functions/core/idempotency/index.js';
import { resourceEnv } from '../functions/config/resources.js';
import { startEmulators } from '../local/emulators.js';
import { countRequests } from '../test/support/request-counter.js';

const CONCURRENCY = 8;
const WARMUP_MS = 1500;
const ROUND_MS = 2000;
const ROUNDS = 3;
const REPLAY_KEYS = 200;

const EVENT = JSON.stringify({
  specversion: '1.0',
  id: 'f3dce042-cd6e-4977-844d-000000000001',
  source: 'urn:nld:oin:00000001823288444000:systeem:BRP-component',
  type: 'nl.overheid.zaken.zaakstatus-gewijzigd',
  datacontenttype: 'application/json',
  data: { zaak: 'ZAAK-1', status: 'afgehandeld' },
});

function request(key: string): HttpRequest {
  return {
    method: 'POST',
    path: '/events',
    headers: { 'content-type': 'application/cloudevents+json', 'idempotency-key': key },
    query: {},
    routeKey: 'POST /events',
    pathParameters: {},
    body: Buffer.from(EVENT),
  };
}

/** Operations per second with CONCURRENCY operations in flight, for at least `ms`. */
async function throughput(
  operation: (i: number) => Promise<unknown>,
  ms: number,
): Promise<{ perSecond: number; operations: number }> {
  let operations = 0;
  const started = performance.now();
  const until = started + ms;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) await operation(operations++);
    }),
  );
  return { perSecond: operations / ((performance.now() - started) / 1000), operations };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function run(): Promise<Record<string, unknown>> {
  const emulators = await startEmulators();
  const dynamodb = new DynamoDBClient(emulators.clientSettings('dynamodb'));
  try {
    const requests = countRequests(dynamodb);
    const tableName = emulators.resourceEnvironment[resourceEnv.table('idempotency')]!;
    const ctx: IdempotencyContext = {
      clientId: 'bench-publisher',
      operation: 'POST /events',
      store: new DynamoDbIdempotencyStore(dynamodb, tableName),
      ttlSeconds: 7 * 24 * 3600,
      lockSeconds: 60,
    };
    const accept = async () => jsonResponse(202, { accepted: [{ source: 'urn:nld:oin:1', id: '1' }] });

    const floor = () =>
      dynamodb.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { pk: { S: `floor#${randomUUID()}` }, expiresAt: { N: '0' } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    const accepted = async () => {
      const response = await withIdempotency(request(randomUUID()), ctx, accept);
      if (response.status !== 202 || response.headers['idempotent-replayed'])
        throw new Error(`expected a fresh 202, got ${response.status}`);
    };
    const replayKeys = Array.from({ length: REPLAY_KEYS }, () => randomUUID());
    for (const key of replayKeys) await withIdempotency(request(key), ctx, accept);
    const replay = async (i: number) => {
      const response = await withIdempotency(request(replayKeys[i % REPLAY_KEYS]!), ctx, accept);
      if (response.headers['idempotent-replayed'] !== 'true')
        throw new Error(`expected a replay, got ${response.status}`);
    };

    // Requests per outcome, counted on single calls.
    const countOf = async (operation: () => Promise<unknown>) => {
      requests.reset();
      await operation();
      return { total: requests.total(), byOperation: { ...requests.byOperation } };
    };
    const perAccepted = await countOf(accepted);
    const perReplay = await countOf(() => replay(0));
    const perServerError = await countOf(() =>
      withIdempotency(request(randomUUID()), ctx, async () => jsonResponse(503, {})),
    );

    await throughput(floor, WARMUP_MS);
    await throughput(accepted, WARMUP_MS);
    const rounds = { floor: [] as number[], accepted: [] as number[], replay: [] as number[] };
    let acceptedOperations = 0;
    let acceptedRequests = 0;
    // Alternate, so drift in machine load hits all three alike.
    for (let round = 0; round < ROUNDS; round++) {
      rounds.floor.push((await throughput(floor, ROUND_MS)).perSecond);
      requests.reset();
      const a = await throughput(accepted, ROUND_MS);
      acceptedOperations += a.operations;
      acceptedRequests += requests.total();
      rounds.accepted.push(a.perSecond);
      rounds.replay.push((await throughput(replay, ROUND_MS)).perSecond);
    }
    const floorPerSecond = Math.round(median(rounds.floor));
    const acceptedPerSecond = Math.round(median(rounds.accepted));
    const replayPerSecond = Math.round(median(rounds.replay));
    return {
      description:
        'withIdempotency on dynalite (in memory): DynamoDB requests per outcome and guarded requests/s, next to bare conditional PutItem calls/s in the same run',
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      dynamodbRequests: {
        perAcceptedRequest: perAccepted,
        perAcceptedRequestUnderLoad: Number((acceptedRequests / acceptedOperations).toFixed(3)),
        perReplay: perReplay,
        perReplayOnAws: { total: 1, byOperation: { PutItemCommand: 1 }, measured: false },
        perServerErrorAnswer: perServerError,
        perBatchRequest:
          'the same as a single request: one key guards the whole batch, so per event it is 2 / batch size',
        note: 'dynalite ignores ReturnValuesOnConditionCheckFailure, so a replay there needs a GetItem after the failed claim; AWS returns the item with the ConditionalCheckFailedException, so a replay costs the one PutItem.',
      },
      guardedAcceptedPerSecond: acceptedPerSecond,
      guardedReplayPerSecond: replayPerSecond,
      baselineConditionalPutsPerSecond: floorPerSecond,
      baseline: 'bare PutItem with attribute_not_exists(pk), one request per operation',
      ratioAcceptedToFloor: Number((acceptedPerSecond / floorPerSecond).toFixed(2)),
      ratioReplayToFloor: Number((replayPerSecond / floorPerSecond).toFixed(2)),
      note: 'An accepted request makes two sequential DynamoDB round trips, so about half the floor is the best it can do; in AWS the cost is latency (two single-digit-ms round trips) rather than throughput.',
    };
  } finally {
    dynamodb.destroy();
    await emulators.stop();
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await run(), null, 2));
}
