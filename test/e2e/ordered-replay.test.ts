/**
 * Issue 33, "Replays of an ordered subscription are in order per key too" (ORD-7), on the laptop
 * host: keys' events published to an ordered push subscription, delivered live in order, then the
 * window replayed (the archive in s3rver, the replay worker, the replay's own lanes in dynalite, the
 * deliveries queue, the delivery function) to the same HTTPS receiver. Each key's replayed events
 * must arrive in acceptance order, one at a time, with `sequence` from 1 in the replay and
 * `Koerier-Replay-Id` telling them from the live ones; the same on an ordered pull subscription,
 * with the lock's `replay`. Unit tests: test/unit/ordering/ordered-replay.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi } from '../support/koerier-api.js';
import { publishKeysInTurn } from '../support/keyed-deliveries.js';
import type { TestHost } from '../support/host.js';
import { startOrderedTestHost } from '../support/ordered-test-host.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
  type RecordedRequest,
} from '../support/https-receiver.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const KEYS = 6;
const EVENTS = 8;
const CONNECTIONS = 3;

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let receiver: HttpsReceiver;

beforeAll(async () => {
  koerier = await startOrderedTestHost(authority);
  receiver = await startHttpsReceiver({ authority, script: scripts.always({ respond: 204 }) });
});

afterAll(async () => {
  await receiver?.close();
  await koerier?.stop();
});

interface Arrived {
  readonly key: string;
  readonly n: number;
  readonly sequence: number;
}

const arrivals = (requests: readonly RecordedRequest[]): Arrived[] =>
  requests.map((request) => {
    const event = JSON.parse(request.body) as { partitionkey: string; sequence: string; data: { n: number } };
    expect(event.sequence).toMatch(/^\d{10}$/);
    return { key: event.partitionkey, n: event.data.n, sequence: Number(event.sequence) };
  });

/** Per key, as they arrived: [published as event n of the key, sequence]. */
const byKey = (arrived: readonly Arrived[]) =>
  Array.from({ length: KEYS }, (_, k) => ({
    key: k,
    arrived: arrived.filter((one) => one.key === `key-${k}`).map((one) => [one.n, one.sequence]),
  }));

const inOrder = Array.from({ length: KEYS }, (_, k) => ({
  key: k,
  arrived: Array.from({ length: EVENTS }, (_, i) => [i + 1, i + 1]),
}));

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e-ordered-replay';

/**
 * An ordered push subscription to `sink` (`park` on failure) of a type of its own, and `size`'s
 * keys × events published to it; with `from`, the start of a replay window holding them all.
 */
async function parkSubscriptionWithEvents(
  sink: HttpsReceiver,
  name: string,
  size: { readonly keys: number; readonly events: number; readonly connections: number },
) {
  const subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  const type = `nl.example.${name}.${randomUUID().slice(0, 8)}.v1`;
  const created = await callApi(koerier.url, subscriber, 'POST', '/subscriptions', {
    sink: sink.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: sink.sinkCredential,
    ordering: { key: 'partitionkey', onFailure: 'park' },
  });
  expect(created.status).toBe(201);
  const token = await koerier.token('dev-publisher', ['events:publish']);
  const from = new Date(Date.now() - 1000).toISOString();
  await publishKeysInTurn(koerier.url, token, { source: SOURCE, type, ...size });
  return { subscriber, id: created.body['id'] as string, from };
}

