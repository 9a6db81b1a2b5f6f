/**
 * Settling pulled events end to end on the laptop host (docs/PULL.md): a lock given up — released,
 * rejected — no longer settles anything, even once the event was received again under a new lock
 * (issue 28 item 14e); and the pull routes honour an Idempotency-Key (EDU-IDEM-3, issue 36 item 4):
 * the same key with the same body answers the first answer again without a second change, the
 * same key with another body is 422. Same harness as delivery-pull.test.ts: a pull subscription
 * through the API, events published at POST /events and routed into the emulated SQS queue.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi, tryPublish } from '../support/koerier-api.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e-pull-settle';
let koerier: TestHost;
let publisher: string;
let consumer: string;

beforeAll(async () => {
  koerier = await startTestHost();
  publisher = await koerier.token('dev-publisher', ['events:publish']);
  consumer = await koerier.token('dev-subscriber', ['events:consume', 'subscriptions:manage']);
});

afterAll(async () => {
  await koerier?.stop();
});

interface Lock {
  readonly locktoken: string;
  readonly deliverycount: number;
  readonly deliverykey: string;
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: Record<string, unknown>;
}

interface Settled {
  readonly succeeded: { locktoken: string; newlocktoken?: string }[];
  readonly failed: { locktoken: string; error: { code: string } }[];
}

/**
 * A call as the consumer, sent by hand: the pull routes take an Idempotency-Key but do not need one,
 * and these tests choose when to send it (the generated client would add one to every POST).
 */
