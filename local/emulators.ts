/**
 * The AWS services of the laptop host: dynalite (DynamoDB), local-aws-sqs (SQS) and s3rver (S3),
 * in this process, on free loopback ports, with every table, queue and bucket of
 * functions/config/resources.ts created under its `localName`. The real AWS SDK v3 clients reach them through
 * the standard service-specific endpoint variables in `awsEnvironment`.
 *
 * State: with a `stateDir`, DynamoDB lives in LevelDB under `<stateDir>/dynamodb`, S3 in files
 * under `<stateDir>/s3`, and the messages of the in-memory SQS emulator in a journal and snapshot
 * under `<stateDir>/sqs` (local/sqs-journal.ts); all three survive a restart. Queues themselves are
 * recreated from functions/config/resources.ts on every start and their messages put back. Without a
 * `stateDir`, DynamoDB and SQS are in memory and S3 uses a temporary directory removed on stop.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  type AttributeDefinition,
  type KeySchemaElement,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import dynalite from 'dynalite';
import { createRequestHandler } from 'local-aws-sqs';
import S3rver from 's3rver';
import {
  buckets,
  keys,
  localName,
  queues,
  resourceEnv,
  tables,
  type BucketName,
  type KeyName,
  type KeySpec,
  type QueueName,
  type TableName,
  type TableSpec,
} from '../functions/config/resources.js';
import { installDynaliteShims } from './dynalite-shims.js';
import { installSqsEmulatorShims, type ArrivalListener } from './sqs-emulator-shims.js';
import { openSqsJournal } from './sqs-journal.js';
import { startTtlSweeper, type TtlSweeper, type TtlSweeperOptions } from './ttl-sweeper.js';

export interface Emulators {
  readonly region: string;
  readonly endpoints: { readonly dynamodb: string; readonly sqs: string; readonly s3: string };
  /** AWS_REGION, AWS_ENDPOINT_URL_*, dummy credentials, S3 checksum settings as env vars. */
  readonly awsEnvironment: Record<string, string>;
  /** Region, endpoint and credentials of one emulator, as the SDK's clients take them (functions/aws/clients.ts). */
  clientSettings(service: keyof Emulators['endpoints']): EmulatorClientSettings;
  /** Every resourceEnv variable of functions/config/resources.ts (tables, queue URLs, DLQ URLs, buckets, keys) → local value. */
  readonly resourceEnvironment: Record<string, string>;
  /** Deletes expired items of the tables with a TTL attribute, as DynamoDB's TTL does. */
  readonly ttlSweeper: TtlSweeper;
  /** Messages put back into each queue from the state directory at start (by local queue name). */
  readonly restoredMessages: Readonly<Record<string, number>>;
  /** Told the queue's name whenever a message is added to one (see local/sqs-emulator-shims.ts); returns the unsubscribe. */
  onSqsArrival(listener: ArrivalListener): () => void;
  /** Messages the SQS shim keeps track of (local/sqs-emulator-shims.ts): never more than the queues hold. */
  trackedSqsMessages(): number;
  stop(): Promise<void>;
}

