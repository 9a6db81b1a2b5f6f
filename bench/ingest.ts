/**
 * Ingest on the laptop host: throughput and latency of POST /events (token check, Idempotency-Key
 * guard, parse and validate, SQS write) next to floors made of the very same AWS calls without
 * Koerier around them, measured in the same run against the same emulators. Also counts the AWS
 * requests each accepted event costs, single and in batches, with SDK middleware on the clients the
 * handler really uses.
 *
 * The emulators set the ceiling on a laptop (dynalite and local-aws-sqs are single-threaded
 * JavaScript), so the figures that carry over to AWS are the ratios and the call counts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import os from 'node:os';
import { join } from 'node:path';
import { PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { Agent, request } from 'undici';
import { settingsFromEnvironment, startKoerierHost } from '../local/host.js';

const SINGLE_EVENTS = 1500;
const BATCH_REQUESTS = 150;
const BATCH_SIZE = 10;
const CONCURRENCY = 16;
/** What the claim holds for one accepted event: the 202's body, about this long. */
const ACCEPTED_BODY = JSON.stringify({ acceptedCount: 1, accepted: [{ source: 'urn:nld:oin:00000001823288444000:systeem:lvs', id: randomUUID() }] });

interface Figures {
  readonly operations: number;
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

type Service = 'dynamodb' | 'sqs';

/** Requests per service and operation (e.g. `PutItem`) since the last `resetCalls`, counted below the retry middleware. */
const calls: Record<Service, Record<string, number>> = { dynamodb: {}, sqs: {} };

function resetCalls(): void {
  calls.dynamodb = {};
  calls.sqs = {};
}

function countRequests(client: { middlewareStack: { add: (mw: never, opts: never) => void } }, service: Service): void {
  const middleware = (next: (args: unknown) => Promise<unknown>, context: { commandName?: string }) => (args: unknown) => {
    const operation = (context.commandName ?? 'unknown').replace(/Command$/, '');
    calls[service][operation] = (calls[service][operation] ?? 0) + 1;
    return next(args);
  };
  client.middlewareStack.add(middleware as never, { step: 'deserialize', name: `count-${service}` } as never);
}

const round = (n: number) => Number(n.toFixed(4));

/**
 * The requests per event of the last stage: per service (`awsRequestsPerAcceptedEvent`, the field
 * earlier results have) and per `service:Operation` (`awsRequestsPerAcceptedEventByOperation`),
 * for the cost model.
 */
function perEvent(events: number) {
  const total = (service: Service) => Object.values(calls[service]).reduce((a, b) => a + b, 0);
  const byOperation: Record<string, number> = {};
  for (const service of ['dynamodb', 'sqs'] as const) {
    for (const [operation, count] of Object.entries(calls[service])) byOperation[`${service}:${operation}`] = round(count / events);
  }
  return {
    awsRequestsPerAcceptedEvent: {
      dynamodb: round(total('dynamodb') / events),
      sqs: round(total('sqs') / events),
      total: round((total('dynamodb') + total('sqs')) / events),
    },
    awsRequestsPerAcceptedEventByOperation: byOperation,
  };
}

async function measure(operations: number, eventsPerOperation: number, operation: (index: number) => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < operations) {
        const index = next++;
        const t0 = performance.now();
        await operation(index);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2));
  return {
    operations,
    events: operations * eventsPerOperation,
    seconds: Number(seconds.toFixed(2)),
    eventsPerSecond: Math.round((operations * eventsPerOperation) / seconds),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}

function sampleEvent() {
  return {
    specversion: '1.0',
    id: randomUUID(),
    source: 'urn:nld:oin:00000001823288444000:systeem:lvs',
    type: 'nl.edu.leerling.ingeschreven',
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { leerling: 'L-42', school: '12AB', naam: 'Jan Jansen', klas: '3b' },
  };
}