async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${koerier.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${consumer}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

/** A pull subscription to an event type of its own, with `count` events already waiting in its queue. */
async function subscriptionWithEvents(count: number): Promise<string> {
  const type = `nl.example.pull.${randomUUID().slice(0, 8)}.v1`;
  const created = await callApi(koerier.url, consumer, 'POST', '/subscriptions', { delivery: 'pull', types: [type] });
  expect(created.status).toBe(201);
  for (let n = 0; n < count; n++) {
    const event = JSON.stringify({ specversion: '1.0', id: randomUUID(), source: SOURCE, type, data: { n } });
    const published = await tryPublish(koerier.url, publisher, event);
    expect(published.status).toBe(202);
  }
  return created.body['id'] as string;
}

const receivePath = (id: string) => `/subscriptions/${id}/events/receive`;
const settlePath = (id: string, action: string) => `/subscriptions/${id}/events/${action}`;
const locksOf = (answer: Answer) => answer.body['locks'] as Lock[];

/** Receives until `count` events are locked (the router queues each a moment after its 202): their locks. */
async function receiveAll(id: string, count: number): Promise<Lock[]> {
  const locks: Lock[] = [];
  const deadline = Date.now() + 15_000;
  while (locks.length < count && Date.now() < deadline) {
    const answer = await call('POST', receivePath(id), {
      maxevents: count - locks.length,
      waitseconds: 5,
      lockseconds: 60,
    });
    expect(answer.status).toBe(200);
    locks.push(...locksOf(answer));
  }
  expect(locks).toHaveLength(count);
  return locks;
}

async function settle(
  id: string,
  action: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Settled> {
  const answer = await call('POST', settlePath(id, action), body, headers);
  expect(answer.status, answer.text).toBe(200);
  return answer.body as unknown as Settled;
}

describe('a lock given up settles nothing (issue 28 item 14e)', () => {
  it('EDU-17, issue 28 item 14e: after consumer A releases and consumer B receives the event again, A’s old token is LockLost and B’s still acknowledges', async () => {
    const id = await subscriptionWithEvents(1);
    const a = (await receiveAll(id, 1))[0]!;
    expect((await settle(id, 'release', { locktokens: [a.locktoken] })).succeeded).toHaveLength(1);
    const b = (await receiveAll(id, 1))[0]!;
    expect(b.deliverykey).toBe(a.deliverykey);
    expect(b.deliverycount).toBe(a.deliverycount + 1);
    // A's lock is not over by its own time: only the release ended it.
    for (const action of ['acknowledge', 'renew-lock', 'release', 'reject']) {
      const stale = await settle(id, action, { locktokens: [a.locktoken] });
      expect(stale, action).toEqual({
        succeeded: [],
        failed: [{ locktoken: a.locktoken, error: { code: 'LockLost', message: expect.any(String) } }],
      });
    }
    // Nothing A did reached the event: B's lock holds, and B's acknowledge is what removes it.
    expect(await settle(id, 'acknowledge', { locktokens: [b.locktoken] })).toEqual({
      succeeded: [{ locktoken: b.locktoken }],
      failed: [],
    });
    expect(locksOf(await call('POST', receivePath(id), { waitseconds: 0 }))).toEqual([]);
  });

  it('EDU-17, EDU-18, issue 28 item 14e: a rejected event’s token no longer acknowledges: the reject stands and the event goes to the dead letters', async () => {
    const id = await subscriptionWithEvents(1);
    const lock = (await receiveAll(id, 1))[0]!;
    expect((await settle(id, 'reject', { locktokens: [lock.locktoken], reason: 'not ours' })).succeeded).toHaveLength(
      1,
    );
    const late = await settle(id, 'acknowledge', { locktokens: [lock.locktoken] });
    expect(late.failed).toEqual([
      { locktoken: lock.locktoken, error: { code: 'LockLost', message: expect.any(String) } },
    ]);
    // The next receive moves it to the dead letters with the reject's reason.
    expect(locksOf(await call('POST', receivePath(id), { waitseconds: 1 }))).toEqual([]);
    const deadLetters = await call('GET', `/subscriptions/${id}/dead-letters`);
    expect(deadLetters.body['deadLetters']).toEqual([
      expect.objectContaining({ reason: 'rejected', detail: 'not ours', deliveryId: lock.deliverykey }),
    ]);
  });
});

describe('the pull routes honour an Idempotency-Key (EDU-IDEM-3, issue 36 item 4)', () => {
  const keyed = (key: string) => ({ 'idempotency-key': key });
  const idsOf = (answer: Answer) => (answer.body['events'] as { id: string }[]).map((event) => event.id);

  it('EDU-IDEM-3, issue 36 item 4: a receive repeated with its key answers the same events and locks again and takes no new ones; another body with that key is 422', async () => {
    const id = await subscriptionWithEvents(3);
    // Wait until all three are queued, then give them back, so the keyed receive finds all three waiting.
    const all = await receiveAll(id, 3);
    await settle(id, 'release', { locktokens: all.map((lock) => lock.locktoken) });
    const key = randomUUID();
    const request = { maxevents: 2, waitseconds: 5, lockseconds: 60 };
    const first = await call('POST', receivePath(id), request, keyed(key));
    expect(first.status).toBe(200);
    expect(locksOf(first)).toHaveLength(2);
    const repeat = await call('POST', receivePath(id), request, keyed(key));
    expect(repeat.status).toBe(200);
    expect(repeat.text).toBe(first.text);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    expect(repeat.headers.get('cache-control')).toBe('no-store');
    // The repeat took nothing: the third event is still there, and only it.
    const rest = await call('POST', receivePath(id), { maxevents: 10, waitseconds: 1 });
    expect(idsOf(rest)).toHaveLength(1);
    expect(idsOf(first)).not.toContain(idsOf(rest)[0]);
    const other = await call('POST', receivePath(id), { ...request, maxevents: 3 }, keyed(key));
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ type: expect.stringContaining('idempotency-key-reused') });
    expect(other.headers.get('content-type')).toContain('application/problem+json');
  });

  it('EDU-IDEM-3, issue 36 item 4: a release repeated with its key answers succeeded again and changes nothing a second time: the consumer that received the event since keeps its lock', async () => {
    const id = await subscriptionWithEvents(1);
    const a = (await receiveAll(id, 1))[0]!;
    const key = randomUUID();
    const released = await call('POST', settlePath(id, 'release'), { locktokens: [a.locktoken] }, keyed(key));
    expect(released.body).toEqual({ succeeded: [{ locktoken: a.locktoken }], failed: [] });
    const b = (await receiveAll(id, 1))[0]!;
    const repeat = await call('POST', settlePath(id, 'release'), { locktokens: [a.locktoken] }, keyed(key));
    expect(repeat.text).toBe(released.text);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    // Not released again: B's lock holds, so nothing is there to receive, and B's acknowledge succeeds.
    expect(locksOf(await call('POST', receivePath(id), { waitseconds: 1 }))).toEqual([]);
    expect(await settle(id, 'acknowledge', { locktokens: [b.locktoken] })).toEqual({
      succeeded: [{ locktoken: b.locktoken }],
      failed: [],
    });
  });

  it('EDU-IDEM-3, issue 36 item 4: renew-lock, acknowledge and reject repeated with their keys answer the first answer (the same new lock token); another body is 422', async () => {
    const id = await subscriptionWithEvents(3);
    const [renewed, acknowledged, rejected] = (await receiveAll(id, 3)).map((lock) => lock.locktoken) as [
      string,
      string,
      string,
    ];
    const cases: [string, Record<string, unknown>][] = [
      ['renew-lock', { locktokens: [renewed], lockseconds: 120 }],
      ['acknowledge', { locktokens: [acknowledged] }],
      ['reject', { locktokens: [rejected], reason: 'not ours' }],
    ];
    for (const [action, body] of cases) {
      const key = randomUUID();
      const first = await call('POST', settlePath(id, action), body, keyed(key));
      expect(first.status, action).toBe(200);
      expect((first.body as unknown as Settled).succeeded, action).toHaveLength(1);
      const repeat = await call('POST', settlePath(id, action), body, keyed(key));
      expect(repeat.text, action).toBe(first.text);
      expect(repeat.headers.get('idempotent-replayed'), action).toBe('true');
      const other = await call(
        'POST',
        settlePath(id, action),
        { ...body, locktokens: [renewed, acknowledged] },
        keyed(key),
      );
      expect(other.status, action).toBe(422);
    }
  });

  it('EDU-IDEM-6, issue 36 item 4: a malformed key on a pull route is 400 before anything else; none at all still works as before', async () => {
    const id = await subscriptionWithEvents(0);
    for (const path of [receivePath(id), settlePath(id, 'acknowledge')]) {
      const malformed = await call('POST', path, { locktokens: ['x'] }, keyed('not-a-uuid'));
      expect(malformed.status, path).toBe(400);
      expect(malformed.body, path).toMatchObject({ type: expect.stringContaining('idempotency-key-malformed') });
    }
    expect((await call('POST', receivePath(id), { waitseconds: 0 })).status).toBe(200);
  });
});
