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
import { join } from 'node:path';
import { PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { Agent, request } from 'undici';
import { settingsFromEnvironment, startKoerierHost } from '../local/host.js';

const SINGLE_EVENTS = 1500;
const BATCH_REQUESTS = 150;
const BATCH_SIZE = 10;
const CONCURRENCY = 16;

interface Figures {
  readonly operations: number;
  readonly events: number;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

const calls = { dynamodb: 0, sqs: 0 };

function countRequests(client: { middlewareStack: { add: (mw: never, opts: never) => void } }, counter: keyof typeof calls): void {
  const middleware = (next: (args: unknown) => Promise<unknown>) => (args: unknown) => {
    calls[counter]++;
    return next(args);
  };
  client.middlewareStack.add(middleware as never, { step: 'initialize', name: `count-${counter}` } as never);
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
    const floorSameCalls = await measure(SINGLE_EVENTS, 1, async () => {
      const pk = `bench#${randomUUID()}`;
      // The publisher's rate window, the idempotency claim, the queue write, the completion.
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

    calls.dynamodb = 0;
    calls.sqs = 0;
    const koerierSingle = await measure(SINGLE_EVENTS, 1, () => post(JSON.stringify(sampleEvent()), 'application/cloudevents+json'));
    const singleCalls = { dynamodb: calls.dynamodb / SINGLE_EVENTS, sqs: calls.sqs / SINGLE_EVENTS };

    const floorBatch = await measure(BATCH_REQUESTS, BATCH_SIZE, async () => {
      await host.awsClients.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: inboundUrl,
          Entries: Array.from({ length: BATCH_SIZE }, (_, i) => ({ Id: String(i), MessageBody: JSON.stringify(sampleEvent()) })),
        }),
      );
    });
    calls.dynamodb = 0;
    calls.sqs = 0;
    const koerierBatch = await measure(BATCH_REQUESTS, BATCH_SIZE, () =>
      post(JSON.stringify(Array.from({ length: BATCH_SIZE }, sampleEvent)), 'application/cloudevents-batch+json'),
    );
    const batchEvents = BATCH_REQUESTS * BATCH_SIZE;
    const batchCalls = { dynamodb: calls.dynamodb / batchEvents, sqs: calls.sqs / batchEvents };

    return {
      description:
        'POST /events on the laptop host (HTTP, JWT verification, Idempotency-Key in DynamoDB, validation, SQS) against floors of the same AWS calls without Koerier, same emulators, same concurrency.',
      concurrency: CONCURRENCY,
      single: {
        koerier: koerierSingle,
        floorSqsSendOnly: floorSqsOnly,
        floorSameAwsCalls: floorSameCalls,
        ratioToSqsFloor: Number((koerierSingle.eventsPerSecond / floorSqsOnly.eventsPerSecond).toFixed(2)),
        ratioToSameCallsFloor: Number((koerierSingle.eventsPerSecond / floorSameCalls.eventsPerSecond).toFixed(2)),
        awsRequestsPerAcceptedEvent: singleCalls,
      },
      batchOf10: {
        koerier: koerierBatch,
        floorSqsSendBatchOnly: floorBatch,
        ratioToFloor: Number((koerierBatch.eventsPerSecond / floorBatch.eventsPerSecond).toFixed(2)),
        awsRequestsPerAcceptedEvent: batchCalls,
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
