/**
 * What the dispatcher records and tells for each way a batch can end: figures, history, dead
 * letters with their reasons, status changes, logs. An in-memory delivery state that remembers
 * every call (the DynamoDB repository is covered by the integration tests), a scripted target.
 * Written where `npm run mutate` showed decisions no test pinned (docs/MUTATION.md).
 */
import { describe, expect, it } from 'vitest';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import { MAX_DELAY_SECONDS } from '../../../functions/core/delivery/settle-attempt.js';
import type { OperationalNotice } from '../../../functions/core/operations/operational-events.js';
import { answered, DAY, policy, setup, SUB, T0, task } from './dispatcher-harness.js';
import { noMetrics } from '../../../functions/core/ports/metrics.js';

describe("a batch's figures and history", () => {
  it('EDU-18: a message that is not a delivery message goes back to the queue at once, for its dead-letter queue', async () => {
    const { deps, messages } = setup();
    const outcome = await dispatchBatch([{ messageId: 'junk', body: '{"hello":1}', receiveCount: 1 }], deps);
    expect(outcome).toEqual({
      decisions: [{ messageId: 'junk', action: 'retry', delaySeconds: 0 }],
      attempts: 0,
      failedAttempts: 0,
      deadLettered: 0,
      suspended: 0,
    });
    expect(messages('not a delivery message; left for the dead-letter queue').map((l) => [l.level, l.fields])).toEqual([
      ['error', { messageId: 'junk' }],
    ]);
  });

  it('EDU-18: the figures count requests, failed requests and dead letters; the history is written once, kept for its configured time', async () => {
    const { deps, store } = setup({ answers: [answered(204), answered(500), answered(400)] });
    const outcome = await dispatchBatch([task(), task(), task()], deps);
    expect(outcome.attempts).toBe(3);
    expect(outcome.failedAttempts).toBe(2);
    expect(outcome.deadLettered).toBe(1);
    expect(store.attempts).toHaveLength(1);
    expect(store.attempts[0]!.records.map((r) => r.outcome)).toEqual(['delivered', 'retrying', 'dead-lettered']);
    expect(store.attempts[0]!.expiresAt).toBe(Math.ceil((T0 + DAY * 1000) / 1000));
  });

  it('issue 29 item 3: each push dead letter is counted once, with its subscription and reason, on the one metrics path pull dead letters take too', async () => {
    const { deps } = setup({ answers: [answered(204), answered(400), answered(400)] });
    const counted: [string, string][] = [];
    deps.metrics = {
      ...noMetrics,
      deadLettered: (subscriptionId, reason) => void counted.push([subscriptionId, reason]),
    };
    const outcome = await dispatchBatch([task(), task(), task()], deps);
    expect(outcome.deadLettered).toBe(2);
    expect(counted).toEqual([
      [SUB, 'rejected'],
      [SUB, 'rejected'],
    ]);
  });

  it('issue 13 item 5, issue 15: each recorded attempt names the events it carried, as decoding the message read them', async () => {
    const { deps, store } = setup();
    const carried =
      '{"specversion":"1.0","id":"e-77","source":"urn:nld:oin:1:systeem:x","type":"nl.edu.a","data":{"k":1}}';
    await dispatchBatch([task({ events: [carried] })], deps);
    expect(store.attempts[0]!.records.map((r) => r.events)).toEqual([
      [{ source: 'urn:nld:oin:1:systeem:x', id: 'e-77', type: 'nl.edu.a' }],
    ]);
  });

  it('issue 15, WH-3, EDU-1: the request prepared once goes out with the bearer token, and is made again when the claim check puts data back inline', async () => {
    const { deps, sent, sentHeaders } = setup();
    const referenced =
      '{"specversion":"1.0","id":"big","source":"urn:s","type":"nl.a","dataref":"https://koerier.test/payloads/p1"}';
    const inline = '{"specversion":"1.0","id":"big","source":"urn:s","type":"nl.a","data":{"k":"v"}}';
    deps.outgoingEvents = async (_subscription, events) =>
      events.map((event) => (event === referenced ? inline : event));
    const plain = '{"specversion":"1.0","id":"small","source":"urn:s","type":"nl.a","data":1}';
    await dispatchBatch([task({ events: [plain] }), task({ events: [referenced] })], deps);
    expect(sent).toEqual([plain, inline]);
    expect(
      sentHeaders.map((headers) => [
        headers['authorization'],
        headers['content-type'],
        headers['webhook-request-origin'],
      ]),
    ).toEqual([
      ['Bearer access-token', 'application/cloudevents+json; charset=utf-8', 'koerier.test'],
      ['Bearer access-token', 'application/cloudevents+json; charset=utf-8', 'koerier.test'],
    ]);
  });

  it("EDU-1: when the claim check cannot give an event's data back, nothing is sent: the attempt fails as the claim check's, retried, not counted against the target", async () => {
    const { deps, sent, store, messages } = setup();
    deps.outgoingEvents = async () => {
      throw new Error('NoSuchKey payloads/p1');
    };
    const delivery = task();
    const outcome = await dispatchBatch([delivery], deps);
    expect(sent).toEqual([]);
    expect(store.attempts[0]!.records[0]).toMatchObject({
      outcome: 'retrying',
      error: { code: 'claim-check', detail: "the event's data could not be read from Koerier's claim check" },
    });
    expect(outcome.decisions).toEqual([{ messageId: delivery.messageId, action: 'retry', delaySeconds: 30 }]);
    expect(store.calls).toEqual([]);
    expect(messages('delivery not sent: claim check unavailable').map((l) => [l.level, l.fields])).toEqual([
      [
        'warn',
        {
          subscriptionId: SUB,
          deliveryId: JSON.parse(delivery.body).deliveryId,
          error: 'Error: NoSuchKey payloads/p1',
        },
      ],
    ]);
  });

  it('EDU-1, EDU-11: in a batch whose data the claim check puts back inline for one event of two, the request sent is made again and carries it', async () => {
    const { deps, sent } = setup({ subscription: { contentMode: 'batch', batchSupported: true } });
    const plain = '{"specversion":"1.0","id":"small","source":"urn:s","type":"nl.a","data":1}';
    const referenced =
      '{"specversion":"1.0","id":"big","source":"urn:s","type":"nl.a","dataref":"https://koerier.test/payloads/p1"}';
    const inline = '{"specversion":"1.0","id":"big","source":"urn:s","type":"nl.a","data":{"k":"v"}}';
    deps.outgoingEvents = async (_subscription, events) =>
      events.map((event) => (event === referenced ? inline : event));
    await dispatchBatch([task({ events: [plain, referenced] })], deps);
    // One event unchanged must not hide the other that changed: the target never sees the reference.
    expect(sent.map((body) => JSON.parse(body) as unknown)).toEqual([[JSON.parse(plain), JSON.parse(inline)]]);
  });

  it('EDU-1: an attempt that failed on the claim check is recorded with the time it took, as other attempts are', async () => {
    const { deps, store, clock } = setup();
    deps.outgoingEvents = async () => {
      clock.now += 40;
      throw new Error('NoSuchKey payloads/p1');
    };
    await dispatchBatch([task()], deps);
    expect(store.attempts[0]!.records[0]).toMatchObject({
      at: new Date(T0).toISOString(),
      latencyMs: 40,
      error: { code: 'claim-check' },
    });
  });

  it('EDU-18: history that cannot be written is logged, and the deliveries stay settled', async () => {
    const { deps, store, messages } = setup();
    store.failures.recordAttempts = true;
    const outcome = await dispatchBatch([task()], deps);
    expect(outcome.decisions.map((d) => d.action)).toEqual(['done']);
    expect(messages('attempt history not written').map((l) => [l.level, l.fields])).toEqual([
      ['warn', { attempts: 1, error: 'history unwritable' }],
    ]);
  });

  it("EDU-18: when the targets' state cannot be read, every message of the batch comes back later, backing off by its receive count", async () => {
    const { deps, store, sent, messages } = setup();
    store.failures.getTargets = true;
    const outcome = await dispatchBatch([task({}, 1), task({}, 3), task({}, 40)], deps);
    expect(outcome.decisions.map((d) => (d.action === 'retry' ? d.delaySeconds : d.action))).toEqual([30, 90, 900]);
    expect(sent).toEqual([]);
    expect(messages('target state unreadable; retrying the batch').map((l) => l.fields)).toEqual([
      { error: 'state unreadable' },
    ]);
  });

  it("EDU-18: on its last receive a message the store cannot take as a dead letter is left to the queue's dead-letter queue, and said so", async () => {
    const { deps, store, messages } = setup();
    store.failures.getTargets = true;
    store.failures.putDeadLetter = true;
    const last = task({}, policy.maxReceiveCount);
    const outcome = await dispatchBatch([last], deps);
    expect(outcome.decisions).toEqual([{ messageId: last.messageId, action: 'retry', delaySeconds: 900 }]);
    expect(messages('last receive, and no dead letter written; left for the dead-letter queue')).toHaveLength(1);
  });

  it('EDU-18: on its last receive after store trouble, the message becomes a dead letter the subscriber can see', async () => {
    const { deps, store } = setup();
    store.failures.getTargets = true;
    const outcome = await dispatchBatch([task({}, policy.maxReceiveCount)], deps);
    expect(outcome.decisions.map((d) => d.action)).toEqual(['done']);
    expect(outcome.deadLettered).toBe(1);
    expect(store.deadLetters[0]!.deadLetter).toMatchObject({
      reason: 'exhausted',
      detail: 'the delivery could not be attempted again before the queue would have set it aside',
      attempts: 0,
    });
  });
});

