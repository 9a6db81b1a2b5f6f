/**
 * The delivery function keeps a quiet target state for a second per container
 * (functions/core/delivery/target-state-cache.ts, issue 15 item 2) instead of reading it for every
 * batch. Two "containers" (two stores, each behind its own cache, on one dynalite table) with one
 * hand-moved clock show what that saves and what it still keeps: a state with a failure, a throttle
 * or a rate slot is read every time, this container's own writes take effect at once, and another
 * container's breaker is seen within the second.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbDeliveryState } from '../../functions/aws/dynamodb-delivery-state.js';
import { cachedTargetStates } from '../../functions/core/delivery/target-state-cache.js';
import { breakerOf } from '../../functions/core/delivery/target-health.js';
import type { DispatchTargets } from '../../functions/core/delivery/dispatch-ports.js';
import { eventually } from '../support/waiting.js';
import { resourceEnv } from '../../lib/resources.js';
import { startEmulators, type Emulators } from '../../local/emulators.js';

const TTL_MS = 1_000;
const BREAKER = { failureThreshold: 3, cooldownSeconds: 60 };

let emulators: Emulators;
let now = Date.now();
const clock = () => now;

/** One container: its store on its own client, whose reads are counted, behind its own cache. */
function container() {
  const client = new DynamoDBClient({
    region: emulators.region,
    endpoint: emulators.endpoints.dynamodb,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  const reads = { count: 0 };
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (/^(BatchGetItem|GetItem)Command$/.test(context.commandName ?? '')) reads.count++;
      return next(args);
    },
    { step: 'initialize', name: 'count-reads' },
  );
  const store = new DynamoDbDeliveryState(client, emulators.resourceEnvironment[resourceEnv.table('deliveries')]!);
  return { store, targets: cachedTargetStates(store, TTL_MS, clock), reads };
}

beforeAll(async () => {
  emulators = await startEmulators({ ttlSweep: false });
});
afterAll(async () => {
  await emulators?.stop();
});

describe('a container keeps a quiet target state for a second', () => {
  it('issue 15: batches to a quiet target within the second read its state once; the first batch after it reads again', async () => {
    const a = container();
    const [one, two] = [randomUUID(), randomUUID()];
    now = Date.now();
    expect((await a.targets.getTargets([one, two])).size).toBe(0); // nothing stored: healthy
    await a.targets.getTargets([one, two]);
    now += TTL_MS - 1;
    await a.targets.getTargets([two, one]);
    expect(a.reads.count).toBe(1);
    now += 1;
    await a.targets.getTargets([one]);
    expect(a.reads.count).toBe(2);
  });

  it('EDU-12: failures this container records take effect at once: its next batch reads the open breaker', async () => {
    const a = container();
    const id = randomUUID();
    now = Date.now();
    await a.targets.getTargets([id]);
    await a.targets.recordTargetFailures(id, BREAKER.failureThreshold, now, false);
    const target = (await a.targets.getTargets([id])).get(id)!;
    expect(breakerOf(target, BREAKER, now).state).toBe('open');
  });

  it('EDU-12: a breaker another container opened is seen here within the second, and from then on read every batch', async () => {
    const [a, b] = [container(), container()];
    const id = randomUUID();
    now = Date.now();
    await a.targets.getTargets([id]);
    await b.targets.recordTargetFailures(id, BREAKER.failureThreshold, now, false);
    now += TTL_MS;
    const seen = (await a.targets.getTargets([id])).get(id)!;
    expect(breakerOf(seen, BREAKER, now).state).toBe('open');
    const readsBefore = a.reads.count;
    await a.targets.getTargets([id]);
    await a.targets.getTarget(id);
    expect(a.reads.count - readsBefore).toBe(2);
  });

  it('EDU-10, WH-6: a throttled target, or one with a rate slot taken, is read for every batch, so reservations start from the stored slot', async () => {
    const [a, b] = [container(), container()];
    const [throttled, limited] = [randomUUID(), randomUUID()];
    now = Date.now();
    await b.targets.recordThrottle(throttled, now + 5_000, { ratePerMinute: 30, since: now });
    expect(await b.targets.reserveSendSlots(limited, undefined, now + 2_000)).toBe(true);
    await a.targets.getTargets([throttled, limited]);
    const second = await a.targets.getTargets([throttled, limited]);
    expect(a.reads.count).toBe(2);
    expect(second.get(throttled)?.throttle).toEqual({ ratePerMinute: 30, since: now });
    // The slot b took is what a's reservation must start from: from anything older it loses.
    expect(await a.targets.reserveSendSlots(limited, second.get(limited)?.nextSendAt, now + 4_000)).toBe(true);
  });

  it('EDU-12: a read that began before this container recorded failures, and ends after, keeps nothing: the next batch reads the open breaker', async () => {
    const a = container();
    const id = randomUUID();
    now = Date.now();
    // The read reaches the table before the write, and its answer comes back after the write.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slowReads = cachedTargetStates(
      { ...bound(a.store), getTargets: async (ids) => a.store.getTargets(ids).then(async (states) => (await held, states)) },
      TTL_MS,
      clock,
    );
    const early = slowReads.getTargets([id]);
    await eventually('the early read answered by the table', () => a.reads.count === 1 || undefined);
    await slowReads.recordTargetFailures(id, BREAKER.failureThreshold, now, false);
    release();
    expect((await early).get(id)).toBeUndefined(); // it saw the quiet state before the write
    const next = (await slowReads.getTargets([id])).get(id)!;
    expect(a.reads.count).toBe(2);
    expect(breakerOf(next, BREAKER, now).state).toBe('open');
  });
});

/** The store's methods bound to it, to wrap one of them. */
function bound(store: DynamoDbDeliveryState): DispatchTargets {
  return {
    getTarget: (id) => store.getTarget(id),
    getTargets: (ids) => store.getTargets(ids),
    reserveSendSlots: (id, expected, next) => store.reserveSendSlots(id, expected, next),
    takeProbe: (id, at, until) => store.takeProbe(id, at, until),
    recordTargetSuccess: (id) => store.recordTargetSuccess(id),
    recordTargetFailures: (id, count, at, probe) => store.recordTargetFailures(id, count, at, probe),
    recordThrottle: (id, pauseUntil, throttle) => store.recordThrottle(id, pauseUntil, throttle),
  };
}