export async function run(): Promise<Record<string, unknown>> {
  const stateDir = await mkdtemp(join(tmpdir(), 'koerier-bench-ingest-'));
  // Queue consumers stay off: the benchmark measures the ingest, not the router competing for the cores.
  const host = await startKoerierHost({
    port: 0,
    stateDir,
    configFile: join(stateDir, 'koerier.local.json'),
    log: () => {},
    queueTriggers: false,
    settings: settingsFromEnvironment(process.env),
  });
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 30_000 });
  try {
    const token = await host.issueToken('dev-publisher');
    const inboundUrl = host.config.resources.queueUrl('inbound');
    const idempotencyTable = host.config.resources.table('idempotency');
    countRequests(host.awsClients.sqs, 'sqs');
    countRequests(host.awsClients.dynamodb, 'dynamodb');

    const post = async (body: string, contentType: string) => {
      const response = await request(`${host.apiUrl}/events`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': contentType },
        body,
      });
      await response.body.text();
      if (response.statusCode !== 202) throw new Error(`ingest answered ${response.statusCode}`);
    };

    // Warm-up: JIT, connections, the JWKS fetch.
    await measure(100, 1, () => post(JSON.stringify(sampleEvent()), 'application/cloudevents+json'));

    const floorSqsOnly = await measure(SINGLE_EVENTS, 1, async () => {
      await host.awsClients.sqs.send(new SendMessageCommand({ QueueUrl: inboundUrl, MessageBody: JSON.stringify(sampleEvent()) }));
    });
    // The calls Koerier makes now per accepted single event: the claim, which holds the 202, and the
    // queue write, which completes it (the publish window's leases add about 0.01; see the counts).
    const floorSameCalls = await measure(SINGLE_EVENTS, 1, async () => {
      await host.awsClients.dynamodb.send(
        new PutItemCommand({
          TableName: idempotencyTable,
          Item: { pk: { S: `bench#${randomUUID()}` }, state: { S: 'in-progress' }, responseStatus: { N: '202' }, responseBody: { S: ACCEPTED_BODY } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      await host.awsClients.sqs.send(new SendMessageCommand({ QueueUrl: inboundUrl, MessageBody: JSON.stringify(sampleEvent()) }));
    });
    // The calls the ingest made before issue 15: the window, the claim, the queue write, the completion.
    const floorPreviousDesign = await measure(SINGLE_EVENTS, 1, async () => {
      const pk = `bench#${randomUUID()}`;
      await host.awsClients.dynamodb.send(
        new UpdateItemCommand({
          TableName: idempotencyTable,
          Key: { pk: { S: `bench-rate#${Math.floor(Date.now() / 60_000)}` } },
          UpdateExpression: 'ADD #n :one',
          ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit',
          ExpressionAttributeNames: { '#n': 'requests' },
          ExpressionAttributeValues: { ':one': { N: '1' }, ':limit': { N: '1000000' } },
        }),
      );
      await host.awsClients.dynamodb.send(
        new PutItemCommand({
          TableName: idempotencyTable,
          Item: { pk: { S: pk }, state: { S: 'in-progress' } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      await host.awsClients.sqs.send(new SendMessageCommand({ QueueUrl: inboundUrl, MessageBody: JSON.stringify(sampleEvent()) }));
      await host.awsClients.dynamodb.send(
        new UpdateItemCommand({
          TableName: idempotencyTable,
          Key: { pk: { S: pk } },
          UpdateExpression: 'SET #s = :done',
          ExpressionAttributeNames: { '#s': 'state' },
          ExpressionAttributeValues: { ':done': { S: 'completed' } },
        }),
      );
    });

    resetCalls();
    const koerierSingle = await measure(SINGLE_EVENTS, 1, () => post(JSON.stringify(sampleEvent()), 'application/cloudevents+json'));
    const singleCalls = perEvent(SINGLE_EVENTS);

    const floorBatch = await measure(BATCH_REQUESTS, BATCH_SIZE, async () => {
      await host.awsClients.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: inboundUrl,
          Entries: Array.from({ length: BATCH_SIZE }, (_, i) => ({ Id: String(i), MessageBody: JSON.stringify(sampleEvent()) })),
        }),
      );
    });
    resetCalls();
    const koerierBatch = await measure(BATCH_REQUESTS, BATCH_SIZE, () =>
      post(JSON.stringify(Array.from({ length: BATCH_SIZE }, sampleEvent)), 'application/cloudevents-batch+json'),
    );
    const batchCalls = perEvent(BATCH_REQUESTS * BATCH_SIZE);

    return {
      description:
        'POST /events on the laptop host (HTTP, JWT verification, Idempotency-Key in DynamoDB, validation, SQS) against floors of the same AWS calls without Koerier, same emulators, same concurrency.',
      concurrency: CONCURRENCY,
      loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
      single: {
        koerier: koerierSingle,
        floorSqsSendOnly: floorSqsOnly,
        floorSameAwsCalls: floorSameCalls,
        floorPreviousDesignCalls: floorPreviousDesign,
        ratioToSqsFloor: Number((koerierSingle.eventsPerSecond / floorSqsOnly.eventsPerSecond).toFixed(2)),
        ratioToSameCallsFloor: Number((koerierSingle.eventsPerSecond / floorSameCalls.eventsPerSecond).toFixed(2)),
        ratioToPreviousDesignFloor: Number((koerierSingle.eventsPerSecond / floorPreviousDesign.eventsPerSecond).toFixed(2)),
        ...singleCalls,
        previousDesignAwsRequestsPerAcceptedEvent: { dynamodb: 3, sqs: 1, total: 4 },
      },
      batchOf10: {
        koerier: koerierBatch,
        floorSqsSendBatchOnly: floorBatch,
        ratioToFloor: Number((koerierBatch.eventsPerSecond / floorBatch.eventsPerSecond).toFixed(2)),
        ...batchCalls,
        previousDesignAwsRequestsPerAcceptedEvent: { dynamodb: 0.3, sqs: 0.1, total: 0.4 },
      },
    };
  } finally {
    await agent.close();
    await host.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await run(), null, 2));
}