describe('subscriptions that cannot receive', () => {
  it('EDU-18: deliveries for a deleted subscription are let go, one log line each', async () => {
    const { deps, sent, messages, store } = setup({ subscription: null });
    const outcome = await dispatchBatch([task(), task()], deps);
    expect(outcome.decisions.map((d) => d.action)).toEqual(['done', 'done']);
    expect(sent).toEqual([]);
    expect(store.deadLetters).toEqual([]);
    expect(messages('subscription no longer exists; delivery dropped')).toHaveLength(2);
  });

  it.each([
    ['retired', 'gone away', 'subscription-retired', 'the subscription is retired: gone away'],
    [
      'suspended',
      'keeps failing',
      'subscription-suspended',
      'the subscription is suspended: keeps failing; resuming it sends this delivery again',
    ],
    ['pending', undefined, 'subscription-not-active', 'the subscription is pending'],
  ] as const)(
    'EDU-18: a %s subscription gets nothing; its deliveries are kept as dead letters saying why',
    async (status, statusReason, reason, detail) => {
      const { deps, sent, store } = setup({ subscription: { status, ...(statusReason ? { statusReason } : {}) } });
      const outcome = await dispatchBatch([task()], deps);
      expect(sent).toEqual([]);
      expect(outcome.deadLettered).toBe(1);
      expect(store.deadLetters[0]!.deadLetter).toMatchObject({ reason, detail, attempts: 0, lastAttempts: [] });
      expect(store.deadLetters[0]!.expiresAt).toBe(Math.ceil((T0 + 2 * DAY * 1000) / 1000));
    },
  );
});

