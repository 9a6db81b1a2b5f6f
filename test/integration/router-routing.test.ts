import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbPartnerStore } from '../../functions/aws/dynamodb-partner-store.js';
import { DynamoDbRouteIndex } from '../../functions/aws/dynamodb-route-index.js';
import { DynamoDbRoutedEventLedger } from '../../functions/aws/dynamodb-routed-event-ledger.js';
import { SqsMessageQueue } from '../../functions/aws/sqs-message-queue.js';
import { DynamoDbSubscriptionStore } from '../../functions/aws/dynamodb-subscription-store.js';
import { decodeDeliveryMessage, type DeliveryMessage } from '../../functions/core/delivery-message/delivery-message.js';
import { SubscriptionMatcher } from '../../functions/core/routing/matcher.js';
import { routeInboundEvents, type RouterDependencies } from '../../functions/core/routing/route-events.js';
import type { RoutedEventLedger } from '../../functions/core/routing/routed-events.js';
import type { SubscriptionDraft } from '../../functions/core/subscriptions/store.js';
import { handler } from '../../functions/handlers/router.js';
import { localName, resourceEnv } from '../../functions/config/resources.js';
import { settingEnv } from '../../functions/config.js';
import { parseEntitlements } from '../../functions/core/subscriptions/entitlements.js';
import { queueOutbox } from '../../functions/core/delivery-message/outbox.js';
import { entitledOwners } from '../unit/routing/routing-fakes.js';
import { startHandlerHarness, type HandlerHarness } from '../support/handler-harness.js';
import { subscriptionDraft } from '../support/subscription-draft.js';
import { eventually } from '../support/waiting.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let harness: HandlerHarness;
let dynamodb: DynamoDBClient;
let repository: DynamoDbSubscriptionStore;
let inbound: SqsMessageQueue;
let inboundUrl: string;

/** Each test routes its own event type, so subscriptions of other tests never match. */
function eventJson(type: string, overrides: Record<string, unknown> = {}): string {
  // Spaces kept on purpose: the router must pass the stored text on byte for byte (CE-13).
  return JSON.stringify(
    {
      specversion: '1.0',
      id: randomUUID(),
      source: 'urn:nld:oin:1:systeem:lvs',
      type,
      subject: 'leerling/42',
      data: { naam: 'Jan' },
      ...overrides,
    },
    null,
    1,
  );
}

async function subscribe(overrides: Partial<SubscriptionDraft>): Promise<string> {
  const stored = await repository.create(
    subscriptionDraft({ owner: 'school-a', validation: 'handshake', ...overrides }),
  );
  return stored.id;
}

/** Puts the events through the real inbound queue and hands what SQS gives back to the router. */
async function route(bodies: readonly string[]): Promise<{ failures: string[]; messages: Message[] }> {
  await inbound.send(
    bodies.map((body) => ({
      body,
      attributes: { 'koerier-publisher': 'dev-publisher', 'koerier-received-at': new Date().toISOString() },
    })),
  );
  const messages: Message[] = [];
  await eventually(
    () => `${bodies.length} messages from the inbound queue (${messages.length} came)`,
    async () => {
      const batch = await harness.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: inboundUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          MessageAttributeNames: ['All'],
        }),
      );
      messages.push(...(batch.Messages ?? []));
      return messages.length >= bodies.length;
    },
    { intervalMs: 20 },
  );
  const event = {
    Records: messages.map((m) => ({ messageId: m.MessageId!, receiptHandle: m.ReceiptHandle!, body: m.Body! })),
  } as unknown as SQSEvent;
  const response = await handler(event);
  return { failures: response.batchItemFailures.map((f) => f.itemIdentifier), messages };
}

/** The router's dependencies on the emulators, as the handler wires them, with some replaced. */
function routerDeps(
  overrides: Partial<RouterDependencies> & { sendDeliveries?: (bodies: readonly string[]) => Promise<void> },
): RouterDependencies {
  const queue = new SqsMessageQueue(
    harness.sqs,
    harness.emulators.resourceEnvironment[resourceEnv.queueUrl('deliveries')]!,
  );
  const { sendDeliveries, ...rest } = overrides;
  return {
    matcher: new SubscriptionMatcher(new DynamoDbRouteIndex(dynamodb, localName.table('routes'))),
    ledger: new DynamoDbRoutedEventLedger(dynamodb, localName.table('idempotency')),
    entitlements: entitledOwners(),
    outbox: queueOutbox({
      deliveryQueue: { send: sendDeliveries ?? ((bodies) => queue.send(bodies.map((body) => ({ body })))) },
      pullQueues: { send: () => Promise.reject(new Error('no pull subscription in these tests')) },
    }),
    now: () => Date.now(),
    lockMs: 10_000,
    ttlSeconds: 3600,
    maxMessageBytes: 200_000,
    ...rest,
  };
}