describe('replay of an ordered push subscription on the laptop host (issue 33)', () => {
  it(`ORD-7: ${KEYS} keys × ${EVENTS} events delivered in order, then the window replayed: each key's replayed events arrive in acceptance order, sequence 1..${EVENTS} in the replay, marked with the replay`, async () => {
    const { subscriber, id, from } = await parkSubscriptionWithEvents(receiver, 'ordered-replay', {
      keys: KEYS,
      events: EVENTS,
      connections: CONNECTIONS,
    });
    await receiver.waitForRequests(KEYS * EVENTS, { timeoutMs: 90_000 });
    const live = receiver.requests.filter((r) => r.method === 'POST');
    expect(live.every((r) => r.headers['koerier-replay-id'] === undefined)).toBe(true);
    expect(byKey(arrivals(live))).toEqual(inOrder);

    const to = new Date(Date.now()).toISOString();
    const replayStarted = Date.now();
    const started = await callApi(koerier.url, subscriber, 'POST', `/subscriptions/${id}/replays`, { from, to });
    expect(started.status).toBe(202);
    const replayId = started.body['id'] as string;
    const replayed = () =>
      receiver.requests.filter((r) => r.method === 'POST' && r.headers['koerier-replay-id'] !== undefined);
    await eventually(`${KEYS * EVENTS} replayed deliveries`, () => replayed().length >= KEYS * EVENTS, {
      timeoutMs: 90_000,
      intervalMs: 250,
    });
    console.log(`ordered replay: ${KEYS * EVENTS} events replayed ${Date.now() - replayStarted} ms after the request`);
    // Anything delivered twice would come within a moment of the rest.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const progress = await callApi(koerier.url, subscriber, 'GET', `/subscriptions/${id}/replays/${replayId}`);
    expect(progress.body).toMatchObject({ state: 'finished', matched: KEYS * EVENTS, sent: KEYS * EVENTS });
    expect(replayed()).toHaveLength(KEYS * EVENTS);
    expect(new Set(replayed().map((r) => r.headers['koerier-replay-id']))).toEqual(new Set([replayId]));
    // In arrival order per key: acceptance order, and the replay's own sequence from 1 without a gap.
    expect(byKey(arrivals(replayed()))).toEqual(inOrder);
  }, 240_000);

  it('ORD-7: the same on an ordered pull subscription: a receive hands out one replayed event per key at a time, each key in acceptance order, sequence 1..n in the replay, each lock naming the replay', async () => {
    const consumer = await koerier.token('dev-subscriber', ['events:consume', 'subscriptions:manage']);
    const type = `nl.example.ordered-replay-pull.${randomUUID().slice(0, 8)}.v1`;
    const created = await callApi(koerier.url, consumer, 'POST', '/subscriptions', {
      delivery: 'pull',
      types: [type],
      ordering: { key: 'partitionkey' },
    });
    expect(created.status).toBe(201);
    const id = created.body['id'] as string;
    const keys = 4;
    const events = 5;
    const from = new Date(Date.now() - 1000).toISOString();
    const token = await koerier.token('dev-publisher', ['events:publish']);
    await publishKeysInTurn(koerier.url, token, { source: SOURCE, type, keys, events, connections: 2 });
    /** Receives and acknowledges until `count` events came; per receive, never two of one key. */
    const drain = async (count: number) => {
      const got: { key: string; n: number; sequence: number; replayId: string | undefined }[] = [];
      await eventually(
        `${count} pulled events`,
        async () => {
          const answer = await callApi(koerier.url, consumer, 'POST', `/subscriptions/${id}/events/receive`, {
            maxevents: 10,
            waitseconds: 0,
          });
          expect(answer.status).toBe(200);
          const received = answer.body['events'] as { partitionkey: string; sequence: string; data: { n: number } }[];
          const locks = answer.body['locks'] as { locktoken: string; replay?: { id: string } }[];
          expect(new Set(received.map((event) => event.partitionkey)).size).toBe(received.length);
          received.forEach((event, i) =>
            got.push({
              key: event.partitionkey,
              n: event.data.n,
              sequence: Number(event.sequence),
              replayId: locks[i]!.replay?.id,
            }),
          );
          if (locks.length > 0) {
            const tokens = locks.map((lock) => lock.locktoken);
            const acked = await callApi(koerier.url, consumer, 'POST', `/subscriptions/${id}/events/acknowledge`, {
              locktokens: tokens,
            });
            expect(acked.status).toBe(200);
          }
          return got.length >= count;
        },
        { timeoutMs: 90_000, intervalMs: 200 },
      );
      return got;
    };
    const expected = Array.from({ length: keys }, (_, k) => ({
      key: k,
      arrived: Array.from({ length: events }, (_, i) => [i + 1, i + 1]),
    }));
    const perKey = (got: Awaited<ReturnType<typeof drain>>) =>
      Array.from({ length: keys }, (_, k) => ({
        key: k,
        arrived: got.filter((one) => one.key === `key-${k}`).map((one) => [one.n, one.sequence]),
      }));
    const live = await drain(keys * events);
    expect(live.every((one) => one.replayId === undefined)).toBe(true);
    expect(perKey(live)).toEqual(expected);

    const started = await callApi(koerier.url, consumer, 'POST', `/subscriptions/${id}/replays`, {
      from,
      to: new Date().toISOString(),
    });
    expect(started.status).toBe(202);
    const replayed = await drain(keys * events);
    expect(replayed).toHaveLength(keys * events);
    expect(new Set(replayed.map((one) => one.replayId))).toEqual(new Set([started.body['id']]));
    expect(perKey(replayed)).toEqual(expected);
  }, 240_000);

  it('ORD-7, ORD-4: a key that fails in a replay with park: its replayed event is a dead letter and its later replayed events wait while the other keys finish; the redrive delivers it, then the rest, in order in the replay', async () => {
    const KEYS_HERE = 3;
    const EVENTS_HERE = 4;
    const FAILING = { key: 'key-0', n: 2 };
    let refused = false;
    /** The replay's deliveries the receiver took, as they came. */
    const replayedTaken: Arrived[] = [];
    // Live deliveries all taken; in the replay, the failing event refused once (415: a dead letter).
    const failing = await startHttpsReceiver({
      authority,
      script: (_, request) => {
        if (request.headers['koerier-replay-id'] === undefined) return { respond: 204 };
        const [event] = arrivals([request]);
        if (!refused && event!.key === FAILING.key && event!.n === FAILING.n) {
          refused = true;
          return { respond: 415 };
        }
        replayedTaken.push(event!);
        return { respond: 204 };
      },
    });
    try {
      const { subscriber, id, from } = await parkSubscriptionWithEvents(failing, 'ordered-replay-park', {
        keys: KEYS_HERE,
        events: EVENTS_HERE,
        connections: 1,
      });
      await failing.waitForRequests(KEYS_HERE * EVENTS_HERE, { timeoutMs: 90_000 });

      const started = await callApi(koerier.url, subscriber, 'POST', `/subscriptions/${id}/replays`, {
        from,
        to: new Date().toISOString(),
      });
      expect(started.status).toBe(202);
      /** The replay's 2xx deliveries of `key`, as they arrived: [n, sequence]. */
      const replayedOf = (key: string) =>
        replayedTaken.filter((one) => one.key === key).map((one) => [one.n, one.sequence]);
      const all = Array.from({ length: EVENTS_HERE }, (_, i) => [i + 1, i + 1]);
      const others = Array.from({ length: KEYS_HERE - 1 }, (_, k) => `key-${k + 1}`);
      await eventually(
        () => `the other keys replayed; got ${JSON.stringify(others.map(replayedOf))}`,
        () => refused && others.every((key) => replayedOf(key).length === EVENTS_HERE),
        { timeoutMs: 90_000, intervalMs: 250 },
      );
      for (const key of others) expect(replayedOf(key)).toEqual(all);
      const deadLetters = async () =>
        (
          (await callApi(koerier.url, subscriber, 'GET', `/subscriptions/${id}/dead-letters`)).body[
            'deadLetters'
          ] as unknown[]
        ).length;
      await eventually('the replayed event’s dead letter', async () => (await deadLetters()) === 1);
      await staysQuiet(
        'a parked replayed event delivered before the redrive',
        () => replayedOf(FAILING.key).length > FAILING.n - 1 && replayedOf(FAILING.key),
        3_000,
      );
      const redrive = await callApi(koerier.url, subscriber, 'POST', `/subscriptions/${id}/dead-letters/redrive`, {
        all: true,
      });
      expect(redrive.status).toBe(202);
      await eventually(
        () => `the key's replay after the redrive; got ${JSON.stringify(replayedOf(FAILING.key))}`,
        () => replayedOf(FAILING.key).length === EVENTS_HERE,
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      // The redriven event in its place in the replay, then the parked ones: sequence 1..n of the replay.
      expect(replayedOf(FAILING.key)).toEqual(all);
    } finally {
      await failing.close();
    }
  }, 240_000);
});
