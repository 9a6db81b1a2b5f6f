/**
 * Issue 33, the failure policies over runs (docs/ORDERING.md "Batches"), end to end on the laptop
 * host: an ordered push subscription in batch mode whose target refuses, once, with 415 the
 * request that holds event FAILING_N of `key-0`. That request is a run: the key's head and the
 * consecutive numbered events behind it, however many were numbered when it went out, so the test
 * reads which events it held from the receiver's log rather than assuming them.
 *
 * - `skip`: every event of the refused run becomes a dead letter of its own, the key goes on past
 *   the run, and the receiver sees the run's gap in `sequence`; the redrive delivers each of them
 *   alone, late, with its own `sequence`.
 * - `park`: every event of the run becomes a dead letter of its own and the key waits; the redrive
 *   delivers them alone, one after another in order, and then the rest of the key.
 *
 * The refused run may start before FAILING_N (its head is whatever event of the key was next).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi } from '../support/koerier-api.js';
import { publishKeysInTurn } from '../support/keyed-deliveries.js';
import type { TestHost } from '../support/host.js';
import { startOrderedTestHost } from '../support/ordered-test-host.js';
import {
  createLocalCertificateAuthority,
  startHttpsReceiver,
  type HttpsReceiver,
  type ReceiverScript,
} from '../support/https-receiver.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const KEYS = 3;
const EVENTS = 8;
const FAILING_KEY = 'key-0';
const FAILING_N = 2;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e';

const authority = createLocalCertificateAuthority();
const receivers: HttpsReceiver[] = [];
let koerier: TestHost;
let subscriber: string;

beforeAll(async () => {
  koerier = await startOrderedTestHost(authority);
  subscriber = await koerier.token('dev-subscriber', ['subscriptions:manage']);
});

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await koerier?.stop();
});

interface Received {
  readonly partitionkey: string;
  readonly sequence: string;
  readonly data: { readonly n: number };
}

/** One request as the receiver answered it: its events as [n, sequence], in the order sent. */
interface Answered {
  readonly key: string;
  readonly events: readonly (readonly [number, number])[];
  readonly status: number;
}

const api = (method: string, path: string, body?: unknown) => callApi(koerier.url, subscriber, method, path, body);

/** A batch-mode ordered subscription with `onFailure`, its target refusing the failing event's request once. */
async function batchSubscription(onFailure: 'park' | 'skip') {
  const answered: Answered[] = [];
  let refused = false;
  const script: ReceiverScript = (_, request) => {
    const body = JSON.parse(request.body) as Received | Received[];
    const events = Array.isArray(body) ? body : [body];
    const holdsFailing = events.some((e) => e.partitionkey === FAILING_KEY && e.data.n === FAILING_N);
    const status = holdsFailing && !refused ? 415 : 204;
    if (status === 415) refused = true;
    answered.push({
      key: events[0]!.partitionkey,
      events: events.map((e) => [e.data.n, Number(e.sequence)] as const),
      status,
    });
    return { respond: status };
  };
  const receiver = await startHttpsReceiver({ authority, script });
  receivers.push(receiver);
  const type = `nl.example.ordered-batch-failures.${onFailure}.${randomUUID().slice(0, 8)}.v1`;
  const created = await api('POST', '/subscriptions', {
    sink: receiver.url,
    types: [type],
    validation: 'agreed',
    contentmode: 'batch',
    batchsupported: true,
    sinkcredential: receiver.sinkCredential,
    ordering: { key: 'partitionkey', onFailure },
  });
  expect(created.status).toBe(201);
  const id = created.body['id'] as string;
  const token = await koerier.token('dev-publisher', ['events:publish']);
  await publishKeysInTurn(koerier.url, token, { source: SOURCE, type, keys: KEYS, events: EVENTS, connections: 1 });
  /** What the key's 2xx requests delivered, event by event, in order. */
  const delivered = (key: string) =>
    answered.filter((a) => a.key === key && a.status === 204).flatMap((a) => a.events.map(([n]) => n));
  const refusedRun = () => answered.find((a) => a.status === 415)?.events.map(([n]) => n);
  return { id, answered, delivered, refusedRun };
}

async function deadLettersOf(id: string): Promise<unknown[]> {
  const answer = await api('GET', `/subscriptions/${id}/dead-letters`);
  expect(answer.status).toBe(200);
  return answer.body['deadLetters'] as unknown[];
}