export interface EmulatorClientSettings {
  readonly region: string;
  readonly endpoint: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

export const LOCAL_REGION = 'eu-west-1';
const LOCAL_ACCOUNT_ID = '000000000000';
/**
 * s3rver checks SigV4 signatures against its one built-in account, S3RVER/S3RVER. Using that pair
 * as the dummy credentials keeps signature checking on, so a badly signed request still fails.
 */
const DUMMY_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const LOOPBACK = '127.0.0.1';

/** No KMS emulator exists: the laptop host encrypts with a local key file; this names it. */
export function localKeyId(name: KeyName): string {
  return `local:${name}`;
}

export interface EmulatorOptions {
  /** Where DynamoDB, S3 and the SQS journal keep their state; everything in memory when absent. */
  readonly stateDir?: string;
  /** Warnings about restored state and the TTL sweeper, as JSON lines. */
  readonly log?: (line: string) => void;
  /**
   * The TTL sweeper's pace (see local/ttl-sweeper.ts); its defaults suit a laptop. `false`: no
   * sweeping on a timer, for tests whose clock is not the real one — the sweeper judges expiry by
   * real time, so it would delete the items of a test that lives in the past (an idempotency
   * lock, a delivery's progress) while the test still counts on them.
   */
  readonly ttlSweep?: Pick<TtlSweeperOptions, 'tickMs' | 'pageSize' | 'passPauseMs'> | false;
}

export async function startEmulators(options: EmulatorOptions = {}): Promise<Emulators> {
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    const dynamodbPath = options.stateDir === undefined ? undefined : join(options.stateDir, 'dynamodb');
    if (dynamodbPath) await mkdir(dynamodbPath, { recursive: true });
    // Before dynalite opens LevelDB: without it every Query and Scan leaks an iterator.
    installDynaliteShims();
    const dynamoServer = dynalite({ path: dynamodbPath, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    const dynamoAnswered = unansweredRequests(dynamoServer);
    await listen(dynamoServer);
    // A request whose caller is gone (a worker killed mid-call) still runs its LevelDB operations;
    // closed under it, dynalite throws `Database is closed` where nothing can catch it.
    stops.push(async () => {
      await dynamoAnswered(5000);
      await closeServer(dynamoServer);
    });

    const sqs = createRequestHandler({
      port: 0,
      hostname: LOOPBACK,
      region: LOCAL_REGION,
      accountId: LOCAL_ACCOUNT_ID,
      // Queues are recreated on every start; AWS's 60 s wait after a delete would only get in the way.
      emulateQueueCreationLifecycle: false,
    });
    // Our own server around the emulator's request handler (what its createSqsServer does), so
    // that the journal can reach the emulator's queues.
    let beforeEachSqsRequest = () => {};
    const sqsServer = createServer((req, res) => {
      beforeEachSqsRequest();
      void sqs.requestHandler(req, res);
    });
    await listen(sqsServer);
    sqs.service.PORT = portOf(sqsServer);
    const sqsStop = () => closeServer(sqsServer);
    stops.push(sqsStop);

    let s3Directory: string;
    if (options.stateDir === undefined) {
      s3Directory = await mkdtemp(join(tmpdir(), 'koerier-s3-'));
      const temporary = s3Directory;
      stops.push(() => rm(temporary, { recursive: true, force: true }));
    } else {
      s3Directory = join(options.stateDir, 's3');
      await mkdir(s3Directory, { recursive: true });
    }
    const s3 = new S3rver({ address: LOOPBACK, port: 0, silent: true, directory: s3Directory, vhostBuckets: false });
    const s3Address = await s3.run();
    stops.push(() => s3.close());

    const endpoints = {
      dynamodb: `http://${LOOPBACK}:${portOf(dynamoServer)}`,
      sqs: `http://${LOOPBACK}:${portOf(sqsServer)}`,
      s3: `http://${LOOPBACK}:${s3Address.port}`,
    };
    const resourceEnvironment = await createResources(endpoints);
    const sweeperClient = new DynamoDBClient({
      region: LOCAL_REGION,
      credentials: DUMMY_CREDENTIALS,
      endpoint: endpoints.dynamodb,
    });
    const ttlSweeper = startTtlSweeper({
      client: sweeperClient,
      log: options.log,
      ...(options.ttlSweep === false ? { periodic: false } : options.ttlSweep),
    });
    // Stops run in reverse order: this one before dynalite closes.
    stops.push(async () => {
      await ttlSweeper.stop();
      sweeperClient.destroy();
    });
    // Before the journal, so it wraps the shimmed queues (queues made at run time too: pull).
    const shims = installSqsEmulatorShims(sqs.service);
    beforeEachSqsRequest = () => shims.watchNewQueues();
    let restoredMessages: Record<string, number> = {};
    if (options.stateDir !== undefined) {
      // Opened once the queues exist: it puts their messages back, then journals every change.
      const journal = openSqsJournal(join(options.stateDir, 'sqs'), sqs.service, options.log);
      beforeEachSqsRequest = () => {
        shims.watchNewQueues();
        journal.watchNewQueues();
      };
      restoredMessages = { ...journal.restored };
      // Stops run in reverse order: placed before the SQS server's stop, the final snapshot is
      // written once the emulator no longer answers.
      stops.splice(stops.indexOf(sqsStop), 0, () => Promise.resolve(journal.close()));
    }

    return {
      region: LOCAL_REGION,
      endpoints,
      awsEnvironment: awsEnvironmentFor(endpoints),
      clientSettings: (service) => ({
        region: LOCAL_REGION,
        endpoint: endpoints[service],
        credentials: DUMMY_CREDENTIALS,
      }),
      resourceEnvironment,
      restoredMessages,
      onSqsArrival: (listener) => shims.onArrival(listener),
      trackedSqsMessages: () => shims.trackedMessages(),
      ttlSweeper,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function awsEnvironmentFor(endpoints: Emulators['endpoints']): Record<string, string> {
  return {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: DUMMY_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: DUMMY_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    // An IP-literal endpoint makes the SDK address buckets path-style, the only style s3rver serves
    // here (the SDK has no environment variable for forcePathStyle).
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    // s3rver knows none of the flexible checksums the SDK adds by default.
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  };
}

async function createResources(endpoints: Emulators['endpoints']): Promise<Record<string, string>> {
  const common = { region: LOCAL_REGION, credentials: DUMMY_CREDENTIALS };
  const dynamodb = new DynamoDBClient({ ...common, endpoint: endpoints.dynamodb });
  const sqs = new SQSClient({ ...common, endpoint: endpoints.sqs });
  const s3 = new S3Client({
    ...common,
    endpoint: endpoints.s3,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    const environment: Record<string, string> = {};
    for (const name of Object.keys(tables) as TableName[]) {
      await ensureTable(dynamodb, localName.table(name), tables[name]);
      environment[resourceEnv.table(name)] = localName.table(name);
    }
    for (const name of Object.keys(queues) as QueueName[]) {
      const { queueUrl, deadLetterQueueUrl } = await createQueueWithDeadLetterQueue(sqs, name);
      environment[resourceEnv.queueUrl(name)] = queueUrl;
      environment[resourceEnv.deadLetterQueueUrl(name)] = deadLetterQueueUrl;
    }
    for (const name of Object.keys(buckets) as BucketName[]) {
      await ensureBucket(s3, localName.bucket(name));
      environment[resourceEnv.bucket(name)] = localName.bucket(name);
    }
    for (const name of Object.keys(keys) as KeyName[]) {
      environment[resourceEnv.key(name)] = localKeyId(name);
    }
    // Pull subscriptions' queues are made at run time, when a subscription is created.
    environment[resourceEnv.pullQueuePrefix] = localName.pullQueuePrefix;
    return environment;
  } finally {
    dynamodb.destroy();
    sqs.destroy();
    s3.destroy();
  }
}

async function ensureTable(client: DynamoDBClient, tableName: string, spec: TableSpec): Promise<void> {
  const existing = await describeTable(client, tableName);
  if (existing) {
    assertSameShape(tableName, existing, spec);
  } else {
    const attributes = new Map<string, KeySpec>();
    const keySchema = (partitionKey: KeySpec, sortKey?: KeySpec): KeySchemaElement[] => {
      attributes.set(partitionKey.name, partitionKey);
      if (sortKey) attributes.set(sortKey.name, sortKey);
      return [
        { AttributeName: partitionKey.name, KeyType: 'HASH' },
        ...(sortKey ? [{ AttributeName: sortKey.name, KeyType: 'RANGE' as const }] : []),
      ];
    };
    const tableKeys = keySchema(spec.partitionKey, spec.sortKey);
    const indexes = (spec.globalIndexes ?? []).map((index) => ({
      IndexName: index.name,
      KeySchema: keySchema(index.partitionKey, index.sortKey),
      Projection: index.include
        ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...index.include] }
        : { ProjectionType: 'ALL' as const },
    }));
    const definitions: AttributeDefinition[] = [...attributes.values()].map((a) => ({
      AttributeName: a.name,
      AttributeType: a.type,
    }));
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: tableKeys,
        AttributeDefinitions: definitions,
        ...(indexes.length > 0 ? { GlobalSecondaryIndexes: indexes } : {}),
      }),
    );
  }
  // dynalite creates tables asynchronously even with createTableMs 0.
  for (let attempt = 0; ; attempt++) {
    const table = await describeTable(client, tableName);
    const indexesActive = (table?.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE');
    if (table?.TableStatus === 'ACTIVE' && indexesActive) return;
    if (attempt >= 200) throw new Error(`DynamoDB table ${tableName} did not become ACTIVE`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function describeTable(client: DynamoDBClient, tableName: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

/** A persisted table from an older resource description would fail in confusing ways later. */
function assertSameShape(tableName: string, table: TableDescription, spec: TableSpec): void {
  const keysOf = (schema: KeySchemaElement[] | undefined) =>
    (schema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`).join(',');
  const wantedKeys = (partitionKey: KeySpec, sortKey?: KeySpec) =>
    [`${partitionKey.name}:HASH`, ...(sortKey ? [`${sortKey.name}:RANGE`] : [])].join(',');
  const actual = [
    keysOf(table.KeySchema),
    ...(table.GlobalSecondaryIndexes ?? []).map((i) => `${i.IndexName}(${keysOf(i.KeySchema)})`).sort(),
  ];
  const wanted = [
    wantedKeys(spec.partitionKey, spec.sortKey),
    ...(spec.globalIndexes ?? []).map((i) => `${i.name}(${wantedKeys(i.partitionKey, i.sortKey)})`).sort(),
  ];
  if (actual.join(' ') !== wanted.join(' ')) {
    throw new Error(
      `DynamoDB table ${tableName} in the state directory has keys/indexes [${actual.join(' ')}] but functions/config/resources.ts ` +
        `describes [${wanted.join(' ')}]; start with --fresh to recreate the local state`,
    );
  }
}

async function createQueueWithDeadLetterQueue(
  client: SQSClient,
  name: QueueName,
): Promise<{ queueUrl: string; deadLetterQueueUrl: string }> {
  const spec = queues[name];
  const retention = String(spec.retentionSeconds);
  const deadLetter = await client.send(
    new CreateQueueCommand({
      QueueName: localName.deadLetterQueue(name),
      Attributes: { MessageRetentionPeriod: retention },
    }),
  );
  const deadLetterQueueUrl = required(deadLetter.QueueUrl, 'dead-letter queue URL');
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: deadLetterQueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: localName.queue(name),
      Attributes: {
        VisibilityTimeout: String(spec.visibilityTimeoutSeconds),
        MessageRetentionPeriod: retention,
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: required(Attributes?.QueueArn, 'dead-letter queue ARN'),
          maxReceiveCount: spec.maxReceiveCount,
        }),
      },
    }),
  );
  return { queueUrl: required(queue.QueueUrl, 'queue URL'), deadLetterQueueUrl };
}

async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  }
}

function required(value: string | undefined, what: string): string {
  if (!value) throw new Error(`the SQS emulator returned no ${what}`);
  return value;
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}

/**
 * A wait, at most `ms`, until every request the server has received is answered (its handler has
 * called `end`, whether or not the caller is still there to read it).
 */
function unansweredRequests(server: Server): (ms: number) => Promise<void> {
  let open = 0;
  const waiting = new Set<() => void>();
  server.prependListener('request', (_request, response) => {
    open++;
    // Counted at `end`, not at the response's `close`: a destroyed socket closes it before the handler is done.
    const end = response.end.bind(response);
    let ended = false;
    response.end = ((...args: Parameters<typeof end>) => {
      if (!ended && --open === 0) {
        for (const resolve of waiting) resolve();
        waiting.clear();
      }
      ended = true;
      return end(...args);
    }) as typeof response.end;
  });
  return (ms) =>
    open === 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          waiting.add(resolve);
          setTimeout(resolve, ms).unref();
        });
}

/** Long polls and keep-alive sockets would hold `close` open; the host stops its pollers first. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}
