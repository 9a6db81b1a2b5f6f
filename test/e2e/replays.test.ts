/**
 * Archive and replay end to end on the laptop host (issue 13, items 1 and 2; EDU-18;
 * docs/REPLAY.md): 200 events published one request at a time over HTTP, routed and archived;
 * subscriptions created afterwards replay a window of them through the normal push path (HTTPS
 * receivers) and pull path (receive + acknowledge over HTTP).
 *
 * What Koerier guarantees about order, and so what these tests assert: each replayed delivery
 * carries its place in the replay (`Koerier-Replay-Sequence`, or `replay.sequence` in a pull
 * lock), numbered in acceptance order; deliveries themselves may arrive in another order (push
 * runs in parallel and retries, SQS standard queues do not keep order). So the tests sort by the
 * sequence and compare with the publishing order, never the arrival order.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { ARCHIVE_PREFIX, archiveObjects, decodeArchiveObject } from '../../functions/core/replay/archive-format.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { callApi, tryPublish } from '../support/koerier-api.js';
import {
  createLocalCertificateAuthority,
  scripts,
  startHttpsReceiver,
  type HttpsReceiver,
  type RecordedRequest,
} from '../support/https-receiver.js';
import { eventually, staysQuiet } from '../support/waiting.js';
import { problemTypeUri } from '../support/problem-types.js';

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e-replay';
const TYPE_A = 'nl.example.replay.open.a.v1';
const TYPE_B = 'nl.example.replay.open.b.v1';
const SECRET = 'nl.example.replay.secret.v1';
const PARTNER = 'replay-partner';
const authority = createLocalCertificateAuthority();
const receivers: HttpsReceiver[] = [];
let koerier: TestHost;
let dir: string;
let publisher: string;
let subscriber: string;
let partner: string;

interface Published {
  readonly id: string;
  readonly type: string;
  readonly json: string;
}
const published: Published[] = [];
/** The window [from, to) that covers exactly published[40..159]. */
let from: string;
let to: string;
const inWindow = () => published.slice(40, 160);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-replay-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
    // The partner starts entitled to every replay type; its EDU-7 test narrows that (issue 36, item 10).
    [settingEnv.entitlements]: JSON.stringify({
      'dev-subscriber': [{ typePrefix: '' }],
      [PARTNER]: [{ typePrefix: 'nl.example.replay.' }],
    }),
    [settingEnv.partnersRefreshSeconds]: '1',
    [settingEnv.archiveRetentionDays]: '1',
  });
  publisher = await koerier.token('dev-publisher', ['events:publish']);
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage', 'events:consume']);
  partner = await koerier.host.issueToken(PARTNER, ['subscriptions:manage', 'events:consume']);
  // One request per event, each after the previous answer: their acceptance times strictly increase.
  const requestedAt: number[] = [];
  const answeredAt: number[] = [];
  for (let i = 0; i < 200; i++) {
    const type = i % 4 === 3 ? SECRET : i % 2 === 0 ? TYPE_A : TYPE_B;
    const id = `replay-${i}-${randomUUID()}`;
    const json = JSON.stringify({ specversion: '1.0', id, source: SOURCE, type, data: { n: i } });
    requestedAt[i] = Date.now();
    const response = await tryPublish(koerier.url, publisher, json);
    expect(response.status).toBe(202);
    answeredAt[i] = Date.now();
    published.push({ id, type, json });
  }
  // Every event routed (and so archived) before any subscription below exists: they get replays only.
  await eventually('all 200 events archived', () => archivedCount().then((count) => count >= 200), {
    timeoutMs: 60_000,
    intervalMs: 500,
  });
  // Between one answer and the next request: the host's clock is this process's.
  from = new Date(Math.floor((answeredAt[39]! + requestedAt[40]!) / 2)).toISOString();
  to = new Date(Math.floor((answeredAt[159]! + requestedAt[160]!) / 2)).toISOString();
}, 180_000);

/** Events of this file's source in the archive: the router archives a batch before it routes it. */
async function archivedCount(): Promise<number> {
  const archive = koerier.host.dependencies.eventArchive;
  const keys = await archive.list(ARCHIVE_PREFIX);
  const objects = await Promise.all(keys.map((key) => archive.get(key)));
  return objects.flatMap((body) => (body ? decodeArchiveObject(body) : [])).filter((event) => event.source === SOURCE)
    .length;
}

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

