/**
 * Pull delivery end to end on the laptop host (docs/PULL.md, CARD-7, EDU-17): a pull subscription
 * through the subscriptions API, events published at POST /events, routed into the subscription's
 * own queue on the SQS emulator, received with locks and settled by lock token over HTTP. Every
 * received event is parsed with the official CloudEvents SDK.
 *
 * Tests that wait out a lock run side by side, each on a subscription and an event type of its own.
 */
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiAs, callApi, publishEvent, type ApiAnswer, type KoerierClient } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e-pull';
let koerier: TestHost;
let publisher: KoerierClient;
/** What each test publishes, under a type of its own. */
const EXAMPLE = { source: SOURCE, subject: 'leerling/7', data: { hello: 'world', n: 1.5 } };
let consumer: string;

beforeAll(async () => {
  koerier = await startTestHost();
  publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
  consumer = await koerier.token('dev-subscriber', ['events:consume', 'subscriptions:manage']);
});

afterAll(async () => {
  await koerier?.stop();
});

interface Lock {
  readonly locktoken: string;
  readonly lockeduntil: string;
  readonly deliverycount: number;
  readonly deliverykey: string;
}

interface Received {
  readonly status: number;
  readonly text: string;
  readonly events: Record<string, unknown>[];
  readonly locks: Lock[];
  readonly elapsedMs: number;
}

async function call(method: string, path: string, body?: unknown, token = consumer): Promise<ApiAnswer> {
  return callApi(koerier.url, token, method, path, body);
}

/** A pull subscription to an event type of its own. */
async function pullSubscription(settings: Record<string, unknown> = {}): Promise<{ id: string; type: string }> {
  const type = `nl.example.pull.${randomUUID().slice(0, 8)}.v1`;
  const created = await call('POST', '/subscriptions', { delivery: 'pull', types: [type], ...settings });
  expect(created.status).toBe(201);
  return { id: created.body['id'] as string, type };
}

/** POST …/events/receive; every event in the answer must parse with the official SDK as a batch. */
async function receive(id: string, request: Record<string, unknown> = {}, token = consumer): Promise<Received> {
  const started = Date.now();
  const answer = await call('POST', `/subscriptions/${id}/events/receive`, request, token);
  const elapsedMs = Date.now() - started;
  if (answer.status !== 200) return { status: answer.status, text: answer.text, events: [], locks: [], elapsedMs };
  const events = answer.body['events'] as Record<string, unknown>[];
  const locks = answer.body['locks'] as Lock[];
  expect(locks).toHaveLength(events.length);
  // CE-13 and the SDK: the events member is a CloudEvents batch, parsed as one.
  const parsed = HTTP.toEvent({
    headers: { 'content-type': 'application/cloudevents-batch+json' },
    body: JSON.stringify(events),
  });
  expect(Array.isArray(parsed) ? parsed.length : 1).toBe(events.length);
  for (const event of events)
    expect(
      HTTP.toEvent({ headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify(event) }),
    ).toMatchObject({ id: event['id'] });
  return { status: answer.status, text: answer.text, events, locks, elapsedMs };
}

async function settle(id: string, action: string, body: Record<string, unknown>, token = consumer) {
  const answer = await call('POST', `/subscriptions/${id}/events/${action}`, body, token);
  expect(answer.status).toBe(200);
  return answer.body as {
    succeeded: { locktoken: string; newlocktoken?: string; lockeduntil?: string }[];
    failed: { locktoken: string; error: { code: string } }[];
  };
}

async function queueExists(name: string): Promise<boolean> {
  try {
    await koerier.host.awsClients.sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    return true;
  } catch {
    return false;
  }
}