describe('answers and what they change', () => {
  it('WH-2: 410 retires the subscription once, and every delivery it answered becomes a dead letter', async () => {
    const { deps, statusUpdates, store, messages } = setup({ answers: [answered(410), answered(410)] });
    await dispatchBatch([task(), task()], deps);
    expect(statusUpdates).toEqual([
      [
        SUB,
        'retired',
        `The target answered 410 Gone at ${new Date(T0).toISOString()}; Koerier no longer delivers to it.`,
      ],
    ]);
    expect(messages('subscription retired: the target answered 410 Gone')).toHaveLength(1);
    expect(store.deadLetters.map((d) => [d.deadLetter.reason, d.deadLetter.detail, d.deadLetter.attempts])).toEqual([
      ['gone', 'the target answered 410 Gone: the subscription is retired', 1],
      ['gone', 'the target answered 410 Gone: the subscription is retired', 1],
    ]);
    // Retiring is not a failure of the target: no failure is counted against it.
    expect(store.calls).toEqual([]);
  });

  it('WH-2: the dead letter of the event a 410 answered is written before the subscription is marked retired', async () => {
    const { deps, store } = setup({ answers: [answered(410)] });
    const deadLettersWhenRetired: number[] = [];
    const updateStatus = deps.subscriptions.updateStatus;
    deps.subscriptions.updateStatus = async (...args) => {
      deadLettersWhenRetired.push(store.deadLetters.length);
      return updateStatus(...args);
    };
    await dispatchBatch([task()], deps);
    expect(deadLettersWhenRetired).toEqual([1]);
  });

  it('WH-2, issue 13 item 3: a subscription retired by a 410 is told once as an operational event to its owner, with the reason', async () => {
    const { deps } = setup({ subscription: { owner: 'partner-lvs' }, answers: [answered(410), answered(410)] });
    const published: OperationalNotice[] = [];
    deps.operations = { publish: async (notices) => void published.push(...notices) };
    await dispatchBatch([task(), task()], deps);
    // Its dead letters are told too (operational-notices.ts); here only the retirement.
    expect(
      published.filter(
        (notice) =>
          notice.type !== 'dev.koerier.delivery.deadlettered.v1' &&
          notice.type !== 'dev.koerier.deadletters.notempty.v1',
      ),
    ).toEqual([
      {
        type: 'dev.koerier.subscription.retired.v1',
        subscription: { id: SUB, owner: 'partner-lvs' },
        occurrence: [],
        time: T0,
        data: {
          status: 'retired',
          reason: `The target answered 410 Gone at ${new Date(T0).toISOString()}; Koerier no longer delivers to it.`,
        },
      },
    ]);
  });

  it("WH-2: a retried delivery keeps its failed attempts; a success after failures clears the target's record", async () => {
    const { deps, store, clock } = setup({ answers: [answered(503), answered(204)] });
    const first = task();
    const outcome = await dispatchBatch([first], deps);
    const decision = outcome.decisions[0]!;
    expect(decision).toMatchObject({ action: 'retry' });
    const saved = [...store.progress.values()][0]!;
    expect(saved.progress).toMatchObject({
      failedAttempts: 1,
      lastAttempts: [{ outcome: 'retrying', status: 503, attempt: 1 }],
    });
    expect(saved.expiresAt).toBe(Math.ceil((T0 + 7 * DAY * 1000) / 1000));
    expect(store.calls).toEqual(['recordTargetFailures 1']);
    clock.now += 60_000;
    await dispatchBatch([{ ...first, receiveCount: 2 }], deps);
    expect(store.calls).toEqual(['recordTargetFailures 1', 'recordTargetSuccess']);
    expect(store.attempts.at(-1)!.records[0]).toMatchObject({
      attempt: 2,
      outcome: 'delivered',
      status: 204,
      latencyMs: 12,
    });
  });

  it('WH-2: a success on a healthy target writes nothing about the target', async () => {
    const { deps, store } = setup();
    await dispatchBatch([task()], deps);
    expect(store.calls).toEqual([]);
  });

  it('EDU-12: a target failing for the whole suspension period is suspended, with the time since and the last failure in the reason', async () => {
    const { deps, store, statusUpdates, messages } = setup({ answers: [answered(502)] });
    store.target = { consecutiveFailures: 2, failingSince: T0 - 3 * DAY * 1000, lastFailureAt: T0 - 60_000 };
    const outcome = await dispatchBatch([task()], deps);
    // Counted for the operator's alarm on suspensions in bulk (lib/constructs/operator-alarms.ts).
    expect(outcome.suspended).toBe(1);
    const since = new Date(T0 - 3 * DAY * 1000).toISOString();
    expect(statusUpdates).toEqual([
      [
        SUB,
        'suspended',
        `No delivery has succeeded since ${since}; the last attempt failed: the target answered 502. Fix the target, then resume the subscription (POST /subscriptions/${SUB}/resume).`,
        'target-failing',
      ],
    ]);
    expect(messages('subscription suspended: its target keeps failing').map((l) => l.fields)).toEqual([
      { subscriptionId: SUB, failingSince: since },
    ]);
  });

  it('EDU-12: a target failing for less than the period is not suspended', async () => {
    const { deps, store, statusUpdates } = setup({ answers: [answered(502)] });
    store.target = { consecutiveFailures: 2, failingSince: T0 - 3 * DAY * 1000 + 1, lastFailureAt: T0 - 60_000 };
    expect((await dispatchBatch([task()], deps)).suspended).toBe(0);
    expect(statusUpdates).toEqual([]);
  });

  it('WH-2: a delivery whose retries are over is a dead letter with its attempts and the last failure', async () => {
    const { deps, store } = setup({ answers: [answered(500)], now: T0 + DAY * 1000 - 500 });
    const outcome = await dispatchBatch([task({ createdAt: T0 })], deps);
    expect(outcome.deadLettered).toBe(1);
    expect(store.deadLetters[0]!.deadLetter).toMatchObject({
      reason: 'exhausted',
      attempts: 1,
      lastAttempts: [{ outcome: 'dead-lettered', status: 500 }],
    });
    expect(store.deadLetters[0]!.deadLetter.detail).toMatch(/^retries are over \(1 attempts\); last: /);
  });

  it('WH-2: a redriven delivery keeps its link to the one it redrives when it becomes a dead letter again', async () => {
    const { deps, store } = setup({ answers: [answered(400)] });
    await dispatchBatch([task({ redriveOf: 'd-original' })], deps);
    expect(store.deadLetters[0]!.deadLetter.redriveOf).toBe('d-original');
  });

  it('WH-2: a wait longer than SQS can hold is served in hops, its end kept with the delivery', async () => {
    const { deps, store } = setup({ answers: [answered(503, { 'retry-after': String(20 * 3600) })] });
    const outcome = await dispatchBatch([task()], deps);
    expect(outcome.decisions[0]).toMatchObject({ action: 'retry', delaySeconds: MAX_DELAY_SECONDS });
    expect([...store.progress.values()][0]!.progress.nextAttemptAt).toBeGreaterThanOrEqual(T0 + 20 * 3600 * 1000);
  });
});

