/**
 * Issue 33, the failure policies on an ordered **pull** subscription, end to end on the laptop
 * host (docs/ORDERING.md "Pull"; the push side is ordered-failures.test.ts). Per policy an ordered
 * pull subscription of its own takes KEYS keys × EVENTS events (each key's events one after
 * another, each after the previous 202), read by one consumer that acknowledges everything except
 * event FAILING_N of `key-0`, which it rejects once — a consumer that cannot process it.
 *
 * - `skip`: the rejected event becomes a dead letter with its payload and `sequence`, the key goes
 *   on, and the consumer sees the gap; a redrive hands it out late with its old `sequence`.
 * - `park`: the rejected event becomes a dead letter and the key's later events are not handed
 *   out while the other keys finish; a redrive hands out the rejected event, then the parked ones,
 *   in order.
 * - `block`: the rejected event is no dead letter; the key's later events are not handed out while
 *   the other keys finish. The rejected event comes back only after PULL_BLOCK_RETRY_SECONDS (60 s,
 *   not a setting), which this test does not wait for: the unit tests drive that
 *   (test/unit/ordering/ordered-pull.test.ts).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settingEnv } from '../../functions/config.js';
import { callApi } from '../support/koerier-api.js';
import { publishKeysInTurn } from '../support/keyed-deliveries.js';
import { startTestHost, type TestHost } from '../support/host.js';
import { eventually, staysQuiet } from '../support/waiting.js';

const KEYS = 3;
const EVENTS = 4;
const FAILING_KEY = 'key-0';
const FAILING_N = 2;
const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:e2e';

let koerier: TestHost;
let consumerToken: string;
let publisherToken: string;

beforeAll(async () => {
  koerier = await startTestHost({
    [settingEnv.publishRatePerMinute]: '1000000',
    // As in ordered-pull.test.ts: the window covers the inbound queue's latency on 2 shared cores.
    [settingEnv.orderingSettlingMs]: '3000',
  });
  consumerToken = await koerier.token('dev-subscriber', ['events:consume', 'subscriptions:manage']);
  publisherToken = await koerier.token('dev-publisher', ['events:publish']);
});

afterAll(async () => {
  await koerier?.stop();
});

interface Received {
  readonly id: string;
  readonly partitionkey: string;
  readonly sequence: string;
  readonly data: { readonly n: number };
}

const api = (method: string, path: string, body?: unknown) => callApi(koerier.url, consumerToken, method, path, body);
const sequence = (n: number) => String(n).padStart(10, '0');

/**
 * An ordered pull subscription with `onFailure`, its events published, and one consumer at work:
 * `acknowledged` per key in the order acknowledged (booked as the acknowledgement goes out), the
 * failing event rejected the first time it is handed out.
 */
async function subscribeAndConsume(onFailure: 'block' | 'park' | 'skip') {
  const type = `nl.example.ordered-pull-failures.${onFailure}.${randomUUID().slice(0, 8)}.v1`;
  const created = await api('POST', '/subscriptions', {
    delivery: 'pull',
    types: [type],
    ordering: { key: 'partitionkey', onFailure },
  });
  expect(created.status).toBe(201);
  const id = created.body['id'] as string;
  const acknowledged = new Map<string, Received[]>();
  const rejected: Received[] = [];
  const refusals: string[] = [];
  let done = false;
  const consume = async () => {
    while (!done) {
      const answer = await api('POST', `/subscriptions/${id}/events/receive`, {
        maxevents: 10,
        waitseconds: 1,
        lockseconds: 30,
      });
      if (answer.status !== 200) {
        refusals.push(`receive ${answer.status}: ${answer.text.slice(0, 200)}`);
        continue;
      }
      const events = answer.body['events'] as Received[];
      const locks = answer.body['locks'] as { locktoken: string }[];
      const acknowledge: string[] = [];
      for (const [i, event] of events.entries()) {
        const failing = event.partitionkey === FAILING_KEY && event.data.n === FAILING_N && rejected.length === 0;
        if (failing) {
          rejected.push(event);
          const answered = await api('POST', `/subscriptions/${id}/events/reject`, {
            locktokens: [locks[i]!.locktoken],
            reason: 'the consumer cannot process it',
          });
          if (answered.status !== 200 || (answered.body['failed'] as unknown[]).length > 0)
            refusals.push(`reject ${answered.status}: ${answered.text.slice(0, 200)}`);
          continue;
        }
        acknowledged.set(event.partitionkey, [...(acknowledged.get(event.partitionkey) ?? []), event]);
        acknowledge.push(locks[i]!.locktoken);
      }
      if (acknowledge.length === 0) continue;
      const settled = await api('POST', `/subscriptions/${id}/events/acknowledge`, { locktokens: acknowledge });
      if (settled.status !== 200 || (settled.body['failed'] as unknown[]).length > 0)
        refusals.push(`acknowledge ${settled.status}: ${settled.text.slice(0, 200)}`);
    }
  };
  const consumer = consume();
  await publishKeysInTurn(koerier.url, publisherToken, {
    source: SOURCE,
    type,
    keys: KEYS,
    events: EVENTS,
    connections: 1,
  });
  return {
    id,
    acknowledged,
    rejected,
    refusals,
    /** As acknowledged: [published as event n of the key, sequence]. */
    arrivals: (key: string) => (acknowledged.get(key) ?? []).map((e) => [e.data.n, e.sequence]),
    stop: async () => {
      done = true;
      await consumer;
    },
  };
}