describe('pull subscriptions (CARD-7, EDU-17)', () => {
  it('EDU-17: a pull subscription is active at once, without sink or handshake, with its queue and dead-letter queue', async () => {
    const type = `nl.example.pull.${randomUUID().slice(0, 8)}.v1`;
    const created = await call('POST', '/subscriptions', {
      delivery: 'pull',
      types: [type],
      maxdeliverycount: 3,
      retentionseconds: 3600,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      delivery: 'pull',
      status: 'active',
      maxdeliverycount: 3,
      retentionseconds: 3600,
    });
    expect(created.body).not.toHaveProperty('sink');
    const id = created.body['id'] as string;
    for (const name of [`koerier-pull-${id}`, `koerier-pull-${id}-dlq`]) {
      const sqs = koerier.host.awsClients.sqs;
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
      const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));
      // Encrypted, TLS only, kept as long as the subscription says.
      expect(Attributes['SqsManagedSseEnabled'], name).toBe('true');
      expect(JSON.parse(Attributes['Policy'] ?? '{}'), name).toMatchObject({
        Statement: [{ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }],
      });
      expect(Attributes['MessageRetentionPeriod'], name).toBe('3600');
    }
    const { QueueUrl } = await koerier.host.awsClients.sqs.send(
      new GetQueueUrlCommand({ QueueName: `koerier-pull-${id}` }),
    );
    const { Attributes = {} } = await koerier.host.awsClients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['RedrivePolicy'] }),
    );
    // The backstop for a crash: SQS moves it one receive after Koerier would have.
    expect(JSON.parse(Attributes['RedrivePolicy'] ?? '{}')).toMatchObject({ maxReceiveCount: 4 });
  });

  it('EDU-17: push members in a pull subscription, and pull settings in a push one, are refused by name', async () => {
    const pull = await call('POST', '/subscriptions', {
      delivery: 'pull',
      sink: 'https://example.org/hook',
      maxdeliverycount: 0,
    });
    expect(pull.status).toBe(400);
    expect(
      (pull.body['errors'] as { attribute: string; rule: string }[]).map((e) => `${e.attribute}:${e.rule}`).sort(),
    ).toEqual(['maxdeliverycount:range', 'sink:push-only']);
    const push = await call('POST', '/subscriptions', { sink: 'https://example.org/hook', retentionseconds: 60 });
    expect(push.status).toBe(400);
    expect(
      (push.body['errors'] as { attribute: string; rule: string }[]).map((e) => `${e.attribute}:${e.rule}`),
    ).toContain('retentionseconds:pull-only');
  });

  it('EDU-7: a pull subscription outside the entitlement is refused as a push one is', async () => {
    const stranger = await koerier.host.issueToken('pull-stranger', ['subscriptions:manage']);
    const refused = await call(
      'POST',
      '/subscriptions',
      { delivery: 'pull', types: ['nl.example.pull.x.v1'] },
      stranger,
    );
    expect(refused.status).toBe(403);
  });

  it('EDU-17: a PATCH cannot turn a pull subscription into a push one', async () => {
    const { id } = await pullSubscription();
    const patched = await call('PATCH', `/subscriptions/${id}`, { delivery: 'push' });
    expect(patched.status).toBe(400);
  });
});

