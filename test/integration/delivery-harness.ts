/**
 * The delivery function as it runs on the laptop — its real handler behind the SQS event-source
 * poller, against the emulators — with HTTPS receivers from a local certificate authority, and
 * direct access to the subscriptions, the delivery state and the deliveries queue.
 * One harness per test file: the handler reads its configuration once per process.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { sealSinkCredential, type SinkCredential } from '../../functions/core/credentials/sink-credential.js';
import { DeliveryAdmin } from '../../functions/core/delivery/delivery-admin.js';
import { encodeDeliveryMessage, type DeliveryMessage } from '../../functions/core/delivery-message/delivery-message.js';
import type { AttemptRecord, DeadLetter } from '../../functions/core/delivery/delivery-records.js';
import type { Subscription } from '../../functions/core/subscriptions/subscription.js';
import { LocalCredentialCipher } from '../../functions/aws/credential-cipher.js';
import { DynamoDbDeliveryState } from '../../functions/aws/dynamodb-delivery-state.js';
import { DynamoDbRouteIndex } from '../../functions/aws/dynamodb-route-index.js';
import { SqsMessageQueue } from '../../functions/aws/sqs-message-queue.js';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDbSubscriptionStore } from '../../functions/aws/dynamodb-subscription-store.js';
import { loadConfig, settingEnv } from '../../functions/config.js';
import { parseEntitlements } from '../../functions/core/subscriptions/entitlements.js';
import { logger } from '../../functions/app/logger.js';
import { resourceEnv } from '../../functions/config/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';
import { startPoller, type Poller } from '../../local/event-source-poller.js';
import {
  createLocalCertificateAuthority,
  startHttpsReceiver,
  type HttpsReceiver,
  type LocalCertificateAuthority,
  type ReceiverScript,
} from '../support/https-receiver.js';
import { subscriptionDraft } from '../support/subscription-draft.js';
import { eventually, staysQuiet } from '../support/waiting.js';
import { silentLog } from '../../functions/core/ports/log.js';
import { answering } from '../support/refusals.js';
import { recordedLambdaHandler } from '../support/aws-operations-recorder.js';

export interface DeliveryHarness {
  readonly emulators: Emulators;
  readonly authority: LocalCertificateAuthority;
  readonly store: DynamoDbDeliveryState;
  readonly subscriptions: DynamoDbSubscriptionStore;
  readonly admin: DeliveryAdmin;
  /** The delivery admin as it would run with other entitlements (configuration changed and redeployed). */
  adminWith(entitlementsJson: string): DeliveryAdmin;
  /** The cipher the delivery function opens sink credentials with (for a subscriptions API over the same store). */
  readonly cipher: LocalCredentialCipher;
  /** The subscribers' OAuth2 token endpoint every subscription gets by default (WH-3, EDU-4). */
  readonly tokenServer: HttpsReceiver;
  /** Log lines of the handler and the poller. */
  readonly logs: string[];
  receiver(script?: ReceiverScript): Promise<HttpsReceiver>;
  /**
   * An active push subscription to `sink`, owned by `owner` (default `subscriber`), with client
   * credentials at `tokenServer` unless `sinkCredential` says otherwise (`null`: none, a record as
   * written before credentials were required).
   */
  subscribe(
    sink: string,
    fields?: Partial<Subscription> & { sinkCredential?: SinkCredential | null },
  ): Promise<Subscription>;
  /** Queues a delivery of `events` (default: one fresh event) to the subscription, as the router would. */
  deliver(
    subscriptionId: string,
    events?: readonly string[],
    fields?: Partial<DeliveryMessage>,
  ): Promise<DeliveryMessage>;
  deadLetters(subscriptionId: string): Promise<readonly DeadLetter[]>;
  /** Oldest first. */
  attempts(subscriptionId: string): Promise<readonly AttemptRecord[]>;
  /** The dead letters of the subscription once there are at least `atLeast` (polls; fails after 15 s). */
  awaitDeadLetters(subscriptionId: string, atLeast?: number): Promise<readonly DeadLetter[]>;
  /** The attempt history (oldest first) once it holds exactly `count` attempts (polls; fails after 15 s). */
  awaitAttempts(subscriptionId: string, count: number): Promise<readonly AttemptRecord[]>;
  stop(): Promise<void>;
}

/**
 * How long a test waits for something on the delivery path: a message crosses the SQS poller's
 * long poll and, for a retry, the (shortened) schedule, on a machine shared with other test files.
 */
export const DELIVERY_WAIT = { timeoutMs: 15_000 } as const;

/**
 * Checks for `forMs` that `receiver` gets no request beyond its first `count`: no retry, no
 * second delivery. `forMs` must be longer than the retry that a bug would send takes to come round.
 */
export function noMoreRequests(receiver: HttpsReceiver, count: number, forMs: number): Promise<void> {
  return staysQuiet(
    `request to the target beyond the first ${count}`,
    () => receiver.requests.length > count && receiver.requests.slice(count).map((r) => `${r.method} ${r.path}`),
    forMs,
  );
}

/** Every client may subscribe to everything, unless a test says otherwise. */
const ALL_ENTITLED = JSON.stringify({ subscriber: [{ typePrefix: '' }] });

export function cloudEvent(id = randomUUID(), extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    specversion: '1.0',
    id,
    source: 'urn:nld:oin:00000001234567890000:systeem:test',
    type: 'nl.example.delivery.tested.v1',
    time: '2026-01-01T00:00:00Z',
    datacontenttype: 'application/json',
    ...extra,
    data: { n: id },
  });
}

