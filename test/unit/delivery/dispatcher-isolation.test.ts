/**
 * Issue 8, item 1, for the delivery consumer: one record's failure never fails its neighbours.
 * A message that is not a delivery, a subscription whose record cannot be read, and a delivery
 * whose own state cannot be read each get their own "retry"; every other delivery of the batch is
 * sent and settled. (The real handler behind the SQS poller: test/integration/delivery-batch-isolation.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import {
  encodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import type { DeadLetter, DeliveryProgress } from '../../../functions/core/delivery/delivery-records.js';
import type {
  DeliveryTask,
  DispatchDeadLetters,
  DispatcherDependencies,
  DispatchLedger,
  DispatchTargets,
} from '../../../functions/core/delivery/dispatch-ports.js';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import type { WebhookRequest } from '../../../functions/core/delivery/webhook-request.js';
import { HEALTHY } from '../../../functions/core/delivery/target-health.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../../functions/core/idempotency/index.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { policy, subscription, T0 } from './dispatcher-harness.js';

type DeliveryState = DispatchTargets & DispatchLedger & DispatchDeadLetters;

/** Delivery state in memory; `failProgressOf` names deliveries whose progress read fails. */
function memoryState(failProgressOf: ReadonlySet<string>): DeliveryState & { deadLetters: DeadLetter[] } {
  const deadLetters: DeadLetter[] = [];
  return {
    deadLetters,
    getTarget: async () => HEALTHY,
    getTargets: async (ids) => new Map(ids.map((id) => [id, HEALTHY])),
    reserveSendSlots: async () => true,
    takeProbe: async () => true,
    releaseProbe: async () => undefined,
    recordTargetSuccess: async () => undefined,
    recordTargetFailures: async () => HEALTHY,
    recordThrottle: async () => undefined,
    getProgress: async (_subscriptionId: string, deliveryId: string): Promise<DeliveryProgress | undefined> => {
      if (failProgressOf.has(deliveryId)) throw new Error('ProvisionedThroughputExceededException');
      return undefined;
    },
    putProgress: async () => undefined,
    recordAttempts: async () => undefined,
    putDeadLetter: async (deadLetter: DeadLetter) => void deadLetters.push(deadLetter),
  };
}

function subscriptionOf(id: string): Subscription {
  return subscription({ id, sink: `https://receiver.test/${id}`, routeKeys: [], version: 1 });
}

function task(subscriptionId: string, deliveryId: string, receiveCount = 1): DeliveryTask {
  const message: DeliveryMessage = {
    version: 1,
    deliveryId,
    subscriptionId,
    events: [`{"id":"${deliveryId}"}`],
    createdAt: T0,
  };
  return { messageId: `m-${deliveryId}`, body: encodeDeliveryMessage(message), receiveCount };
}

function setup(options: { unreadableSubscriptions?: readonly string[]; failProgressOf?: readonly string[] } = {}) {
  const store = memoryState(new Set(options.failProgressOf ?? []));
  const sent: string[] = [];
  const deps: DispatcherDependencies = {
    targets: store,
    ledger: store,
    deadLetters: store,
    subscriptions: {
      get: async (id: string) => {
        if (options.unreadableSubscriptions?.includes(id)) throw new Error('subscription table unavailable');
        return subscriptionOf(id);
      },
      updateStatus: async () => undefined,
    },
    accessToken: async () => 'access-token',
    send: async (request: WebhookRequest) => {
      sent.push(request.headers[IDEMPOTENCY_KEY_HEADER] ?? '');
      return { status: 204, headers: {}, latencyMs: 1 };
    },
    outbox: { enqueue: async () => undefined },
    policy,
    origin: 'koerier.test',
    log: silentLog,
    clock: () => T0,
    random: () => 0.5,
    sleep: async () => undefined,
  };
  return { store, sent, deps };
}

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const decisionsOf = (decisions: readonly { messageId: string; action: string }[]) =>
  Object.fromEntries(decisions.map((d) => [d.messageId, d.action]));

describe('delivery batch isolation', () => {
  it('review #1: a message that is not a delivery and a subscription that cannot be read fail alone; the other deliveries are sent', async () => {
    const { deps, sent } = setup({ unreadableSubscriptions: ['sub-b'] });
    const tasks = [
      task('sub-a', id(1)),
      { messageId: 'm-garbage', body: 'not a delivery', receiveCount: 1 },
      task('sub-b', id(2)),
      task('sub-a', id(3)),
      task('sub-c', id(4)),
    ];
    const outcome = await dispatchBatch(tasks, deps);
    expect(decisionsOf(outcome.decisions)).toEqual({
      [`m-${id(1)}`]: 'done',
      'm-garbage': 'retry',
      [`m-${id(2)}`]: 'retry',
      [`m-${id(3)}`]: 'done',
      [`m-${id(4)}`]: 'done',
    });
    expect(sent.sort()).toEqual([id(1), id(3), id(4)]);
  });

  it('review #1: a delivery whose own state cannot be read fails alone; the other deliveries to the same subscription are sent', async () => {
    const { deps, sent } = setup({ failProgressOf: [id(12)] });
    // Second receives, so each delivery's progress is read.
    const tasks = [task('sub-a', id(11), 2), task('sub-a', id(12), 2), task('sub-a', id(13), 2)];
    const outcome = await dispatchBatch(tasks, deps);
    expect(decisionsOf(outcome.decisions)).toEqual({
      [`m-${id(11)}`]: 'done',
      [`m-${id(12)}`]: 'retry',
      [`m-${id(13)}`]: 'done',
    });
    expect(sent.sort()).toEqual([id(11), id(13)]);
  });

  it('EDU-18: a group that fails on store trouble on its last receive is dead-lettered, and the batch counts that dead letter', async () => {
    const { deps, store } = setup();
    // The first dead-letter write fails (store trouble), so the whole group is retried later; on
    // its last receive that means a dead letter after all, and the batch must count it.
    const putDeadLetter = store.putDeadLetter;
    let failures = 1;
    store.putDeadLetter = async (deadLetter, expiresAt) =>
      failures-- > 0
        ? Promise.reject(new Error('ProvisionedThroughputExceededException'))
        : putDeadLetter(deadLetter, expiresAt);
    const outcome = await dispatchBatch([task('sub-a', id(21), policy.maxReceiveCount)], {
      ...deps,
      send: async () => ({ status: 503, headers: {}, latencyMs: 1 }),
    });
    expect(decisionsOf(outcome.decisions)).toEqual({ [`m-${id(21)}`]: 'done' });
    expect(store.deadLetters.map((deadLetter) => deadLetter.deliveryId)).toEqual([id(21)]);
    expect(outcome.deadLettered).toBe(1);
  });
});
