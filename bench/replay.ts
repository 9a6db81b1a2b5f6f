/**
 * Archive and replay on the laptop host (docs/REPLAY.md, issue 13): what archiving costs per
 * event, and how fast a replay fills a subscription next to the normal delivery path, in one run.
 *
 * - Fill: EVENTS events published through Koerier (`POST /events`, batches of 100) to one type.
 *   A pull subscription (`live`) exists before: the router writes each event to its queue as it
 *   routes (the normal path), and archives each router batch. S3 requests and bytes are counted
 *   by SDK middleware on the host's own S3 client (the one the router writes with) during the fill.
 * - Replay: a second pull subscription (`replayed`), created after the fill, replays the fill's
 *   window; timed from the POST until all EVENTS are in its queue. The baseline is the normal path
 *   of the same run: from the first publish until all EVENTS were in `live`'s queue.
 * - Requests per replayed event: S3 (list, get) and SQS (the worker's sends and continuations)
 *   and DynamoDB (the replay record), counted on the host's clients during the replay.
 *
 * Pull queues on both sides, so no webhook receiver's speed enters the figures. The emulators are
 * single-threaded JavaScript in this one process: ratios and request counts carry over to AWS,
 * absolute rates do not. Run: `npm run bench -- replay` (`BENCH_REPLAY_EVENTS` sets EVENTS).
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import type { S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { observeAttempts } from '../functions/aws/aws-request-observer.js';
import { startBenchHost } from './bench-host.js';
import { apiAs, callApi, publishEvents } from '../test/support/koerier-api.js';
import { countRequests } from '../test/support/request-counter.js';

const EVENTS = Number(process.env['BENCH_REPLAY_EVENTS'] ?? 2000);
const PUBLISH_BATCH = 100;
const TYPE = `nl.example.bench.replay.${randomUUID().slice(0, 8)}.v1`;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:bench';

/** S3 requests by operation (named as the SDK's commands, as earlier results are) and the bytes put, counted on the client the functions send with. */
function countS3(client: S3Client) {
  const byOperation: Record<string, number> = {};
  let putBytes = 0;
  observeAttempts(client, ({ operation, requestBytes }) => {
    const name = `${operation}Command`;
    byOperation[name] = (byOperation[name] ?? 0) + 1;
    if (operation === 'PutObject') putBytes += requestBytes;
  });
  return {
    byOperation,
    putBytes: () => putBytes,
    reset: () => {
      for (const name of Object.keys(byOperation)) delete byOperation[name];
      putBytes = 0;
    },
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

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = Number(loadavg()[0]!.toFixed(2));
  const benchHost = await startBenchHost('replay', {
    // The router fills and archives, the worker replays; no delivery function (pull only).
    queueTriggers: ['router', 'replayWorker'],
  });
  const { host } = benchHost;
  /** One call through the generated client, its answer's body; a refusal stops the run. */
  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const answer = await callApi(host.apiUrl, token, method, path, body);
    if (answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text}`);
    return answer.body;
  };
  const sqs = host.awsClients.sqs;
  const waiting = async (subscriptionId: string) => {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: `koerier-pull-${subscriptionId}` }));
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    return Number(Attributes?.['ApproximateNumberOfMessages'] ?? 0);
  };
  const untilFull = async (subscriptionId: string) => {
    const deadline = Date.now() + 300_000;
    while ((await waiting(subscriptionId)) < EVENTS) {
      if (Date.now() > deadline)
        throw new Error(`subscription ${subscriptionId}: ${await waiting(subscriptionId)} of ${EVENTS} in time`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  try {
    const publisher = await host.issueToken('dev-publisher', ['events:publish']);
    const manager = await host.issueToken('dev-subscriber', ['subscriptions:manage']);
    const live = (await call('POST', '/subscriptions', manager, { delivery: 'pull', types: [TYPE] }))['id'] as string;
    const s3 = countS3(host.awsClients.s3);

    // Fill through the normal path; the archive is written on the way.
    // No retry: a refusal stops the run, and no wait stretches the normal path's time.
    const publishing = apiAs(host.apiUrl, publisher, { retries: 0 });
    const from = new Date().toISOString();
    let eventBytes = 0;
    const fillStarted = performance.now();
    for (let i = 0; i < EVENTS; i += PUBLISH_BATCH) {
      const batch = JSON.stringify(Array.from({ length: Math.min(PUBLISH_BATCH, EVENTS - i) }, event));
      eventBytes += Buffer.byteLength(batch) - 2;
      await publishEvents(publishing, batch, { contentType: 'application/cloudevents-batch+json' });
    }
    await untilFull(live);
    const liveSeconds = (performance.now() - fillStarted) / 1000;
    const archiveRequests = { ...s3.byOperation };
    const archiveBytes = s3.putBytes();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const to = new Date().toISOString();

    // Replay the window to a subscription made afterwards.
    const replayed = (await call('POST', '/subscriptions', manager, { delivery: 'pull', types: [TYPE] }))[
      'id'
    ] as string;
    s3.reset();
    const sqsRequests = countRequests(sqs);
    const dynamodbRequests = countRequests(host.awsClients.dynamodb);
    const replayStarted = performance.now();
    const started = await call('POST', `/subscriptions/${replayed}/replays`, manager, { from, to });
    await untilFull(replayed);
    const replaySeconds = (performance.now() - replayStarted) / 1000;
    const progress = await call('GET', `/subscriptions/${replayed}/replays/${started['id'] as string}`, manager);
    // The waits above poll SQS too: count only what the functions sent.
    const functionSqs = Object.fromEntries(
      Object.entries(sqsRequests.byOperation).filter(
        ([name]) => name !== 'GetQueueAttributesCommand' && name !== 'GetQueueUrlCommand',
      ),
    );

    const perEvent = (counts: Record<string, number>) =>
      Object.fromEntries(Object.entries(counts).map(([name, count]) => [name, Number((count / EVENTS).toFixed(4))]));
    const livePerSecond = Math.round(EVENTS / liveSeconds);
    const replayPerSecond = Math.round(EVENTS / replaySeconds);
    return {
      events: EVENTS,
      archive: {
        s3RequestsPerEvent: perEvent(archiveRequests),
        bytesPerEvent: Math.round(archiveBytes / EVENTS),
        eventBytesPerEvent: Math.round(eventBytes / EVENTS),
        compression: Number((archiveBytes / eventBytes).toFixed(3)),
        how: 'one gzip JSON Lines object per router batch (batch size 10) and hour',
      },
      normalPath: {
        how: 'publish (batches of 100) → route → pull queue, until all in the queue',
        seconds: Number(liveSeconds.toFixed(2)),
        eventsPerSecond: livePerSecond,
      },
      replay: {
        how: 'POST …/replays → worker chunks (500 events) → pull queue, until all in the queue',
        seconds: Number(replaySeconds.toFixed(2)),
        eventsPerSecond: replayPerSecond,
        progress: {
          state: progress['state'],
          scanned: progress['scanned'],
          matched: progress['matched'],
          sent: progress['sent'],
        },
        requestsPerEvent: {
          s3: perEvent(s3.byOperation),
          sqs: perEvent(functionSqs),
          dynamodb: perEvent(dynamodbRequests.byOperation),
        },
      },
      ratio: Number((replayPerSecond / livePerSecond).toFixed(3)),
      note: 'everything (publisher, API emulation, functions, SQS, DynamoDB and S3 emulators) shares one Node process on this machine',
      loadAverage1m: { atStart: loadAtStart, atEnd: Number(loadavg()[0]!.toFixed(2)) },
    };
  } finally {
    await benchHost.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await run(), null, 2)}\n`);
  process.exit(0);
}