describe.concurrent('receive and settle (CARD-7, EDU-17, EDU-IDEM-2, CE-13)', () => {
  it('CARD-7: a long poll returns as soon as an event is routed, long before its wait ends, with the event exactly as accepted', async () => {
    const { id, type } = await pullSubscription();
    const waitSeconds = 20;
    const pending = receive(id, { waitseconds: waitSeconds, maxevents: 10 });
    const published = await publishEvent(publisher, { ...EXAMPLE, type });
    const received = await pending;
    expect(received.status).toBe(200);
    expect(received.events).toHaveLength(1);
    // Returned once the event was there: well inside the wait it asked for.
    expect(received.elapsedMs).toBeLessThan((waitSeconds * 1000) / 2);
    // CE-13: byte for byte as published.
    expect(received.text).toContain(published);
    const [lock] = received.locks;
    expect(lock).toMatchObject({ deliverycount: 1 });
    expect(lock!.deliverykey).toMatch(UUID_V4);
    expect(lock!.locktoken).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(lock!.locktoken).not.toContain('koerier');
  });

  it('EDU-17: an acknowledged event is gone from the queue', async () => {
    const { id, type } = await pullSubscription();
    await publishEvent(publisher, { ...EXAMPLE, type });
    const received = await receive(id, { waitseconds: 20, lockseconds: 30 });
    expect(received.events).toHaveLength(1);
    const token = received.locks[0]!.locktoken;
    const acknowledged = await settle(id, 'acknowledge', { locktokens: [token] });
    expect(acknowledged).toEqual({ succeeded: [{ locktoken: token }], failed: [] });
    expect(await messagesIn(`koerier-pull-${id}`)).toEqual({ visible: 0, locked: 0 });
  });

  it('EDU-17, EDU-IDEM-2: an event not settled comes back after its lock, its delivery count raised, the same delivery key; its old token is then LockLost', async () => {
    const { id, type } = await pullSubscription();
    const published = await publishEvent(publisher, { ...EXAMPLE, type });
    const first = await receive(id, { waitseconds: 20, lockseconds: 10 });
    expect(first.events).toHaveLength(1);
    const again = await eventually(
      'the event again after its lock',
      async () => {
        const next = await receive(id, { waitseconds: 20, lockseconds: 30 });
        return next.events.length > 0 ? next : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(again.text).toContain(published);
    expect(again.locks[0]).toMatchObject({ deliverycount: 2, deliverykey: first.locks[0]!.deliverykey });
    // A stale token: its lock ended, so Koerier answers LockLost itself.
    const stale = await settle(id, 'acknowledge', { locktokens: [first.locks[0]!.locktoken] });
    expect(stale.failed).toEqual([
      { locktoken: first.locks[0]!.locktoken, error: { code: 'LockLost', message: expect.any(String) } },
    ]);
    expect(stale.succeeded).toEqual([]);
    expect((await messagesIn(`koerier-pull-${id}`)).locked).toBe(1);
  });

  it('EDU-17: a released event is visible again after its delay, not before', async () => {
    const { id, type } = await pullSubscription();
    await publishEvent(publisher, { ...EXAMPLE, type });
    const first = await receive(id, { waitseconds: 20, lockseconds: 300 });
    const released = await settle(id, 'release', { locktokens: [first.locks[0]!.locktoken], delayseconds: 3 });
    expect(released.succeeded).toHaveLength(1);
    const releasedAt = Date.now();
    expect((await receive(id, { waitseconds: 0 })).events).toHaveLength(0);
    const again = await receive(id, { waitseconds: 20 });
    expect(again.events).toHaveLength(1);
    expect(Date.now() - releasedAt).toBeGreaterThanOrEqual(2_000);
    expect(again.locks[0]).toMatchObject({ deliverycount: 2, deliverykey: first.locks[0]!.deliverykey });
  });

  it('EDU-17: a renewed lock outlives the first one; the new token acknowledges', async () => {
    const { id, type } = await pullSubscription();
    await publishEvent(publisher, { ...EXAMPLE, type });
    const first = await receive(id, { waitseconds: 20, lockseconds: 10 });
    const renewed = await settle(id, 'renew-lock', { locktokens: [first.locks[0]!.locktoken], lockseconds: 120 });
    expect(renewed.failed).toEqual([]);
    const newToken = renewed.succeeded[0]!.newlocktoken!;
    expect(newToken).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Date.parse(renewed.succeeded[0]!.lockeduntil!)).toBeGreaterThan(
      Date.parse(first.locks[0]!.lockeduntil) + 60_000,
    );
    // Past the first lock, the event stays with this consumer.
    await staysQuiet(
      'the event handed out again',
      async () => (await receive(id, { waitseconds: 1 })).events.length > 0,
      12_000,
      { intervalMs: 500 },
    );
    expect(await settle(id, 'acknowledge', { locktokens: [newToken] })).toEqual({
      succeeded: [{ locktoken: newToken }],
      failed: [],
    });
  });

  it('EDU-18: a rejected event goes to the dead letters with its reason, is redriven, and is received again under a new key', async () => {
    const { id, type } = await pullSubscription();
    const published = await publishEvent(publisher, { ...EXAMPLE, type });
    const first = await receive(id, { waitseconds: 20 });
    const rejected = await settle(id, 'reject', {
      locktokens: [first.locks[0]!.locktoken],
      reason: 'unknown leerling',
    });
    expect(rejected.succeeded).toHaveLength(1);
    // The next receive moves it to the dead letters instead of handing it out.
    expect((await receive(id, { waitseconds: 1 })).events).toHaveLength(0);
    const deadLetters = await call('GET', `/subscriptions/${id}/dead-letters`);
    expect(deadLetters.status).toBe(200);
    const [deadLetter] = deadLetters.body['deadLetters'] as Record<string, unknown>[];
    expect(deadLetter).toMatchObject({
      reason: 'rejected',
      detail: 'unknown leerling',
      deliveryId: first.locks[0]!.deliverykey,
    });
    const redrive = await call('POST', `/subscriptions/${id}/dead-letters/redrive`, { all: true });
    expect(redrive.status).toBe(202);
    const again = await receive(id, { waitseconds: 20 });
    expect(again.text).toContain(published);
    expect(again.locks[0]!.deliverycount).toBe(1);
    expect(again.locks[0]!.deliverykey).not.toBe(first.locks[0]!.deliverykey);
    expect(((await call('GET', `/subscriptions/${id}/dead-letters`)).body['deadLetters'] as unknown[]).length).toBe(0);
  });

  it('EDU-17: an event received maxdeliverycount times goes to the dead letters and is not handed out again', async () => {
    const { id, type } = await pullSubscription({ maxdeliverycount: 2 });
    await publishEvent(publisher, { ...EXAMPLE, type });
    for (let delivery = 1; delivery <= 2; delivery++) {
      const received = await receive(id, { waitseconds: 20 });
      expect(received.locks.map((lock) => lock.deliverycount)).toEqual([delivery]);
      await settle(id, 'release', { locktokens: [received.locks[0]!.locktoken] });
    }
    expect((await receive(id, { waitseconds: 1 })).events).toHaveLength(0);
    const deadLetters = (await call('GET', `/subscriptions/${id}/dead-letters`)).body['deadLetters'] as Record<
      string,
      unknown
    >[];
    expect(deadLetters).toMatchObject([{ reason: 'max-deliveries', attempts: 2 }]);
    expect(await messagesIn(`koerier-pull-${id}`)).toEqual({ visible: 0, locked: 0 });
  });

  it("EDU-7: another client's subscription is 404; a token of another subscription is NotOwner; a made-up one InvalidToken", async () => {
    const mine = await pullSubscription();
    const other = await pullSubscription();
    await publishEvent(publisher, { ...EXAMPLE, type: mine.type });
    const received = await receive(mine.id, { waitseconds: 20 });
    const token = received.locks[0]!.locktoken;
    const stranger = await koerier.host.issueToken('pull-stranger', ['events:consume']);
    expect((await receive(mine.id, {}, stranger)).status).toBe(404);
    expect(
      (await call('POST', `/subscriptions/${mine.id}/events/acknowledge`, { locktokens: [token] }, stranger)).status,
    ).toBe(404);
    const forged = `${token.slice(0, -4)}AAAA`;
    const answer = await settle(other.id, 'acknowledge', { locktokens: [token, 'not-a-token', forged, token] });
    expect(answer.succeeded).toEqual([]);
    expect(answer.failed.map((f) => f.error.code)).toEqual([
      'NotOwner',
      'InvalidToken',
      'InvalidToken',
      'DuplicateToken',
    ]);
    // Still locked to its own subscription's consumer.
    expect(await settle(mine.id, 'acknowledge', { locktokens: [token] })).toEqual({
      succeeded: [{ locktoken: token }],
      failed: [],
    });
  });

  it('EDU-17: the receive bounds are checked, every wrong member named', async () => {
    const { id } = await pullSubscription();
    const bad = await call('POST', `/subscriptions/${id}/events/receive`, {
      maxevents: 101,
      waitseconds: 21,
      lockseconds: 9,
      extra: 1,
    });
    expect(bad.status).toBe(400);
    expect((bad.body['errors'] as { attribute: string }[]).map((e) => e.attribute).sort()).toEqual([
      'extra',
      'lockseconds',
      'maxevents',
      'waitseconds',
    ]);
  });

  it('EDU-17: up to maxevents events in one receive (more than one SQS call holds), in one CloudEvents batch, each with its own lock', async () => {
    const { id, type } = await pullSubscription();
    const published = await Promise.all(
      Array.from({ length: 25 }, () => publishEvent(publisher, { ...EXAMPLE, type })),
    );
    await eventually('25 events routed', async () => (await messagesIn(`koerier-pull-${id}`)).visible === 25, {
      timeoutMs: 20_000,
    });
    const received = await receive(id, { waitseconds: 5, maxevents: 100 });
    expect(received.events.map((e) => e['id'] as string).sort()).toEqual(
      published.map((e) => JSON.parse(e).id as string).sort(),
    );
    for (const event of published) expect(received.text).toContain(event);
    expect(new Set(received.locks.map((l) => l.locktoken)).size).toBe(25);
    expect(new Set(received.locks.map((l) => l.deliverykey)).size).toBe(25);
    const fewer = await pullSubscription();
    await Promise.all(Array.from({ length: 12 }, () => publishEvent(publisher, { ...EXAMPLE, type: fewer.type })));
    await eventually('12 events routed', async () => (await messagesIn(`koerier-pull-${fewer.id}`)).visible === 12, {
      timeoutMs: 20_000,
    });
    expect((await receive(fewer.id, { waitseconds: 5, maxevents: 11 })).events).toHaveLength(11);
  });

  it('EDU-17: deleting a pull subscription deletes its queues; its consumer then gets 404', async () => {
    const { id, type } = await pullSubscription();
    await publishEvent(publisher, { ...EXAMPLE, type });
    const received = await receive(id, { waitseconds: 20 });
    expect((await call('DELETE', `/subscriptions/${id}`)).status).toBe(200);
    expect(await queueExists(`koerier-pull-${id}`)).toBe(false);
    expect(await queueExists(`koerier-pull-${id}-dlq`)).toBe(false);
    expect((await receive(id, { waitseconds: 0 })).status).toBe(404);
    expect(
      (await call('POST', `/subscriptions/${id}/events/acknowledge`, { locktokens: [received.locks[0]!.locktoken] }))
        .status,
    ).toBe(404);
  });
});

/** `visible`: on the emulator, every message not delayed (locked ones too); `locked`: the ones a receive holds. */
async function messagesIn(queueName: string): Promise<{ visible: number; locked: number }> {
  const sqs = koerier.host.awsClients.sqs;
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes['ApproximateNumberOfMessages']),
    locked: Number(Attributes['ApproximateNumberOfMessagesNotVisible']),
  };
}