const api = (method: string, path: string, body?: unknown, token = subscriber) =>
  callApi(koerier.url, token, method, path, body);

async function pushSubscription(types: readonly string[], options: { rate?: number } = {}) {
  const script = scripts.always({ respond: 204 });
  const receiver = await startHttpsReceiver({
    authority,
    script:
      options.rate === undefined
        ? script
        : (n, request) =>
            request.method === 'OPTIONS'
              ? {
                  respond: 200,
                  headers: { 'webhook-allowed-origin': '*', 'webhook-allowed-rate': String(options.rate) },
                }
              : script(n, request),
  });
  receivers.push(receiver);
  const created = await api('POST', '/subscriptions', {
    sink: receiver.url,
    types,
    validation: options.rate === undefined ? 'agreed' : 'handshake',
    sinkcredential: receiver.sinkCredential,
  });
  expect(created.status).toBe(201);
  expect(created.body['status']).toBe('active');
  return { receiver, id: created.body['id'] as string };
}

async function pullSubscription(body: Record<string, unknown>, token = subscriber): Promise<string> {
  const created = await api('POST', '/subscriptions', { delivery: 'pull', ...body }, token);
  expect(created.status).toBe(201);
  return created.body['id'] as string;
}

async function replayUntilOver(subscriptionId: string, location: string, token = subscriber, timeoutMs = 60_000) {
  return eventually(
    `replay ${location} over`,
    async () => {
      const progress = await api('GET', location, undefined, token);
      expect(progress.status).toBe(200);
      return progress.body['state'] !== 'running' && progress.body;
    },
    { timeoutMs, intervalMs: 250 },
  );
}

