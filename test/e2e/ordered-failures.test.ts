/**
 * Issue 33, must show: "a target failing for one key (500 for 30 s, then 415 once)", with each
 * failure policy, on the laptop host against an HTTPS receiver. Per policy an ordered push
 * subscription of its own gets KEYS keys × EVENTS events, the keys published at the same time
 * (each key's events one after another, each after the previous 202). The receiver fails one key
 * only: event FAILING_N of `key-0` gets 500 for FAIL_MS from its first attempt, then 415 once,
 * then 204; every other request gets 204.
 *
 * Time, against the 30 s: the host retries a 5xx after 1 s, then 2 s (the retry settings
 * below; the default schedule starts at 30 s), so FAIL_MS = 8 s of 500s is 4–6 failed attempts,
 * more than the 30 s would give at the default schedule (one or two). What the 30 s is
 * there to show — the other keys all delivered while one key is failing — is asserted directly.
 * `block` turns the 415 into a retry 60 s later (BLOCK_RETRY_SECONDS in ordered-dispatch.ts, not a
 * setting), so that test takes about 75 s; the three run side by side on one host. The settling window is 8 s (see below), so
 * every event waits that long before its first attempt.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { apiAs, callApi, publishEvent, type ApiAnswer, type KoerierClient } from '../support/koerier-api.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { createLocalCertificateAuthority, startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver.js';
import { failingKeyScript, type FailingKeyAnswer } from '../support/failing-key-script.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const KEYS = 5;
const EVENTS = 5;
const FAILING_KEY = 'key-0';
/** The failing key's event that the receiver refuses: one in the middle, so a gap or a hold shows on both sides. */
const FAILING_N = 2;
const FAIL_MS = 8_000;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e';

const authority = createLocalCertificateAuthority();
let koerier: TestHost;
let dir: string;
let subscriber: string;
let publisher: KoerierClient;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'koerier-ordered-failures-'));
  await writeFile(join(dir, 'ca.pem'), authority.certificatePem);
  koerier = await startTestHost({
    [settingEnv.outboundCaFile]: join(dir, 'ca.pem'),
    [settingEnv.validationAgreedClients]: 'dev-subscriber',
    [settingEnv.publishRatePerMinute]: '1000000',
    // The window must cover an event's time from its 202 to being staged by the router. Three
    // subscriptions publishing at once on a machine at load 10 (2 cores) routed events up to 5.8 s
    // after their 202, and one event was appended past its window, out of acceptance order (the
    // documented limit, docs/ORDERING.md "Acceptance order"): 8 s here, not ordered-push's 3 s.
    [settingEnv.orderingSettlingMs]: '8000',
    [settingEnv.deliveryRetryInitialSeconds]: '1',
    [settingEnv.deliveryRetryMaxDelaySeconds]: '2',
    [settingEnv.deliveryRetryWindowSeconds]: '60',
    // The circuit breaker is per subscription (docs/ORDERING.md, "Limits"): at its threshold a key
    // failing with 500 would hold every key of the subscription. That limit is documented; here
    // the lane's own behaviour is shown, so the breaker stays out of the way.
    [settingEnv.deliveryBreakerFailures]: '1000',
  });
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
  publisher = apiAs(koerier.url, await koerier.token('dev-publisher', ['events:publish']));
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await koerier?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  return callApi(koerier.url, subscriber, method, path, body);
}

type Answered = FailingKeyAnswer;

/** A receiver that refuses the failing key's event FAILING_N (failing-key-script.ts) and takes everything else. */
async function failingKeyReceiver(): Promise<{ receiver: HttpsReceiver; answered: Answered[] }> {
  const { script, answered } = failingKeyScript({ key: FAILING_KEY, n: FAILING_N, failMs: FAIL_MS });
  const receiver = await startHttpsReceiver({ authority, script });
  receivers.push(receiver);
  return { receiver, answered };
}

