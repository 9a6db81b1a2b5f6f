/**
 * The dispatcher's stages applied to one batch, against an in-memory delivery state typed against
 * the ports it uses (the DynamoDB repository itself is covered by the integration tests) and a
 * scripted target. The decisions alone, without any store: settle-attempt.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { AttemptResult } from '../../../functions/core/delivery/attempt-outcome.js';
import {
  encodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import type { DeadLetter, DeliveryProgress } from '../../../functions/core/delivery/delivery-records.js';
import type {
  DeliveryPolicy,
  DeliveryTask,
  DispatchDeadLetters,
  DispatcherDependencies,
  DispatchLedger,
  DispatchSubscriptions,
  DispatchTargets,
} from '../../../functions/core/delivery/dispatch-ports.js';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import { OUT_OF_TIME_RETRY_MS } from '../../../functions/core/delivery/settle-attempt.js';
import type { WebhookRequest } from '../../../functions/core/delivery/webhook-request.js';
import { HEALTHY, type TargetState } from '../../../functions/core/delivery/target-health.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../../functions/core/idempotency/index.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import type { OperationalNotice } from '../../../functions/core/operations/operational-events.js';
import { policy, SUB, subscription, T0 } from './dispatcher-harness.js';

const SUBSCRIPTION_ID = SUB;

class MemoryDeliveryState implements DispatchTargets, DispatchLedger, DispatchDeadLetters {
  target: TargetState = HEALTHY;
  throttles: { pauseUntil: number; ratePerMinute: number }[] = [];
  progress = new Map<string, DeliveryProgress>();
  deadLetters: DeadLetter[] = [];
  async getTarget() {
    return this.target;
  }
  async getTargets(ids: readonly string[]) {
    return new Map(ids.map((id) => [id, this.target]));
  }
  async reserveSendSlots(_id: string, _expected: number | undefined, next: number) {
    this.target = { ...this.target, nextSendAt: next };
    return true;
  }
  async takeProbe() {
    return true;
  }
  async releaseProbe() {}
  async recordTargetSuccess() {
    this.target = HEALTHY;
  }
  async recordTargetFailures(_id: string, count: number, now: number) {
    this.target = {
      ...this.target,
      consecutiveFailures: this.target.consecutiveFailures + count,
      lastFailureAt: now,
      failingSince: this.target.failingSince ?? now,
    };
    return this.target;
  }
  async recordThrottle(_id: string, pauseUntil: number, throttle: { ratePerMinute: number; since: number }) {
    this.throttles.push({ pauseUntil, ratePerMinute: throttle.ratePerMinute });
  }
  async getProgress(_id: string, deliveryId: string) {
    return this.progress.get(deliveryId);
  }
  async putProgress(_id: string, progress: DeliveryProgress) {
    this.progress.set(progress.deliveryId, progress);
  }
  async recordAttempts() {}
  async putDeadLetter(deadLetter: DeadLetter) {
    this.deadLetters.push(deadLetter);
  }
}

function setup(
  options: {
    answer?: () => AttemptResult;
    subscription?: Partial<Subscription>;
    now?: number;
    policy?: Partial<DeliveryPolicy>;
  } = {},
) {
  const store = new MemoryDeliveryState();
  const enqueued: DeliveryMessage[] = [];
  const sent: string[] = [];
  const statusUpdates: Parameters<DispatchSubscriptions['updateStatus']>[] = [];
  const clock = { now: options.now ?? T0 };
  const deps: DispatcherDependencies = {
    targets: store,
    ledger: store,
    deadLetters: store,
    subscriptions: {
      get: async () => subscription(options.subscription),
      updateStatus: async (...args) => void statusUpdates.push(args),
    },
    accessToken: async () => 'access-token',
    send: async (request: WebhookRequest) => {
      sent.push(request.headers[IDEMPOTENCY_KEY_HEADER] ?? '');
      return options.answer?.() ?? { status: 204, headers: {}, latencyMs: 1 };
    },
    outbox: { enqueue: async (_subscription, messages: readonly DeliveryMessage[]) => void enqueued.push(...messages) },
    policy: { ...policy, ...options.policy },
    origin: 'koerier.test',
    log: silentLog,
    clock: () => clock.now,
    random: () => 0.5,
    sleep: async () => undefined,
  };
  return { store, enqueued, sent, statusUpdates, clock, deps };
}

function task(message: Partial<DeliveryMessage> = {}, receiveCount = 1): DeliveryTask {
  const full: DeliveryMessage = {
    version: 1,
    deliveryId: '0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d',
    subscriptionId: SUBSCRIPTION_ID,
    events: ['{"id":"1"}'],
    createdAt: T0,
    ...message,
  };
  return { messageId: `m-${full.deliveryId}`, body: encodeDeliveryMessage(full), receiveCount };
}

describe('dispatchBatch', () => {
  it('EDU-IDEM-11, EDU-18: a split done twice gives each event the same key both times, and the parent createdAt', async () => {
    const parent = task({ events: ['{"id":"a"}', '{"id":"b"}'], createdAt: T0 - 3_600_000 });
    const first = setup();
    await dispatchBatch([parent], first.deps);
    const second = setup({ now: T0 + 60_000 });
    await dispatchBatch([parent], second.deps);
    expect(first.enqueued).toHaveLength(2);
    expect(second.enqueued.map((m) => m.deliveryId)).toEqual(first.enqueued.map((m) => m.deliveryId));
    expect(new Set(first.enqueued.map((m) => m.deliveryId)).size).toBe(2);
    for (const child of first.enqueued) {
      expect(child.deliveryId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(child.createdAt).toBe(T0 - 3_600_000);
    }
  });

  it('WH-2, EDU-10: a 429 without Retry-After still slows the subscription down, pausing it for the schedule wait', async () => {
    const { store, deps } = setup({ answer: () => ({ status: 429, headers: {}, latencyMs: 1 }) });
    const outcome = await dispatchBatch([task()], deps);
    expect(outcome.decisions).toEqual([
      { messageId: expect.any(String), action: 'retry', delaySeconds: expect.any(Number) },
    ]);
    expect(store.throttles).toEqual([{ pauseUntil: T0 + policy.retry.initialDelaySeconds * 1000, ratePerMinute: 60 }]);
  });

  it('WH-2: a 429 with Retry-After pauses the subscription until then', async () => {
    const { store, deps } = setup({ answer: () => ({ status: 429, headers: { 'retry-after': '120' }, latencyMs: 1 }) });
    await dispatchBatch([task()], deps);
    expect(store.throttles).toEqual([{ pauseUntil: T0 + 120_000, ratePerMinute: 60 }]);
  });

  it('WH-2: a 503 Retry-After is the earliest next attempt of that delivery, and does not throttle the subscription', async () => {
    const { store, deps } = setup({ answer: () => ({ status: 503, headers: { 'retry-after': '600' }, latencyMs: 1 }) });
    const outcome = await dispatchBatch([task()], deps);
    const [decision] = outcome.decisions;
    expect(decision).toMatchObject({ action: 'retry' });
    expect((decision as { delaySeconds: number }).delaySeconds).toBeGreaterThanOrEqual(600);
    expect(store.throttles).toEqual([]);
  });

  it('EDU-18: a long wait hop on the last receive becomes a dead letter, not a message for the queue dead-letter queue', async () => {
    const { store, deps, sent } = setup();
    const last = task({}, policy.maxReceiveCount);
    store.progress.set('0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d', {
      deliveryId: '0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d',
      failedAttempts: 9,
      lastAttempts: [],
      nextAttemptAt: T0 + 86_400_000,
    });
    const outcome = await dispatchBatch([last], deps);
    expect(outcome.decisions).toEqual([{ messageId: last.messageId, action: 'done' }]);
    expect(store.deadLetters).toMatchObject([{ reason: 'exhausted', attempts: 9 }]);
    expect(sent).toEqual([]);
  });

  it('EDU-18: a delivery held back by the rate on its last receive becomes a dead letter', async () => {
    const { store, deps } = setup({ subscription: { allowedRatePerMinute: 1 } });
    store.target = { ...HEALTHY, nextSendAt: T0 + 3_600_000 };
    const outcome = await dispatchBatch([task({}, policy.maxReceiveCount)], deps);
    expect(outcome).toMatchObject({ attempts: 0, deadLettered: 1, decisions: [{ action: 'done' }] });
    expect(store.deadLetters).toMatchObject([{ reason: 'exhausted' }]);
  });

  it('EDU-18: after store trouble, a message on its last receive becomes a dead letter; earlier receives are retried', async () => {
    const { store, deps } = setup();
    store.getTargets = async () => {
      throw new Error('throttled by the table');
    };
    const early = task({ deliveryId: 'aaaaaaaa-2d3f-4a5b-8c6d-7e8f9a0b1c2d' }, 2);
    const last = task({}, policy.maxReceiveCount);
    const outcome = await dispatchBatch([early, last], deps);
    expect(outcome.decisions).toEqual([
      { messageId: early.messageId, action: 'retry', delaySeconds: 60 },
      { messageId: last.messageId, action: 'done' },
    ]);
    expect(outcome.deadLettered).toBe(1);
    expect(store.deadLetters).toMatchObject([
      { reason: 'exhausted', deliveryId: '0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d' },
    ]);
  });

  it('EDU-IDEM-12: within the safety margin before the key lifetime ends, a delivery is dead-lettered, not sent', async () => {
    const { store, deps, sent } = setup();
    const outcome = await dispatchBatch([task({ createdAt: T0 - policy.keyTtlSeconds * 1000 + 30_000 })], deps);
    expect(outcome.decisions).toMatchObject([{ action: 'done' }]);
    expect(store.deadLetters).toMatchObject([{ reason: 'exhausted' }]);
    expect(sent).toEqual([]);
  });

  it('EDU-IDEM-12: a wait is cut at the key deadline, so the delivery is not held past it', async () => {
    const { store, deps } = setup();
    const createdAt = T0 - policy.keyTtlSeconds * 1000 + 3_600_000;
    store.progress.set('0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d', {
      deliveryId: '0b7e5c1a-2d3f-4a5b-8c6d-7e8f9a0b1c2d',
      failedAttempts: 3,
      lastAttempts: [],
      nextAttemptAt: T0 + 6 * 3_600_000,
    });
    const outcome = await dispatchBatch([task({ createdAt }, 2)], deps);
    expect(outcome.decisions).toMatchObject([{ action: 'retry', delaySeconds: 3600 - 60 }]);
  });

  it('CARD-5, EDU-18: a delivery whose attempt might outlast the batch deadline is put back uncounted; the finished one is still decided', async () => {
    // A static token: no token fetch in the budget.
    const { store, deps, sent } = setup({
      subscription: { allowedRatePerMinute: 60, credential: { kind: 'bearer', ciphertext: 'sealed' } },
      policy: { sinkCredentials: 'bearer-or-oauth2' },
    });
    const first = task({ deliveryId: 'aaaaaaaa-2d3f-4a5b-8c6d-7e8f9a0b1c2d' });
    const second = task({ deliveryId: 'bbbbbbbb-2d3f-4a5b-8c6d-7e8f9a0b1c2d' });
    // The first may go at once and fits; the second's rate slot is a second later, and its
    // request could then run past the deadline.
    const outcome = await dispatchBatch([first, second], deps, { deadline: T0 + policy.sendTimeoutMs + 500 });
    expect(sent).toEqual(['aaaaaaaa-2d3f-4a5b-8c6d-7e8f9a0b1c2d']);
    expect(outcome.decisions).toEqual([
      { messageId: first.messageId, action: 'done' },
      { messageId: second.messageId, action: 'retry', delaySeconds: OUT_OF_TIME_RETRY_MS / 1000 },
    ]);
    expect(outcome).toMatchObject({ attempts: 1, failedAttempts: 0, deadLettered: 0 });
    expect(store.progress.size).toBe(0);
    expect(store.target.consecutiveFailures).toBe(0);
  });

  it("CARD-5: with an OAuth2 credential the budget covers the request and, after a 401, a fresh token; the batch's own token fetch is over before the budget is checked, so it counts once, as time passed", async () => {
    const oauth2 = { credential: { kind: 'oauth2-client-credentials' } } as unknown as Partial<Subscription>;
    const FETCH_MS = 3_000;
    /** A batch whose token fetch takes FETCH_MS of the clock. */
    const slowToken = () => {
      const target = setup({ subscription: oauth2 });
      target.deps.accessToken = async () => {
        target.clock.now += FETCH_MS;
        return 'access-token';
      };
      return target;
    };
    // After the fetch, less than the request and a refresh is left: put back unattempted.
    const tight = slowToken();
    const tightDeadline = T0 + FETCH_MS + policy.sendTimeoutMs + policy.tokenTimeoutMs - 1;
    const outcome = await dispatchBatch([task()], tight.deps, { deadline: tightDeadline });
    expect(tight.sent).toEqual([]);
    expect(outcome.decisions).toMatchObject([{ action: 'retry', delaySeconds: OUT_OF_TIME_RETRY_MS / 1000 }]);
    // Exactly enough for them: sent, the token's own fetch not counted a second time.
    const enough = slowToken();
    await dispatchBatch([task()], enough.deps, {
      deadline: T0 + FETCH_MS + policy.sendTimeoutMs + policy.tokenTimeoutMs,
    });
    expect(enough.sent).toHaveLength(1);
  });

  it.each([
    ['no credential (a record written before credentials were required)', { credential: undefined }, 'oauth2-only'],
    [
      'a static token where only OAuth2 is allowed',
      { credential: { kind: 'bearer', ciphertext: 'sealed' } },
      'oauth2-only',
    ],
  ] as const)(
    'WH-3, EDU-4: a subscription with %s is suspended as credential-required, and its deliveries are parked, not sent',
    async (_case, fields, sinkCredentials) => {
      const { deps, sent, store, statusUpdates } = setup({
        subscription: fields as Partial<Subscription>,
        policy: { sinkCredentials },
      });
      const outcome = await dispatchBatch([task()], deps);
      expect(sent).toEqual([]);
      expect(statusUpdates).toEqual([
        [SUBSCRIPTION_ID, 'suspended', expect.stringMatching(/PATCH/), 'credential-required'],
      ]);
      expect(store.deadLetters).toMatchObject([{ reason: 'subscription-suspended' }]);
      expect(outcome.decisions).toEqual([{ messageId: task().messageId, action: 'done' }]);
    },
  );

  it('WH-3, issue 13 item 3: a suspension for want of a credential is told once as an operational event to its owner, with the reason stored', async () => {
    const { deps, statusUpdates } = setup({
      subscription: { credential: { kind: 'bearer', ciphertext: 'sealed' }, owner: 'partner-lvs', version: 3 },
    });
    const published: OperationalNotice[] = [];
    await dispatchBatch([task()], {
      ...deps,
      operations: { publish: async (notices) => void published.push(...notices) },
    });
    const stored = statusUpdates[0]![2];
    expect(stored).toMatch(/^Suspended: .+\.$/);
    // The owner learns what the status says, and the occurrence is this version's, so a second instance tells the same event.
    expect(published).toEqual([
      {
        type: 'dev.koerier.subscription.suspended.v1',
        subscription: { id: SUBSCRIPTION_ID, owner: 'partner-lvs' },
        occurrence: ['credential-required', '3'],
        time: T0,
        data: { status: 'suspended', suspendedFor: 'credential-required', reason: stored },
      },
    ]);
  });

  it('EDU-4: with bearer-or-oauth2 a static token is delivered', async () => {
    const { deps, sent, statusUpdates } = setup({
      subscription: { credential: { kind: 'bearer', ciphertext: 'sealed' } },
      policy: { sinkCredentials: 'bearer-or-oauth2' },
    });
    await dispatchBatch([task()], deps);
    expect(sent).toHaveLength(1);
    expect(statusUpdates).toEqual([]);
  });

  it('review #8: an event whose datacontenttype cannot be a header is dead-lettered as not-sendable: nothing sent, the target untouched', async () => {
    const event = JSON.stringify({
      specversion: '1.0',
      id: 'x1',
      source: 'urn:s',
      type: 't',
      datacontenttype: 'text/plain; name="\u20ac"',
      data: 'hi',
    });
    const { deps, sent, store } = setup({
      subscription: { contentMode: 'binary' },
      answer: () => ({ status: 503, headers: {}, latencyMs: 1 }),
    });
    const failures: number[] = [];
    store.recordTargetFailures = async (_id: string, count: number) => {
      failures.push(count);
      return store.target;
    };
    const outcome = await dispatchBatch(
      [task({ events: [event] }), task({ deliveryId: 'cccccccc-2d3f-4a5b-8c6d-7e8f9a0b1c2d' })],
      deps,
    );
    expect(sent).toEqual(['cccccccc-2d3f-4a5b-8c6d-7e8f9a0b1c2d']);
    expect(store.deadLetters).toMatchObject([
      { reason: 'not-sendable', attempts: 0, detail: expect.stringContaining('not at fault') },
    ]);
    // Only the sendable delivery's 503 counts against the target.
    expect(failures).toEqual([1]);
    expect(outcome).toMatchObject({ attempts: 1, failedAttempts: 1, deadLettered: 1 });
  });

  it('review #8: a request the HTTP client refuses after all (not-sendable) is a dead letter, not a failure of the target', async () => {
    const { deps, store } = setup({
      answer: () => ({ failure: 'not-sendable', message: 'invalid content-type header', latencyMs: 0 }),
    });
    const outcome = await dispatchBatch([task()], deps);
    expect(store.deadLetters).toMatchObject([{ reason: 'not-sendable' }]);
    expect(store.target.consecutiveFailures).toBe(0);
    expect(outcome).toMatchObject({ attempts: 1, failedAttempts: 1, deadLettered: 1 });
  });

  describe('a 401 to an OAuth2 token', () => {
    const oauth2 = {
      allowedRatePerMinute: 1,
      credential: { kind: 'oauth2-client-credentials' },
    } as unknown as Partial<Subscription>;
    function oauth2Target(answers: number[]) {
      const target = setup({ subscription: oauth2 });
      const bearers: string[] = [];
      const refreshes: number[] = [];
      Object.assign(target.deps, {
        accessToken: async (_subscription: Subscription, options?: { refresh?: boolean }) => {
          if (options?.refresh) refreshes.push(target.clock.now);
          return refreshes.length > 0 ? 'fresh' : 'stale';
        },
        send: async (request: WebhookRequest) => {
          bearers.push(request.headers['authorization'] ?? '');
          return { status: answers.shift() ?? 204, headers: {}, latencyMs: 1 };
        },
      });
      return { ...target, bearers, refreshes };
    }

    it('WH-6, WH-3: the try with a fresh token waits for a rate slot of its own: 1/min gets one request a minute', async () => {
      const { deps, store, clock, bearers, refreshes } = oauth2Target([401, 204]);
      const first = await dispatchBatch([task()], deps);
      expect(bearers).toEqual(['Bearer stale']);
      expect(refreshes).toEqual([T0]);
      expect(first.decisions).toMatchObject([{ action: 'retry', delaySeconds: 60 }]);
      expect(store.target.consecutiveFailures).toBe(0);

      clock.now = T0 + 60_000;
      const second = await dispatchBatch([task({}, 2)], deps);
      expect(bearers).toEqual(['Bearer stale', 'Bearer fresh']);
      expect(second.decisions).toMatchObject([{ action: 'done' }]);
      expect(store.deadLetters).toEqual([]);
    });

    it('WH-2: a 401 to the try with a fresh token is the answer: a dead letter, no further refresh', async () => {
      const { deps, store, clock, bearers, refreshes } = oauth2Target([401, 401]);
      await dispatchBatch([task()], deps);
      clock.now = T0 + 60_000;
      const second = await dispatchBatch([task({}, 2)], deps);
      expect(bearers).toEqual(['Bearer stale', 'Bearer fresh']);
      expect(refreshes).toHaveLength(1);
      expect(second.decisions).toMatchObject([{ action: 'done' }]);
      expect(store.deadLetters).toMatchObject([{ reason: 'rejected', attempts: 2 }]);
    });
  });
});