/** Receives and acknowledges until `count` events came, or nothing more comes. */
async function drain(subscriptionId: string, count: number, token = subscriber) {
  const got: {
    event: Record<string, unknown>;
    lock: { replay?: { id: string; sequence: number }; deliverykey: string };
  }[] = [];
  await eventually(
    `${count} pulled events`,
    async () => {
      const answer = await api(
        'POST',
        `/subscriptions/${subscriptionId}/events/receive`,
        { maxevents: 32, waitseconds: 0 },
        token,
      );
      expect(answer.status).toBe(200);
      const events = answer.body['events'] as Record<string, unknown>[];
      const locks = answer.body['locks'] as {
        locktoken: string;
        replay?: { id: string; sequence: number };
        deliverykey: string;
      }[];
      events.forEach((event, index) => got.push({ event, lock: locks[index]! }));
      if (locks.length > 0)
        expect(
          (
            await api(
              'POST',
              `/subscriptions/${subscriptionId}/events/acknowledge`,
              { locktokens: locks.map((l) => l.locktoken) },
              token,
            )
          ).status,
        ).toBe(200);
      return got.length >= count;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  return got;
}

const bySequence = <T>(items: readonly T[], sequenceOf: (item: T) => number) =>
  [...items].sort((a, b) => sequenceOf(a) - sequenceOf(b));
/** The replayed deliveries a receiver got. */
const postsOf = (receiver: HttpsReceiver) =>
  receiver.requests.filter((r) => r.method === 'POST' && r.headers['koerier-replay-id'] !== undefined);

describe('archive and replay (issue 13; EDU-18)', () => {
  it('EDU-18, CE-13: a push subscription created afterwards replays a window: exactly its 120 events, as accepted, marked, numbered in acceptance order', async () => {
    const { receiver, id } = await pushSubscription([TYPE_A, TYPE_B, SECRET]);
    const started = await api('POST', `/subscriptions/${id}/replays`, { from, to });
    expect(started.status).toBe(202);
    expect(started.location).toBe(`/v1/subscriptions/${id}/replays/${started.body['id'] as string}`);
    const requests: RecordedRequest[] = await receiver.waitForRequests(120, { timeoutMs: 90_000 });
    const progress = await replayUntilOver(id, started.location!);
    expect(progress).toMatchObject({ state: 'finished', scanned: 120, matched: 120, sent: 120, failed: 0 });

    await staysQuiet('a 121st delivery', () => postsOf(receiver).length > 120 && postsOf(receiver).length, 1_000);
    for (const request of requests) expect(request.headers['koerier-replay-id']).toBe(started.body['id']);
    const ordered = bySequence(requests, (r) => Number(r.headers['koerier-replay-sequence']));
    expect(ordered.map((r) => Number(r.headers['koerier-replay-sequence']))).toEqual(
      Array.from({ length: 120 }, (_, i) => i + 1),
    );
    // CE-13: each body is the event byte for byte as published, in publishing (= acceptance) order.
    expect(ordered.map((r) => r.body)).toEqual(inWindow().map((p) => p.json));
    // New delivery keys (EDU-IDEM-13): one per event, none repeated.
    expect(new Set(requests.map((r) => r.headers['idempotency-key'])).size).toBe(120);
  }, 120_000);

  it('EDU-18, EDU-17: a pull subscription replays the same window: the 120 events, each lock naming the replay and its place', async () => {
    const id = await pullSubscription({ types: [TYPE_A, TYPE_B, SECRET] });
    const started = await api('POST', `/subscriptions/${id}/replays`, { from, to });
    expect(started.status).toBe(202);
    const got = await drain(id, 120);
    expect(got).toHaveLength(120);
    for (const { lock } of got) expect(lock.replay?.id).toBe(started.body['id']);
    const ordered = bySequence(got, (g) => g.lock.replay!.sequence);
    expect(ordered.map((g) => g.lock.replay!.sequence)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(ordered.map((g) => `${g.event['source'] as string} ${g.event['id'] as string}`)).toEqual(
      inWindow().map((p) => `${SOURCE} ${p.id}`),
    );
    expect(await replayUntilOver(id, started.location!)).toMatchObject({ state: 'finished', matched: 120, sent: 120 });
  }, 120_000);

  it('EDU-18: a replay narrowed by type sends only that type of the window', async () => {
    const id = await pullSubscription({ types: [TYPE_A, TYPE_B, SECRET] });
    const started = await api('POST', `/subscriptions/${id}/replays`, { from, to, types: [TYPE_B] });
    expect(started.status).toBe(202);
    const expected = inWindow().filter((p) => p.type === TYPE_B);
    const progress = await replayUntilOver(id, started.location!);
    expect(progress).toMatchObject({
      state: 'finished',
      scanned: 120,
      matched: expected.length,
      sent: expected.length,
    });
    const got = await drain(id, expected.length);
    expect(bySequence(got, (g) => g.lock.replay!.sequence).map((g) => g.event['id'])).toEqual(
      expected.map((p) => p.id),
    );
  }, 120_000);

  it('EDU-7: a replay beyond the entitlement is refused; one within it sends only the entitled events; nobody else sees the replay', async () => {
    // The subscription matches all three types while the partner may receive them; then an operator
    // narrows the entitlement to the open types. The subscription's filter still matches the secret
    // type, so only the replay's own per-event check (and not the filter) can keep it out.
    const id = await pullSubscription({ filters: [{ prefix: { type: 'nl.example.replay.' } }] }, partner);
    const operator = await koerier.host.issueToken('replay-operator', ['admin']);
    expect(
      (await api('PUT', `/clients/${PARTNER}`, { entitlements: [{ typePrefix: 'nl.example.replay.open.' }] }, operator))
        .status,
    ).toBe(200);
    // Longer than the functions' refresh interval (1 s here): every function has read the directory since.
    await new Promise((resolve) => setTimeout(resolve, 2_500));

    const refused = await api('POST', `/subscriptions/${id}/replays`, { from, to, types: [SECRET] }, partner);
    expect(refused.status).toBe(403);
    expect(refused.body['type']).toBe(problemTypeUri('replay-not-entitled'));

    const started = await api('POST', `/subscriptions/${id}/replays`, { from, to }, partner);
    expect(started.status).toBe(202);
    const open = inWindow().filter((p) => p.type !== SECRET);
    expect(open.length).toBeLessThan(120);
    expect(await replayUntilOver(id, started.location!, partner)).toMatchObject({
      state: 'finished',
      scanned: 120,
      matched: open.length,
      sent: open.length,
    });
    const got = await drain(id, open.length, partner);
    expect(got.map((g) => g.event['type'])).not.toContain(SECRET);
    expect(got).toHaveLength(open.length);
    // Nothing was queued and then withheld at receive: the replay never sent the secret events.
    const deadLetters = await api('GET', `/subscriptions/${id}/dead-letters`, undefined, partner);
    expect(deadLetters.body['deadLetters']).toEqual([]);
    // Another client: the same 404 as for a subscription that does not exist.
    expect((await api('GET', started.location!)).status).toBe(404);
    expect((await api('POST', `/subscriptions/${id}/replays`, { from, to })).status).toBe(404);
  }, 120_000);

  it('EDU-18: one running replay per subscription (409); cancel stops it and frees the slot', async () => {
    // 6 per minute: one event per chunk, ten seconds apart, so the replay is still running when cancelled.
    const { receiver, id } = await pushSubscription([TYPE_A, TYPE_B, SECRET], { rate: 6 });
    const first = await api('POST', `/subscriptions/${id}/replays`, { from, to });
    expect(first.status).toBe(202);
    const second = await api('POST', `/subscriptions/${id}/replays`, { from, to });
    expect(second.status).toBe(409);
    expect(second.body['type']).toBe(problemTypeUri('replay-running'));
    expect(second.location).toBe(first.location);

    const cancelled = await api('POST', `${first.location!}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body['state']).toBe('cancelled');
    // A chunk is one event at this rate: at most the chunk that was being queued still arrives; the
    // next would have come 10 s later, and never does.
    await staysQuiet(
      'a delivery beyond the chunk in flight',
      () => postsOf(receiver).length > 1 && postsOf(receiver).length,
      12_000,
    );
    // What did go out is counted on the cancelled replay.
    expect((await api('GET', first.location!)).body).toMatchObject({
      state: 'cancelled',
      sent: postsOf(receiver).length,
    });
    expect((await api('POST', `${first.location!}/cancel`)).status).toBe(409);
    const third = await api('POST', `/subscriptions/${id}/replays`, { from, to, types: [TYPE_A] });
    expect(third.status).toBe(202);
    expect((await api('POST', `${third.location!}/cancel`)).status).toBe(200);
    // Both kept, newest first, with their progress (the console's replay list reads this).
    const listed = await api('GET', `/subscriptions/${id}/replays`);
    expect((listed.body['replays'] as { id: string; state: string }[]).map((r) => [r.id, r.state])).toEqual([
      [third.body['id'], 'cancelled'],
      [first.body['id'], 'cancelled'],
    ]);
  }, 60_000);

  it('WH-6, EDU-10: a replay keeps to the rate the target allowed', async () => {
    const { receiver, id } = await pushSubscription([TYPE_A, TYPE_B, SECRET], { rate: 120 });
    // Narrowed to twelve events of the window by their ids.
    const twelve = published.slice(40, 52).map((p) => p.id);
    const started = await api('POST', `/subscriptions/${id}/replays`, {
      from,
      to,
      filters: [{ any: twelve.map((eventId) => ({ exact: { id: eventId } })) }],
    });
    expect(started.status).toBe(202);
    // Paced at 500 ms it takes 6 s alone; the wait is for a machine busy with the whole suite (4 of 12 in 30 s seen there).
    const requests = await receiver.waitForRequests(12, { timeoutMs: 75_000 });
    const times = requests.map((r) => r.receivedAt);
    // 120 per minute: slots 500 ms apart, less each request's own transit jitter (as delivery-protection.test.ts).
    for (let i = 0; i < times.length; i++)
      for (let j = i + 1; j < times.length; j++)
        expect(times[j]! - times[i]!).toBeGreaterThanOrEqual((j - i) * 500 - 150);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(5_400);
  }, 90_000);

  it('EDU-18: events past the archive retention are not replayed, even while the object is still stored (s3rver runs no lifecycle rule)', async () => {
    const type = `nl.example.replay.old.${randomUUID().slice(0, 8)}.v1`;
    const now = Date.now();
    const old = (hoursAgo: number, id: string) => ({
      acceptedAt: now - hoursAgo * 3_600_000,
      source: SOURCE,
      id,
      type,
      json: JSON.stringify({ specversion: '1.0', id, source: SOURCE, type }),
    });
    // Retention is one day on this host.
    for (const object of archiveObjects([old(25, 'past-retention')]))
      await koerier.host.dependencies.eventArchive.put(object.key, object.body);
    for (const object of archiveObjects([old(23, 'within-retention')]))
      await koerier.host.dependencies.eventArchive.put(object.key, object.body);
    const id = await pullSubscription({ types: [type] });
    const started = await api('POST', `/subscriptions/${id}/replays`, {
      from: new Date(now - 48 * 3_600_000).toISOString(),
      to: new Date(now).toISOString(),
    });
    expect(started.status).toBe(202);
    expect(await replayUntilOver(id, started.location!)).toMatchObject({ state: 'finished', matched: 1, sent: 1 });
    const got = await drain(id, 1);
    expect(got.map((g) => g.event['id'])).toEqual(['within-retention']);
  }, 60_000);
});