/** An ordered push subscription with `onFailure` to a failing-key receiver, and its events published. */
async function publishToFailingKey(onFailure: 'block' | 'park' | 'skip') {
  const { receiver, answered } = await failingKeyReceiver();
  const type = `nl.example.ordered-failures.${randomUUID().slice(0, 8)}.v1`;
  const created = await api('POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    sinkcredential: receiver.sinkCredential,
    ordering: { key: 'partitionkey', onFailure },
  });
  expect(created.status).toBe(201);
  const id = created.body['id'] as string;
  /** When each event was accepted (its 202), by id. */
  const acceptedAt = new Map<string, number>();
  /** `ids[k][n - 1]`: the id of event n of key-k. */
  const ids = await Promise.all(
    Array.from({ length: KEYS }, async (_, k) => {
      const sent: string[] = [];
      for (let n = 1; n <= EVENTS; n++) {
        const event = await publishEvent(publisher, { source: SOURCE, type, partitionkey: `key-${k}`, data: { n } });
        const eventId = (JSON.parse(event) as { id: string }).id;
        acceptedAt.set(eventId, Date.now());
        sent.push(eventId);
      }
      return sent;
    }),
  );
  return { id, answered, ids, acceptedAt };
}

const delivered = (answered: readonly Answered[], key?: string) =>
  answered.filter((a) => a.status < 300 && (key === undefined || a.key === key));
/** As they were delivered: [published as event n of the key, sequence]. */
const arrivals = (answered: readonly Answered[], key: string) => delivered(answered, key).map((a) => [a.n, a.sequence]);
const inOrder = (ns: readonly number[]) => ns.map((n) => [n, n]);
const ONE_TO_EVENTS = Array.from({ length: EVENTS }, (_, i) => i + 1);
const otherKeys = Array.from({ length: KEYS - 1 }, (_, i) => `key-${i + 1}`);

async function waitForDeliveries(answered: readonly Answered[], count: number, timeoutMs: number): Promise<void> {
  await eventually(
    () => `${count} deliveries; got ${JSON.stringify(delivered(answered).map((a) => [a.key, a.n, a.sequence]))}`,
    () => delivered(answered).length >= count,
    { timeoutMs, intervalMs: 200 },
  );
}

async function deadLettersOf(id: string): Promise<{ reason: string; events: { id: string }[] }[]> {
  return (await api('GET', `/subscriptions/${id}/dead-letters`)).body['deadLetters'] as {
    reason: string;
    events: { id: string }[];
  }[];
}

/** Nothing delivered twice: a second copy would come within a moment of the rest. */
async function noSecondDelivery(answered: readonly Answered[]): Promise<void> {
  await staysQuiet(
    'a delivery of an event already delivered',
    () => {
      const seen = delivered(answered).map((a) => `${a.key}/${a.n}`);
      return seen.length !== new Set(seen).size && seen;
    },
    1_500,
  );
}