async function deliveries(): Promise<DeliveryMessage[]> {
  return (await harness.drain('deliveries')).map((m) => decodeDeliveryMessage(m.Body!));
}

beforeAll(async () => {
  harness = await startHandlerHarness({
    [settingEnv.entitlements]: JSON.stringify({ 'school-a': [{ typePrefix: 'nl.edu.' }] }),
    // The partner directory is read again after a second, so a revocation is seen within the test.
    [settingEnv.partnersRefreshSeconds]: '1',
  });
  dynamodb = new DynamoDBClient({});
  repository = new DynamoDbSubscriptionStore(
    dynamodb,
    localName.table('subscriptions'),
    new DynamoDbRouteIndex(dynamodb, localName.table('routes')),
  );
  inboundUrl = harness.emulators.resourceEnvironment[resourceEnv.queueUrl('inbound')]!;
  inbound = new SqsMessageQueue(harness.sqs, inboundUrl);
});
afterAll(async () => {
  dynamodb?.destroy();
  await harness?.stop();
});

describe('router (SQS inbound → route index → SQS deliveries)', () => {
  it('EDU-8, EDU-IDEM-9: one delivery per matching active subscription, each with its own UUIDv4 key, the event unchanged', async () => {
    const type = 'nl.edu.router.one.v1';
    const byType = await subscribe({ types: [type] });
    const byPerson = await subscribe({ types: [type], filters: [{ exact: { subject: 'leerling/42' } }] });
    await subscribe({ types: [type], filters: [{ exact: { subject: 'leerling/43' } }] });
    await subscribe({ types: [type], status: 'pending' });
    const json = eventJson(type);

    const { failures } = await route([json]);
    expect(failures).toEqual([]);
    const queued = await deliveries();
    expect(queued.map((d) => d.subscriptionId).sort()).toEqual([byType, byPerson].sort());
    for (const delivery of queued) {
      expect(delivery.deliveryId).toMatch(UUID_V4);
      expect(delivery.events).toEqual([json]);
    }
    expect(new Set(queued.map((d) => d.deliveryId)).size).toBe(2);
  });

  it('CE-17, EDU-IDEM-15: an event with the same source and id is routed once, within a batch and across batches', async () => {
    const type = 'nl.edu.router.duplicate.v1';
    const subscription = await subscribe({ types: [type] });
    const json = eventJson(type);
    const sameIdOtherSource = eventJson(type, { id: JSON.parse(json).id, source: 'urn:nld:oin:2:systeem:lvs' });

    const first = await route([json, json, sameIdOtherSource]);
    expect(first.failures).toEqual([]);
    const second = await route([json]);
    expect(second.failures).toEqual([]);

    const queued = await deliveries();
    expect(queued).toHaveLength(2);
    expect(queued.every((d) => d.subscriptionId === subscription)).toBe(true);
    expect(queued.map((d) => JSON.parse(d.events[0]!).source).sort()).toEqual([
      'urn:nld:oin:1:systeem:lvs',
      'urn:nld:oin:2:systeem:lvs',
    ]);
  });

  it('EDU-11, JSON-3: events of one batch go together to a target that takes batches, and one by one to a target that did not declare it', async () => {
    const type = 'nl.edu.router.batch.v1';
    const batching = await subscribe({ types: [type], contentMode: 'batch', batchSupported: true });
    const notDeclared = await subscribe({ types: [type], contentMode: 'batch', batchSupported: false });
    const jsons = [eventJson(type), eventJson(type), eventJson(type)];

    expect((await route(jsons)).failures).toEqual([]);
    const queued = await deliveries();
    const toBatching = queued.filter((d) => d.subscriptionId === batching);
    expect(toBatching).toHaveLength(1);
    expect([...toBatching[0]!.events].sort()).toEqual([...jsons].sort());
    const toOther = queued.filter((d) => d.subscriptionId === notDeclared);
    expect(toOther).toHaveLength(3);
    expect(toOther.every((d) => d.events.length === 1)).toBe(true);
  });

  it('EDU-7: a subscriber whose grant was revoked gets no deliveries, while others still do', async () => {
    const type = 'nl.edu.router.revoked.v1';
    const entitled = await subscribe({ types: [type] });
    await subscribe({ types: [type], owner: 'revoked-client' });
    expect((await route([eventJson(type)])).failures).toEqual([]);
    expect((await deliveries()).map((d) => d.subscriptionId)).toEqual([entitled]);
  });

  it('an unreadable inbound record fails alone; the others are routed', async () => {
    const type = 'nl.edu.router.poison.v1';
    await subscribe({ types: [type] });
    const { failures, messages } = await route(['not json', eventJson(type)]);
    expect(failures).toEqual([messages.find((m) => m.Body === 'not json')!.MessageId]);
    expect(await deliveries()).toHaveLength(1);
  });

  it('EDU-IDEM-15, EDU-IDEM-9: when queueing the deliveries fails, the event is not marked routed; the retry routes it with the same delivery keys', async () => {
    const type = 'nl.edu.router.retry.v1';
    await subscribe({ types: [type] });
    await subscribe({ types: [type], filters: [{ exact: { subject: 'leerling/42' } }] });
    const json = eventJson(type);
    const deliveriesQueue = new SqsMessageQueue(
      harness.sqs,
      harness.emulators.resourceEnvironment[resourceEnv.queueUrl('deliveries')]!,
    );
    const attempted: string[] = [];
    // SQS is down for the whole first invocation (the router also tries one delivery per call).
    let sqsDown = true;
    const deps = {
      matcher: new SubscriptionMatcher(new DynamoDbRouteIndex(dynamodb, localName.table('routes'))),
      ledger: new DynamoDbRoutedEventLedger(dynamodb, localName.table('idempotency')),
      entitlements: parseEntitlements('{"school-a": [{"typePrefix": ""}]}'),
      outbox: queueOutbox({
        deliveryQueue: {
          send: async (bodies: readonly string[]) => {
            attempted.push(...bodies);
            if (sqsDown) throw new Error('SQS unavailable');
            await deliveriesQueue.send(bodies.map((body) => ({ body })));
          },
        },
        pullQueues: { send: () => Promise.reject(new Error('no pull subscription in this test')) },
      }),
      now: () => Date.now(),
      lockMs: 10_000,
      ttlSeconds: 3600,
      maxMessageBytes: 200_000,
    };
    const record = { recordId: 'm-1', body: json };

    const failed = await routeInboundEvents([record], deps);
    expect(failed.failedRecordIds).toEqual(['m-1']);
    sqsDown = false;
    const retried = await routeInboundEvents([record], deps);
    expect(retried).toMatchObject({ failedRecordIds: [], routed: 1, deliveries: 2 });
    const again = await routeInboundEvents([record], deps);
    expect(again).toMatchObject({ failedRecordIds: [], routed: 0, duplicates: 1, deliveries: 0 });

    const queued = await deliveries();
    expect(queued).toHaveLength(2);
    const firstAttemptKeys = attempted
      .slice(0, 2)
      .map((body) => decodeDeliveryMessage(body).deliveryId)
      .sort();
    expect(queued.map((d) => d.deliveryId).sort()).toEqual(firstAttemptKeys);
  });

  it('review #1: an event whose source + id are 4 KB is routed in one batch with nine normal events; no record fails', async () => {
    const type = 'nl.edu.router.longkey.v1';
    const subscription = await subscribe({ types: [type] });
    const long = eventJson(type, {
      source: `urn:nld:oin:1:systeem:${'s'.repeat(3000)}`,
      id: `${randomUUID()}-${'i'.repeat(1000)}`,
    });
    const bodies = [long, ...Array.from({ length: 9 }, () => eventJson(type))];
    const { failures, messages } = await route(bodies);
    expect(messages).toHaveLength(10);
    expect(failures).toEqual([]);
    const queued = await deliveries();
    expect(queued.map((d) => d.events[0]).sort()).toEqual([...bodies].sort());
    expect(queued.every((d) => d.subscriptionId === subscription)).toBe(true);
    // And it is recognised as a duplicate afterwards, like any event.
    expect((await route([long])).failures).toEqual([]);
    expect(await deliveries()).toEqual([]);
  });

  it('review #1: a routing marker that cannot be written fails only its own record; its neighbours are routed', async () => {
    const type = 'nl.edu.router.ledgerfail.v1';
    await subscribe({ types: [type] });
    const realLedger = new DynamoDbRoutedEventLedger(dynamodb, localName.table('idempotency'));
    const poisoned = eventJson(type, { source: 'urn:nld:oin:1:systeem:poison' });
    const ledger: RoutedEventLedger = {
      claim: async (event, options) => {
        if (event.source === 'urn:nld:oin:1:systeem:poison')
          throw new Error('ValidationException: Size of hashkey has exceeded the maximum size limit of 2048 bytes');
        return realLedger.claim(event, options);
      },
      complete: (event, claimId) => realLedger.complete(event, claimId),
      abandon: (event, claimId) => realLedger.abandon(event, claimId),
    };
    const records = [poisoned, eventJson(type), eventJson(type), poisoned.replace('"id"', '"id2": 1, "id"')].map(
      (body, index) => ({
        recordId: `r-${index}`,
        body,
      }),
    );
    const report = await routeInboundEvents(records, routerDeps({ ledger }));
    expect([...report.failedRecordIds].sort()).toEqual(['r-0', 'r-3']);
    expect(report).toMatchObject({ routed: 2, deliveries: 2 });
    expect(await deliveries()).toHaveLength(2);
  });

  it('review #1: a delivery SQS will not take fails only the records it carries; the other deliveries of the batch are queued', async () => {
    const type = 'nl.edu.router.sendfail.v1';
    await subscribe({ types: [type] });
    const refused = eventJson(type, { subject: 'refused-by-sqs' });
    const queue = new SqsMessageQueue(
      harness.sqs,
      harness.emulators.resourceEnvironment[resourceEnv.queueUrl('deliveries')]!,
    );
    const sendDeliveries = async (bodies: readonly string[]) => {
      if (bodies.some((body) => body.includes('refused-by-sqs')))
        throw new Error('QueueWriteError: 1 of 3 messages were not stored: InvalidParameterValue');
      await queue.send(bodies.map((body) => ({ body })));
    };
    const records = [eventJson(type), refused, eventJson(type)].map((body, index) => ({
      recordId: `s-${index}`,
      body,
    }));
    const report = await routeInboundEvents(records, routerDeps({ sendDeliveries }));
    expect(report.failedRecordIds).toEqual(['s-1']);
    expect(report).toMatchObject({ routed: 2, deliveries: 2 });
    const queued = await deliveries();
    expect(queued.map((d) => d.events[0]).sort()).toEqual([records[0]!.body, records[2]!.body].sort());
    // The refused record is not marked routed: its retry routes it.
    const retry = await routeInboundEvents([records[1]!], routerDeps({}));
    expect(retry).toMatchObject({ failedRecordIds: [], routed: 1, deliveries: 1 });
    await deliveries();
  });

  it('CE-17: a second router attempt while the first still holds the event is told to come back later, not dropped', async () => {
    const ledger = new DynamoDbRoutedEventLedger(dynamodb, localName.table('idempotency'));
    const identity = { source: 'urn:test', id: randomUUID() };
    const options = { now: Date.now(), lockMs: 10_000, ttlSeconds: 3600 };
    const first = await ledger.claim(identity, options);
    expect(first.outcome).toBe('claimed');
    expect(await ledger.claim(identity, options)).toEqual({ outcome: 'busy' });
    // After the lock, a later attempt takes over with the same routing id.
    const takeover = await ledger.claim(identity, { ...options, now: options.now + 20_000 });
    expect(takeover).toMatchObject({
      outcome: 'claimed',
      routingId: first.outcome === 'claimed' ? first.routingId : '',
    });
  });
  it("EDU-7, issue 12: an entitlement narrowed in the partner directory stops the router's deliveries within its refresh interval, without a restart", async () => {
    const type = 'nl.edu.router.revoked.v1';
    const subscription = await subscribe({ types: [type] });
    const ours = async () => (await deliveries()).filter((d) => d.subscriptionId === subscription);
    expect((await route([eventJson(type)])).failures).toEqual([]);
    expect(await ours()).toHaveLength(1);

    const store = new DynamoDbPartnerStore(dynamodb, localName.table('partners'));
    const before = await store.load();
    const narrowed = before.partners.map((p) =>
      p.clientId === 'school-a' ? { ...p, entitlements: [{ typePrefix: 'nl.edu.other.' }] } : p,
    );
    await store.save({ ...before, revision: before.revision + 1, partners: narrowed }, before.revision);
    try {
      await eventually(
        'the router to stop delivering to school-a',
        async () => {
          expect((await route([eventJson(type)])).failures).toEqual([]);
          return (await ours()).length === 0;
        },
        { timeoutMs: 5000 },
      );
    } finally {
      const now = await store.load();
      await store.save({ ...now, revision: now.revision + 1, partners: before.partners }, now.revision);
    }
  });
});