const inOrder = (ns: readonly number[]) => ns.map((n) => [n, sequence(n)]);
const ALL = Array.from({ length: EVENTS }, (_, i) => i + 1);
const otherKeys = Array.from({ length: KEYS - 1 }, (_, i) => `key-${i + 1}`);

async function deadLettersOf(id: string) {
  const answer = await api('GET', `/subscriptions/${id}/dead-letters`);
  expect(answer.status).toBe(200);
  return answer.body['deadLetters'] as { reason: string; events: { id: string }[] }[];
}

/**
 * The other keys are all acknowledged, in order, while the failing key stays at the events before
 * the rejected one: nothing of it past that is handed out (watched for 3 s after the others finish).
 */
async function expectKeyHeldWhileOthersFinish(run: Awaited<ReturnType<typeof subscribeAndConsume>>): Promise<void> {
  await eventually(
    () => `the other keys acknowledged; got ${JSON.stringify([...run.acknowledged])}`,
    () => otherKeys.every((key) => run.arrivals(key).length === EVENTS) && run.rejected.length === 1,
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  for (const key of otherKeys) expect(run.arrivals(key)).toEqual(inOrder(ALL));
  await staysQuiet(
    'an event of the failing key handed out past the rejected one',
    () => run.arrivals(FAILING_KEY).length > FAILING_N - 1 && run.arrivals(FAILING_KEY),
    3_000,
  );
  expect(run.arrivals(FAILING_KEY)).toEqual(inOrder(ALL.slice(0, FAILING_N - 1)));
}

describe('ordered pull with a key the consumer rejects (issue 33, failure policies)', () => {
  it('ORD-4, ORD-5: skip: the rejected event is a dead letter with its payload and sequence, the key goes on and the consumer sees the gap; a redrive hands it out late with its old sequence', async () => {
    const run = await subscribeAndConsume('skip');
    try {
      await eventually(
        () => `every event but the rejected one acknowledged; got ${JSON.stringify([...run.acknowledged])}`,
        () => [...run.acknowledged.values()].flat().length >= KEYS * EVENTS - 1,
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      expect(run.arrivals(FAILING_KEY)).toEqual(inOrder(ALL.filter((n) => n !== FAILING_N)));
      for (const key of otherKeys) expect(run.arrivals(key)).toEqual(inOrder(ALL));
      const dead = await eventually('the dead letter', async () => {
        const letters = await deadLettersOf(run.id);
        return letters.length > 0 && letters;
      });
      expect(dead).toHaveLength(1);
      expect(dead[0]!.events.map((event) => event.id)).toEqual([run.rejected[0]!.id]);
      const redrive = await api('POST', `/subscriptions/${run.id}/dead-letters/redrive`, { all: true });
      expect(redrive.status).toBe(202);
      await eventually('the redriven event handed out', () => run.arrivals(FAILING_KEY).length === EVENTS, {
        timeoutMs: 30_000,
        intervalMs: 200,
      });
      // The dead letter kept the event as handed out: its payload and its own sequence, late.
      expect(run.arrivals(FAILING_KEY).at(-1)).toEqual([FAILING_N, sequence(FAILING_N)]);
      expect(run.refusals).toEqual([]);
    } finally {
      await run.stop();
    }
  }, 120_000);

  it('ORD-4, ORD-5: park: the rejected event is a dead letter and the key’s later events wait while the other keys finish; a redrive hands out the rejected event, then the parked ones, in order', async () => {
    const run = await subscribeAndConsume('park');
    try {
      await eventually('the dead letter', async () => (await deadLettersOf(run.id)).length > 0);
      // Parked: nothing of the key past the rejected event is handed out.
      await expectKeyHeldWhileOthersFinish(run);
      const redrive = await api('POST', `/subscriptions/${run.id}/dead-letters/redrive`, { all: true });
      expect(redrive.status).toBe(202);
      await eventually(
        () => `the key's events after the redrive; got ${JSON.stringify(run.arrivals(FAILING_KEY))}`,
        () => run.arrivals(FAILING_KEY).length === EVENTS,
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(run.arrivals(FAILING_KEY)).toEqual(inOrder(ALL));
      expect(run.refusals).toEqual([]);
    } finally {
      await run.stop();
    }
  }, 120_000);

  it('ORD-4, ORD-5: block: the rejected event is no dead letter, and the key’s later events are not handed out while the other keys finish', async () => {
    const run = await subscribeAndConsume('block');
    try {
      await expectKeyHeldWhileOthersFinish(run);
      expect(await deadLettersOf(run.id)).toEqual([]);
      expect(run.refusals).toEqual([]);
    } finally {
      await run.stop();
    }
  }, 120_000);
});