/** A run: the key's head and what was numbered behind it, consecutive; here the one that holds FAILING_N. */
function expectARunWithTheFailingEvent(refused: readonly number[]): void {
  expect(refused).toContain(FAILING_N);
  expect(refused).toEqual(Array.from({ length: refused.length }, (_, i) => refused[0]! + i));
}

const otherKeys = Array.from({ length: KEYS - 1 }, (_, i) => `key-${i + 1}`);
const ALL = Array.from({ length: EVENTS }, (_, i) => i + 1);

describe('ordered batch delivery with a run the target refuses (issue 33, ORD-6 failure policies)', () => {
  it('ORD-6, ORD-4: skip: each event of the refused run is a dead letter of its own, the key goes on past the run with its gap in sequence, and the redrive delivers each alone, late, with its own sequence', async () => {
    const run = await batchSubscription('skip');
    await eventually(
      () => `the key past the refused run; answered ${JSON.stringify(run.answered)}`,
      () => {
        const refused = run.refusedRun();
        return (
          refused !== undefined &&
          run.delivered(FAILING_KEY).length === EVENTS - refused.length &&
          otherKeys.every((key) => run.delivered(key).length === EVENTS)
        );
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const refused = run.refusedRun()!;
    expectARunWithTheFailingEvent(refused);
    expect(run.delivered(FAILING_KEY)).toEqual(ALL.filter((n) => !refused.includes(n)));
    // Each delivered event kept its place's number: the run's numbers are missing, a gap.
    const numbered = run.answered.filter((a) => a.key === FAILING_KEY && a.status === 204).flatMap((a) => a.events);
    expect(numbered.every(([n, sequence]) => sequence === n)).toBe(true);
    for (const key of otherKeys) expect(run.delivered(key)).toEqual(ALL);
    await eventually(
      'a dead letter per event of the run',
      async () => (await deadLettersOf(run.id)).length === refused.length,
    );
    const redrive = await api('POST', `/subscriptions/${run.id}/dead-letters/redrive`, { all: true });
    expect(redrive.status).toBe(202);
    await eventually(
      () => `the redriven events; answered ${JSON.stringify(run.answered)}`,
      () => run.delivered(FAILING_KEY).length === EVENTS,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    // Each alone, with the sequence it had in the run.
    const redriven = run.answered.filter(
      (a) => a.key === FAILING_KEY && a.status === 204 && a.events.some(([n]) => refused.includes(n)),
    );
    expect(redriven.map((a) => a.events.length)).toEqual(refused.map(() => 1));
    expect(redriven.flatMap((a) => a.events).sort(([a], [b]) => a - b)).toEqual(refused.map((n) => [n, n]));
  }, 120_000);

  it('ORD-6, ORD-4: park: each event of the refused run is a dead letter of its own and the key waits; the redrive delivers them alone, in order, then the rest of the key', async () => {
    const run = await batchSubscription('park');
    await eventually(
      () => `the other keys, and the refused run; answered ${JSON.stringify(run.answered)}`,
      () => run.refusedRun() !== undefined && otherKeys.every((key) => run.delivered(key).length === EVENTS),
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const refused = run.refusedRun()!;
    expectARunWithTheFailingEvent(refused);
    for (const key of otherKeys) expect(run.delivered(key)).toEqual(ALL);
    await eventually(
      'a dead letter per event of the run',
      async () => (await deadLettersOf(run.id)).length === refused.length,
    );
    await staysQuiet(
      'an event of the parked key delivered before the redrive',
      () => run.delivered(FAILING_KEY).length > refused[0]! - 1 && run.delivered(FAILING_KEY),
      3_000,
    );
    const redrive = await api('POST', `/subscriptions/${run.id}/dead-letters/redrive`, { all: true });
    expect(redrive.status).toBe(202);
    await eventually(
      () => `the key after the redrive; answered ${JSON.stringify(run.answered)}`,
      () => run.delivered(FAILING_KEY).length === EVENTS,
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    expect(run.delivered(FAILING_KEY)).toEqual(ALL);
    // The run's events alone, one request each, before anything behind them.
    const refusedAt = run.answered.findIndex((a) => a.status === 415);
    const afterRefusal = run.answered.slice(refusedAt).filter((a) => a.key === FAILING_KEY && a.status === 204);
    expect(afterRefusal.slice(0, refused.length).map((a) => a.events)).toEqual(refused.map((n) => [[n, n]]));
  }, 150_000);
});