describe.concurrent('ordered push with a key the target fails (issue 33, must show)', () => {
  it('ORD-4: block: the failing key waits, retrying, while every other key is delivered in full; then the key arrives complete and in order', async () => {
    const { id, answered, acceptedAt } = await publishToFailingKey('block');
    // 500s for FAIL_MS, the 415, then the block's 60 s wait before the try that gets 204.
    await waitForDeliveries(answered, KEYS * EVENTS, 120_000);
    await noSecondDelivery(answered);

    for (const key of [FAILING_KEY, ...otherKeys])
      expect({ key, arrived: arrivals(answered, key) }).toEqual({ key, arrived: inOrder(ONE_TO_EVENTS) });
    const failing = answered.filter((a) => a.key === FAILING_KEY);
    const resumed = delivered(failing).find((a) => a.n === FAILING_N)!;
    const refusedAt = failing.find((a) => a.status === 415)!.at;
    // Tried until it got through: the 500s, the 415 once, then 204; no later event of the key was sent meanwhile.
    const beforeResume = failing.filter((a) => a.at < resumed.at);
    expect(beforeResume.map((a) => [a.n, a.status])).toEqual([
      [1, 204],
      ...beforeResume.slice(1, -1).map(() => [FAILING_N, 500]),
      [FAILING_N, 415],
    ]);
    expect(beforeResume.length).toBeGreaterThanOrEqual(4);
    // The others were all delivered before the failing key resumed, and none waited as long as
    // the failing key's later events did (a minute and more, held behind it). How fast the others
    // went against a run without a failing key is the bench's (bench/ordered-delivery.ts).
    const others = delivered(answered).filter((a) => a.key !== FAILING_KEY);
    expect(Math.max(...others.map((a) => a.at))).toBeLessThan(resumed.at);
    const latency = (a: Answered) => a.at - acceptedAt.get(a.id)!;
    const heldBehind = Math.min(
      ...delivered(failing)
        .filter((a) => a.n > FAILING_N)
        .map(latency),
    );
    console.log(
      `block: other keys delivered ${Math.min(...others.map(latency))}–${Math.max(...others.map(latency))} ms after their 202; the failing key's later events ${heldBehind} ms and more`,
    );
    expect(Math.max(...others.map(latency))).toBeLessThan(heldBehind);
    expect(heldBehind).toBeGreaterThan(50_000);
    expect(refusedAt).toBeLessThan(resumed.at);
    // Block writes no dead letter (short of the queue's last receive).
    expect(await deadLettersOf(id)).toEqual([]);
  }, 150_000);

  it("ORD-4: park: the failing event becomes a dead letter and the key's later events wait; a redrive delivers it, then the parked events, in order", async () => {
    const { id, answered, ids } = await publishToFailingKey('park');
    const [deadLetter] = await eventually(
      'the failing event dead-lettered',
      async () => {
        const listed = await deadLettersOf(id);
        return listed.length > 0 && listed;
      },
      { timeoutMs: 60_000 },
    );
    expect(deadLetter).toMatchObject({ reason: 'unsupported-media-type', events: [{ id: ids[0]![FAILING_N - 1] }] });
    // Every other key is delivered in full, in order, while the key is parked.
    await waitForDeliveries(answered, (KEYS - 1) * EVENTS + FAILING_N - 1, 30_000);
    for (const key of otherKeys)
      expect({ key, arrived: arrivals(answered, key) }).toEqual({ key, arrived: inOrder(ONE_TO_EVENTS) });
    // The parked events are not sent: the key stops at the dead letter.
    await staysQuiet(
      'a parked event sent before the redrive',
      () => answered.find((a) => a.key === FAILING_KEY && a.n > FAILING_N),
      3_000,
    );
    expect(arrivals(answered, FAILING_KEY)).toEqual(inOrder([1]));

    const redrive = await api('POST', `/subscriptions/${id}/dead-letters/redrive`, { all: true });
    expect(redrive.status).toBe(202);
    await waitForDeliveries(answered, KEYS * EVENTS, 30_000);
    await noSecondDelivery(answered);
    expect(arrivals(answered, FAILING_KEY)).toEqual(inOrder(ONE_TO_EVENTS));
    expect(await deadLettersOf(id)).toEqual([]);
  }, 120_000);

  it('ORD-4: skip: the failing event is dead-lettered with its payload and sequence, the key goes on, and the gap shows in `sequence`', async () => {
    const { id, answered, ids } = await publishToFailingKey('skip');
    const skipped = ONE_TO_EVENTS.filter((n) => n !== FAILING_N);
    await waitForDeliveries(answered, KEYS * EVENTS - 1, 60_000);
    await noSecondDelivery(answered);
    for (const key of otherKeys)
      expect({ key, arrived: arrivals(answered, key) }).toEqual({ key, arrived: inOrder(ONE_TO_EVENTS) });
    // The receiver sees sequence 1, 3, 4, …: the skipped event's number is missing.
    expect(arrivals(answered, FAILING_KEY)).toEqual(inOrder(skipped));
    const refusedAt = answered.find((a) => a.status === 415)!.at;
    expect(answered.filter((a) => a.key === FAILING_KEY && a.n > FAILING_N).every((a) => a.at > refusedAt)).toBe(true);
    const [deadLetter] = await eventually('the skipped event dead-lettered', async () => {
      const listed = await deadLettersOf(id);
      return listed.length > 0 && listed;
    });
    expect(deadLetter).toMatchObject({ reason: 'unsupported-media-type', events: [{ id: ids[0]![FAILING_N - 1] }] });

    // The dead letter kept the event as delivered: redriven, it arrives with its payload and its own sequence, late.
    const redrive = await api('POST', `/subscriptions/${id}/dead-letters/redrive`, { all: true });
    expect(redrive.status).toBe(202);
    await waitForDeliveries(answered, KEYS * EVENTS, 30_000);
    expect(delivered(answered, FAILING_KEY).map((a) => [a.n, a.sequence])).toEqual([
      ...inOrder(skipped),
      [FAILING_N, FAILING_N],
    ]);
  }, 120_000);
});