describe('what the operator sees of each attempt (issue 13, item 4)', () => {
  // docs/OPERATIONS.md promises one `delivery attempted` line per attempt with these fields, and the
  // per-attempt figures (DeliveryOutcomes, AttemptLatency, SubscriptionDeliveries) from one call.
  function observed(options: Parameters<typeof setup>[0]) {
    const harness = setup(options);
    const figures: unknown[] = [];
    harness.deps.metrics = { ...noMetrics, deliveryAttempted: (attempt) => void figures.push(attempt) };
    return { ...harness, figures };
  }

  it('issue 13 item 4, CE-16: an answered attempt logs its status, latency, failure code and the publish request’s correlation id, and is counted', async () => {
    const { deps, messages, figures } = observed({ answers: [answered(502)] });
    const delivery = task({ correlationId: 'publish-req-42' });
    await dispatchBatch([delivery], deps);
    const deliveryId = JSON.parse(delivery.body).deliveryId as string;
    expect(messages('delivery attempted').map((l) => [l.level, l.fields])).toEqual([
      [
        'info',
        {
          subscriptionId: SUB,
          deliveryId,
          attempt: 1,
          outcome: 'retrying',
          status: 502,
          latencyMs: 12,
          code: 'server-error',
          correlationId: 'publish-req-42',
        },
      ],
    ]);
    expect(figures).toEqual([{ subscriptionId: SUB, outcome: 'retrying', latencyMs: 12 }]);
  });

  it('issue 13 item 4: an attempt without an answer or a correlation id logs neither, and a delivered one no code', async () => {
    const { deps, messages } = observed({
      answers: [{ failure: 'timeout', message: 'no answer', latencyMs: 30 }, answered(204)],
    });
    await dispatchBatch([task(), task()], deps);
    // As the line is written (JSON): an absent field and an undefined one read the same.
    const [unanswered, delivered] = messages('delivery attempted').map(
      (l) => JSON.parse(JSON.stringify(l.fields)) as Record<string, unknown>,
    );
    expect(unanswered).toEqual({
      subscriptionId: SUB,
      deliveryId: expect.any(String),
      attempt: 1,
      outcome: 'retrying',
      latencyMs: 30,
      code: 'target-unreachable',
    });
    expect(delivered).toEqual({
      subscriptionId: SUB,
      deliveryId: expect.any(String),
      attempt: 1,
      outcome: 'delivered',
      status: 204,
      latencyMs: 12,
    });
  });
});