export async function startDeliveryHarness(settings: Record<string, string> = {}): Promise<DeliveryHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'koerier-delivery-'));
  const authority = createLocalCertificateAuthority();
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, authority.certificatePem);
  const key = randomBytes(32);
  await writeFile(join(dir, 'credentials.key'), key.toString('base64'));

  const emulators = await startEmulators({ ttlSweep: false }); // fixed clocks in the past: no sweeping by real time
  Object.assign(process.env, emulators.awsEnvironment, emulators.resourceEnvironment, {
    [settingEnv.issuer]: 'https://issuer.test',
    [settingEnv.audience]: 'koerier',
    [settingEnv.jwksUrl]: 'https://issuer.test/jwks.json',
    [settingEnv.webhookOrigin]: 'koerier.test',
    [settingEnv.allowLoopbackSinks]: 'true',
    [settingEnv.outboundCaFile]: caFile,
    [settingEnv.localKeysDir]: dir,
    [settingEnv.entitlements]: ALL_ENTITLED,
    ...settings,
  });
  const logs: string[] = [];
  const restoreLogger = logger.captureTo((line) => logs.push(line));

  const dynamodb = new DynamoDBClient({});
  const sqs = new SQSClient();
  const table = (name: 'deliveries' | 'subscriptions' | 'routes') => process.env[resourceEnv.table(name)]!;
  const store = new DynamoDbDeliveryState(dynamodb, table('deliveries'));
  const subscriptions = new DynamoDbSubscriptionStore(
    dynamodb,
    table('subscriptions'),
    new DynamoDbRouteIndex(dynamodb, table('routes')),
  );
  const queueUrl = process.env[resourceEnv.queueUrl('deliveries')]!;
  const queue = new SqsMessageQueue(sqs, queueUrl);
  const cipher = new LocalCredentialCipher(key);
  const adminWith = (entitlementsJson: string) =>
    answering(
      new DeliveryAdmin({
        targets: store,
        breaker: loadConfig(process.env).delivery.breaker,
        ledger: store,
        deadLetters: store,
        subscriptions,
        outbox: {
          enqueue: (_subscription, messages) =>
            queue.send(messages.map((message) => ({ body: encodeDeliveryMessage(message) }))),
        },
        audit: silentLog,
        entitlements: parseEntitlements(entitlementsJson),
        sinkCredentials: loadConfig(process.env).sinkCredentials,
      }),
    );
  const admin = adminWith(process.env[settingEnv.entitlements] ?? ALL_ENTITLED);
  const tokenServer = await startHttpsReceiver({ authority });

  const { handler } = await import('../../functions/handlers/delivery.js');
  const poller: Poller = await startPoller({
    queueUrl,
    // The permissions record (test/support/aws-operations-recorder.ts), when the run asks for it.
    handler: recordedLambdaHandler('delivery', handler) as never,
    functionName: 'delivery',
    batchSize: 10,
    waitTimeSeconds: 1,
    // Two concurrent receive loops: two function instances racing for the same targets.
    concurrency: 2,
    timeoutSeconds: 60,
    client: sqs,
    log: (line) => logs.push(line),
  });
  const receivers: HttpsReceiver[] = [tokenServer];
  const deadLetters = async (subscriptionId: string) =>
    (await store.listDeadLetters(subscriptionId, { limit: 100 })).items;
  const attempts = async (subscriptionId: string) =>
    [...(await store.listAttempts(subscriptionId, { limit: 100 })).items].reverse();

  return {
    emulators,
    authority,
    store,
    subscriptions,
    admin,
    adminWith,
    cipher,
    tokenServer,
    logs,
    async receiver(script) {
      const receiver = await startHttpsReceiver({ authority, ...(script ? { script } : {}) });
      receivers.push(receiver);
      return receiver;
    },
    async subscribe(sink, { sinkCredential = tokenServer.clientCredentials, ...fields } = {}) {
      const id = randomUUID();
      return subscriptions.create(
        subscriptionDraft({
          id,
          sink,
          ...(sinkCredential ? { credential: await sealSinkCredential(sinkCredential, id, cipher) } : {}),
          ...fields,
        }),
      );
    },
    async deliver(subscriptionId, events = [cloudEvent()], fields = {}) {
      const message: DeliveryMessage = {
        version: 1,
        deliveryId: randomUUID(),
        subscriptionId,
        events,
        createdAt: Date.now(),
        ...fields,
      };
      await queue.send([{ body: encodeDeliveryMessage(message) }]);
      return message;
    },
    deadLetters,
    attempts,
    awaitDeadLetters(subscriptionId, atLeast = 1) {
      let seen = 0;
      return eventually(
        () => `${atLeast} dead letter(s) of ${subscriptionId} (${seen} listed)`,
        async () => {
          const list = await deadLetters(subscriptionId);
          seen = list.length;
          return list.length >= atLeast && list;
        },
        DELIVERY_WAIT,
      );
    },
    awaitAttempts(subscriptionId, count) {
      let seen = 0;
      return eventually(
        () => `${count} attempt(s) of ${subscriptionId} (${seen} recorded)`,
        async () => {
          const list = await attempts(subscriptionId);
          seen = list.length;
          return list.length === count && list;
        },
        DELIVERY_WAIT,
      );
    },
    async stop() {
      await poller.stop();
      await Promise.all(receivers.map((receiver) => receiver.close()));
      restoreLogger();
      await emulators.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
