/**
 * Ordered push delivery without emulators (issue 33), for ordered-push.test.ts and
 * ordered-batch.test.ts: the router's marks through the ordered outbox into a queue that hands
 * messages out in any order (as a standard SQS queue may), and the dispatcher over in-memory lanes,
 * against a target scripted per request. It counts what the ordered path costs: requests to the
 * target, queue messages and lane-store calls.
 */
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import type { AttemptResult } from '../../../functions/core/delivery/attempt-outcome.js';
import type { DeliveryTask } from '../../../functions/core/delivery/dispatch-ports.js';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import type { Outbox } from '../../../functions/core/delivery-message/outbox.js';
import { orderedOutbox } from '../../../functions/core/delivery-message/ordered-outbox.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../../functions/core/idempotency/key.js';
import type { OrderingFailurePolicy } from '../../../functions/core/ordering/ordering-settings.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import { InMemoryOrderedLanes } from '../../support/memory/memory-ordered-lanes.js';
import { keyedDeliveries } from '../../support/keyed-deliveries.js';
import { SUB, setup } from '../delivery/dispatcher-harness.js';

export interface Sent {
  readonly key: string;
  readonly sequence: string;
  readonly n: number;
}

/**
 * `answer` is asked once per request: `one` is its first event, `all` every event in it (a batch
 * holds several); `tries` counts the requests that began with `one`.
 */
export type Answer = (one: Sent, tries: number, all: readonly Sent[]) => number;

/** A queue that hands out up to ten visible messages picked at random: no order, as a standard queue; a retry's delay is kept. */
export function orderedPushHarness(
  onFailure: OrderingFailurePolicy,
  answer: Answer,
  subscription: Partial<Pick<Subscription, 'contentMode' | 'batchSupported'>> = {},
) {
  const queue: (DeliveryTask & { visibleAt?: number })[] = [];
  const receives = new Map<string, number>();
  const counts = { queued: 0, received: 0, laneCalls: 0 };
  let ids = 0;
  const inner: Outbox = {
    enqueueAll: async (entries) => {
      for (const { message, delaySeconds = 0 } of entries) {
        counts.queued++;
        queue.push({
          messageId: `m${++ids}`,
          body: encodeDeliveryMessage(message),
          receiveCount: 0,
          visibleAt: h.clock.now + delaySeconds * 1000,
        });
      }
    },
    enqueue: async (_subscription, messages) => {
      for (const message of messages) {
        counts.queued++;
        queue.push({ messageId: `m${++ids}`, body: encodeDeliveryMessage(message), receiveCount: 0 });
      }
    },
  };
  const lanes = new InMemoryOrderedLanes();
  // Every call to the lane store counted: each is at least one DynamoDB request on AWS.
  const countedLanes = new Proxy(lanes, {
    get: (target, name, receiver) => {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function' || name === 'lane') return value;
      return (...args: unknown[]) => {
        counts.laneCalls++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  // Declared before the outbox uses it: the harness's clock is the outbox's.
  const h = setup({
    subscription: { ordering: { key: 'partitionkey', withoutKey: 'unordered', onFailure }, ...subscription },
  });
  const outbox = orderedOutbox(inner, () => countedLanes, { now: () => h.clock.now });
  const sent: Sent[] = [];
  /** Every request the target answered 2xx, as the events it held. */
  const requests: Sent[][] = [];
  /** Every request sent, answered or not: its Idempotency-Key, events and status. */
  const attempts: { readonly idempotencyKey: string; readonly events: readonly Sent[]; readonly status: number }[] = [];
  const tries = new Map<string, number>();
  h.deps.outbox = outbox;
  h.deps.lanes = countedLanes;
  h.deps.send = async (request): Promise<AttemptResult> => {
    const body = JSON.parse(request.body.toString('utf8')) as unknown;
    const events = (Array.isArray(body) ? body : [body]) as { partitionkey: string; sequence: string; n: number }[];
    const all = events.map((event) => ({ key: event.partitionkey, sequence: event.sequence, n: event.n }));
    const one = all[0]!;
    const id = `${one.key}/${one.n}`;
    tries.set(id, (tries.get(id) ?? 0) + 1);
    const status = answer(one, tries.get(id)!, all);
    attempts.push({ idempotencyKey: request.headers[IDEMPOTENCY_KEY_HEADER] ?? '', events: all, status });
    if (status < 300) {
      sent.push(...all);
      requests.push(all);
    }
    return { status, headers: {}, latencyMs: 5 };
  };
  let seed = 7;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  /** Runs batches until the queue is empty (or `rounds` run out); retries come back at once. */
  const drain = async (rounds = 10_000) => {
    for (let round = 0; round < rounds && queue.length > 0; round++) {
      const batch: DeliveryTask[] = [];
      const visible = () => queue.filter((task) => (task.visibleAt ?? 0) <= h.clock.now);
      while (batch.length < 10 && visible().length > 0) {
        const candidates = visible();
        const pick = candidates[Math.floor(random() * candidates.length)]!;
        const [task] = queue.splice(queue.indexOf(pick), 1);
        const count = (receives.get(task!.messageId) ?? 0) + 1;
        receives.set(task!.messageId, count);
        counts.received++;
        batch.push({ ...task!, receiveCount: count });
      }
      const outcome = await dispatchBatch(batch, h.deps);
      for (const decision of outcome.decisions)
        if (decision.action === 'retry')
          queue.push({
            ...batch.find((task) => task.messageId === decision.messageId)!,
            visibleAt: h.clock.now + decision.delaySeconds * 1000,
          });
      h.clock.now += 1000;
    }
  };
  /** As the router marks them: interleaved over keys, each key's events in order, a millisecond apart. */
  const publish = (keys: number, perKey: number, from = 1) =>
    outbox.enqueueAll(
      keyedDeliveries(SUB, keys, perKey, h.clock.now, from).map((message) => ({
        subscription: { id: SUB, delivery: 'push' as const },
        message,
      })),
    );
  const ofKey = (key: string) => sent.filter((one) => one.key === key);
  /** Runs single batches until a numbered head is on the queue (the settle messages have run). */
  const untilHeadQueued = async () => {
    const numbered = () => queue.find((task) => decodeDeliveryMessage(task.body).ordering?.sequence !== undefined);
    for (let round = 0; round < 10 && numbered() === undefined; round++) await drain(1);
    return numbered()!;
  };
  return { h, queue, sent, requests, attempts, counts, publish, drain, ofKey, outbox, lanes, untilHeadQueued };
}
