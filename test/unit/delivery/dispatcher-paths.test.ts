/**
 * The dispatcher's less travelled paths: the breaker open and half-open, slot reservations lost to
 * other instances, token failures, answers without a status, waits served in hops, the history a
 * retried delivery keeps. Written where `npm run mutate` showed paths no unit test ran
 * (docs/MUTATION.md); harness in dispatcher-harness.ts.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { dispatchBatch } from '../../../functions/core/delivery/dispatcher.js';
import { probeLeaseMs } from '../../../functions/core/delivery/admission.js';
import { CredentialUnavailableError } from '../../../functions/core/delivery/dispatch-ports.js';
import { KEPT_ATTEMPTS, type AttemptRecord } from '../../../functions/core/delivery/delivery-records.js';
import { answered, DAY, policy, setup, SUB, T0, task } from './dispatcher-harness.js';

const delays = (decisions: readonly { action: string; delaySeconds?: number }[]) =>
  decisions.map((d) => (d.action === 'retry' ? d.delaySeconds : d.action));

describe('the breaker (EDU-12)', () => {
  it('EDU-12: while the breaker is open nothing is sent; each delivery comes back when the cool-down ends, spread over a tenth of it', async () => {
    const { deps, store, sent } = setup();
    store.target = { consecutiveFailures: 5, lastFailureAt: T0 - 20_000 };
    const outcome = await dispatchBatch([task(), task()], deps);
    expect(sent).toEqual([]);
    // Cool-down 60 s, 40 s left; spread min(30 s, 4 s) × random 0.5 = 2 s: 42 s.
    expect(delays(outcome.decisions)).toEqual([42, 42]);
    expect(store.calls).toEqual([]);
  });

  it('EDU-12: a long cool-down spreads the comeback by at most half a minute', async () => {
    const { deps, store } = setup();
    store.target = { consecutiveFailures: 9, failedProbes: 6, lastFailureAt: T0 };
    // 60 s × 2^6 = 3840 s, capped at an hour: spread min(30 s, 360 s) × 0.5 = 15 s.
    expect(delays((await dispatchBatch([task()], deps)).decisions)).toEqual([3615]);
  });

  it('EDU-12: after the cool-down one probe goes out, holding the target for the probe lease; the rest look again when its answer is due', async () => {
    const { deps, store, sent } = setup();
    store.target = { consecutiveFailures: 5, lastFailureAt: T0 - 60_000 };
    const outcome = await dispatchBatch([task(), task(), task()], deps);
    expect(sent).toHaveLength(1);
    expect(store.calls[0]).toBe(`takeProbe ${probeLeaseMs(policy)}`);
    // The others look again when its answer is due: the request's timeouts (10 s) plus 1 s, plus random 0.5 × 5 s, rounded up.
    expect(delays(outcome.decisions).sort()).toEqual([14, 14, 'done']);
  });

  it('EDU-12: when another instance holds the probe, nothing goes out here', async () => {
    const { deps, store, sent } = setup();
    store.target = { consecutiveFailures: 5, lastFailureAt: T0 - 60_000 };
    store.probeAvailable = false;
    const outcome = await dispatchBatch([task(), task()], deps);
    expect(sent).toEqual([]);
    expect(delays(outcome.decisions)).toEqual([14, 14]);
  });

  it('EDU-12: a probe that told nothing about the target (its token could not be fetched) ends its lease at once', async () => {
    const { deps, store, sent } = setup({
      accessToken: async () => {
        throw new CredentialUnavailableError('the token endpoint refused the client');
      },
    });
    store.target = { consecutiveFailures: 5, lastFailureAt: T0 - 60_000 };
    await dispatchBatch([task()], deps);
    expect(sent).toEqual([]);
    expect(store.calls).toEqual([`takeProbe ${probeLeaseMs(policy)}`, `releaseProbe ${probeLeaseMs(policy)}`]);
  });

  it('EDU-12: a failed probe counts as the probe against the target', async () => {
    const { deps, store } = setup({ answers: [answered(500)] });
    store.target = { consecutiveFailures: 5, lastFailureAt: T0 - 60_000 };
    const failures: unknown[] = [];
    const record = store.recordTargetFailures.bind(store);
    store.recordTargetFailures = async (id: string, count: number, now: number, probe = false) => (
      failures.push([count, probe]),
      record(id, count, now, probe)
    );
    await dispatchBatch([task()], deps);
    expect(failures).toEqual([[1, true]]);
  });
});

describe('signed deliveries (issue 12 #6)', () => {
  it("issue 12 #6, issue 28 #11: a signdeliveries subscription's request carries a Content-Digest of its body and a signature by the current key over method, target, key, digest and Content-Type", async () => {
    const { deps, sent, sentHeaders } = setup({ subscription: { signDeliveries: true } });
    const bases: string[] = [];
    deps.signingKey = async () => ({
      keyId: 'key-2026',
      algorithm: 'ed25519',
      sign: async (data) => (bases.push(Buffer.from(data).toString('utf8')), new Uint8Array([1, 2, 3])),
    });
    await dispatchBatch([task()], deps);
    const digest = `sha-256=:${createHash('sha256').update(sent[0]!).digest('base64')}:`;
    expect(sentHeaders[0]).toMatchObject({
      'content-digest': digest,
      'signature-input': `koerier=("@method" "@target-uri" "idempotency-key" "content-digest" "content-type");created=${T0 / 1000};keyid="key-2026";alg="ed25519"`,
      signature: 'koerier=:AQID:',
    });
    expect(bases).toHaveLength(1);
    expect(bases[0]).toContain(`"content-digest": ${digest}`);
    expect(bases[0]).toContain('"@method": POST');
    expect(bases[0]).toContain('"content-type": application/cloudevents+json; charset=utf-8');
  });

  it('issue 12 #6: a delivery that cannot be signed is not sent: its attempt fails as a credential failure, not counted against the target', async () => {
    const { deps, sent, store, messages } = setup({ subscription: { signDeliveries: true } });
    deps.signingKey = async () => {
      throw new Error('the key service is unreachable');
    };
    const outcome = await dispatchBatch([task()], deps);
    expect(sent).toEqual([]);
    expect(store.attempts[0]!.records[0]!.error).toEqual({
      code: 'credential',
      detail: 'the delivery could not be signed',
    });
    expect(store.calls).toEqual([]);
    expect(delays(outcome.decisions)).toEqual([30]);
    expect(messages('delivery not signed').map((l) => l.fields)).toEqual([
      { subscriptionId: SUB, error: 'the key service is unreachable' },
    ]);
  });

  it('issue 12 #6: with no signing key configured, a signdeliveries subscription gets nothing unsigned, and the log says the key is missing', async () => {
    const { deps, sent, store, messages } = setup({ subscription: { signDeliveries: true } });
    delete deps.signingKey;
    await dispatchBatch([task()], deps);
    expect(sent).toEqual([]);
    expect(store.attempts[0]!.records[0]!.error).toEqual({
      code: 'credential',
      detail: 'the delivery could not be signed',
    });
    // A deployment fault, not a passing outage of the key service: the operator must be able to tell which.
    expect(messages('delivery not signed').map((l) => l.fields)).toEqual([
      { subscriptionId: SUB, error: 'no signing key is configured' },
    ]);
  });
});

describe('rate slots shared with other instances (WH-6)', () => {
  it('WH-6: a slot lost to another instance is planned again from the stored state', async () => {
    const { deps, store, sent } = setup({ subscription: { allowedRatePerMinute: 60 } });
    store.reserveResults.push(false);
    const outcome = await dispatchBatch([task()], deps);
    expect(store.calls.filter((c) => c === 'reserveSendSlots')).toHaveLength(2);
    expect(sent).toHaveLength(1);
    expect(delays(outcome.decisions)).toEqual(['done']);
  });

  it('WH-6: after three lost reservations the deliveries come back in one to three seconds', async () => {
    const { deps, store, sent } = setup({ subscription: { allowedRatePerMinute: 60 } });
    store.reserveResults.push(false, false, false);
    const outcome = await dispatchBatch([task(), task()], deps);
    expect(store.calls.filter((c) => c === 'reserveSendSlots')).toHaveLength(3);
    expect(sent).toEqual([]);
    // 1000 + 0.5 × 2000 ms.
    expect(delays(outcome.decisions)).toEqual([2, 2]);
  });

  it('WH-6: without a rate no slot is reserved', async () => {
    const { deps, store } = setup();
    await dispatchBatch([task()], deps);
    expect(store.calls).not.toContain('reserveSendSlots');
  });
});

describe('credentials (WH-3)', () => {
  it('WH-3: a token that cannot be fetched is a failed attempt of kind credential, not counted against the target', async () => {
    const { deps, store, sent } = setup({
      accessToken: async () => {
        throw new CredentialUnavailableError('the token endpoint refused the client');
      },
    });
    const outcome = await dispatchBatch([task()], deps);
    expect(sent).toEqual([]);
    expect(delays(outcome.decisions)).toEqual([30]);
    expect(store.attempts[0]!.records[0]).toMatchObject({
      outcome: 'retrying',
      error: { code: 'credential', detail: 'the token endpoint refused the client' },
    });
    expect(store.calls).toEqual([]);
  });

  it('WH-3: any error while fetching the token is reported in the same words', async () => {
    const { deps, store } = setup({
      accessToken: async () => {
        throw new Error('socket hang up');
      },
    });
    await dispatchBatch([task()], deps);
    expect(store.attempts[0]!.records[0]!.error).toEqual({ code: 'credential', detail: 'Error: socket hang up' });
  });

  it('WH-3: a subscription whose credential yields no token sends nothing', async () => {
    const { deps, store, sent } = setup({ accessToken: async () => undefined });
    await dispatchBatch([task()], deps);
    expect(sent).toEqual([]);
    expect(store.attempts[0]!.records[0]!.error).toEqual({
      code: 'credential',
      detail: 'the subscription has no sink credential',
    });
  });

  it('WH-3: a static token goes out as it is, without asking a token endpoint first', async () => {
    const asked: unknown[] = [];
    const { deps, sentHeaders } = setup({
      subscription: { credential: { kind: 'bearer', ciphertext: 'sealed' } },
      accessToken: async (_s, options) => (asked.push(options ?? {}), 'static-token'),
    });
    deps.policy = { ...policy, sinkCredentials: 'bearer-or-oauth2' };
    await dispatchBatch([task()], deps);
    expect(sentHeaders[0]!['authorization']).toBe('Bearer static-token');
    expect(asked).toEqual([{}]);
  });

  it('WH-3: a 401 to a fresh OAuth2 token is tried again after one rate slot, at least a second, with the reason in the history', async () => {
    const { deps, store } = setup({ answers: [answered(401)], subscription: { allowedRatePerMinute: 6 } });
    const outcome = await dispatchBatch([task()], deps);
    // 6 per minute: 10 s.
    expect(delays(outcome.decisions)).toEqual([10]);
    expect(store.attempts[0]!.records[0]).toMatchObject({
      outcome: 'retrying',
      status: 401,
      error: { code: 'rejected', detail: 'the target answered 401; trying again with a fresh access token' },
      nextAttemptAt: new Date(T0 + 10_000).toISOString(),
    });
  });

  it('WH-3: without a rate the try with a fresh token waits one second', async () => {
    const { deps } = setup({ answers: [answered(401)] });
    expect(delays((await dispatchBatch([task()], deps)).decisions)).toEqual([1]);
  });

  it('WH-3: when the fresh token cannot be fetched after a 401, the attempt fails as a credential failure', async () => {
    let calls = 0;
    const { deps, store } = setup({
      answers: [answered(401)],
      accessToken: async (_s, options) => {
        calls++;
        if (options?.refresh) throw new CredentialUnavailableError('token endpoint down');
        return 'old-token';
      },
    });
    await dispatchBatch([task()], deps);
    expect(calls).toBe(2);
    expect(store.attempts[0]!.records[0]!.error).toEqual({ code: 'credential', detail: 'token endpoint down' });
  });
});

describe('answers without a status, waits and history (WH-2)', () => {
  it('WH-2: a failure without an answer is logged for the operator in its own words and shown to the subscriber in fixed ones, without a status', async () => {
    const { deps, store, messages } = setup({
      answers: [{ failure: 'connection-refused', message: 'connect ECONNREFUSED 10.0.0.7:443', latencyMs: 3 }],
    });
    await dispatchBatch([task()], deps);
    const record = store.attempts[0]!.records[0]!;
    expect(record).not.toHaveProperty('status');
    expect(record.error).toEqual({ code: 'target-unreachable', detail: 'the target could not be reached' });
    expect(messages('delivery attempt failed without an answer').map((l) => l.fields)).toEqual([
      {
        subscriptionId: SUB,
        deliveryId: record.deliveryId,
        failure: 'connection-refused',
        error: 'connect ECONNREFUSED 10.0.0.7:443',
      },
    ]);
    expect(store.calls).toEqual(['recordTargetFailures 1']);
  });

  it('WH-2: a 429 records the throttle and the attempt as throttled, not as a failure of the target', async () => {
    const { deps, store } = setup({ answers: [answered(429, { 'retry-after': '20' })] });
    const outcome = await dispatchBatch([task()], deps);
    expect(store.calls).toEqual(['recordThrottle']);
    expect(store.attempts[0]!.records[0]!.error).toEqual({
      code: 'throttled',
      detail: 'the target answered 429 Too Many Requests',
    });
    // At least the Retry-After (20 s), plus up to 10 %: 0.5 × 2 s.
    expect(delays(outcome.decisions)).toEqual([21]);
  });

  it('WH-2: a delivery received again before its long wait is over waits on, without an attempt', async () => {
    const { deps, store, sent } = setup();
    const waiting = task({}, 2);
    const { deliveryId } = JSON.parse(waiting.body) as { deliveryId: string };
    await store.putProgress(
      SUB,
      { deliveryId, failedAttempts: 3, lastAttempts: [], nextAttemptAt: T0 + 5 * 3600_000 },
      0,
    );
    const outcome = await dispatchBatch([waiting], deps);
    expect(sent).toEqual([]);
    expect(delays(outcome.decisions)).toEqual([5 * 3600]);
  });

  it('WH-2: a delivery due within a second of its planned time is attempted now', async () => {
    const { deps, store, sent } = setup();
    const due = task({}, 2);
    const { deliveryId } = JSON.parse(due.body) as { deliveryId: string };
    await store.putProgress(SUB, { deliveryId, failedAttempts: 1, lastAttempts: [], nextAttemptAt: T0 + 1000 }, 0);
    await dispatchBatch([due], deps);
    expect(sent).toHaveLength(1);
  });

  it('WH-2: the first receive of a delivery never reads progress; later receives do', async () => {
    const { deps, store } = setup({ answers: [answered(500), answered(500)] });
    let reads = 0;
    const get = store.getProgress.bind(store);
    store.getProgress = async (id, deliveryId) => (reads++, get(id, deliveryId));
    await dispatchBatch([task({}, 1)], deps);
    expect(reads).toBe(0);
    await dispatchBatch([task({}, 2)], deps);
    expect(reads).toBe(1);
  });

  it('EDU-18: a delivery keeps its last ten failed attempts, oldest first, and its dead letter shows them', async () => {
    const { deps, store } = setup({ answers: [answered(400)] });
    const rejected = task({}, 12);
    const { deliveryId } = JSON.parse(rejected.body) as { deliveryId: string };
    const earlier: AttemptRecord[] = Array.from({ length: 11 }, (_, i) => ({
      subscriptionId: SUB,
      deliveryId,
      attempt: i + 1,
      at: new Date(T0 - (11 - i) * 1000).toISOString(),
      outcome: 'retrying',
      status: 500,
      latencyMs: 5,
    }));
    await store.putProgress(SUB, { deliveryId, failedAttempts: 11, lastAttempts: earlier.slice(-KEPT_ATTEMPTS) }, 0);
    await dispatchBatch([rejected], deps);
    const { deadLetter } = store.deadLetters[0]!;
    expect(deadLetter.attempts).toBe(12);
    expect(deadLetter.lastAttempts).toHaveLength(KEPT_ATTEMPTS);
    expect(deadLetter.lastAttempts.map((a) => a.attempt)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it("EDU-18: a retried delivery's progress keeps its last ten attempts", async () => {
    const { deps, store } = setup({ answers: [answered(500)] });
    const retried = task({}, 12);
    const { deliveryId } = JSON.parse(retried.body) as { deliveryId: string };
    const earlier: AttemptRecord[] = Array.from({ length: KEPT_ATTEMPTS }, (_, i) => ({
      subscriptionId: SUB,
      deliveryId,
      attempt: i + 2,
      at: new Date(T0 - (10 - i) * 1000).toISOString(),
      outcome: 'retrying',
      status: 500,
      latencyMs: 5,
    }));
    await store.putProgress(SUB, { deliveryId, failedAttempts: 11, lastAttempts: earlier }, 0);
    await dispatchBatch([retried], deps);
    const { progress } = store.progress.get(deliveryId)!;
    expect(progress.failedAttempts).toBe(12);
    expect(progress.lastAttempts.map((a) => a.attempt)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(progress).not.toHaveProperty('nextAttemptAt');
  });

  it('EDU-18: on the last receive a failed delivery becomes a dead letter instead of going back', async () => {
    const { deps, store } = setup({ answers: [answered(500)] });
    const outcome = await dispatchBatch([task({}, policy.maxReceiveCount)], deps);
    expect(delays(outcome.decisions)).toEqual(['done']);
    expect(store.deadLetters[0]!.deadLetter).toMatchObject({ reason: 'exhausted', attempts: 1 });
  });

  it('EDU-IDEM-12: exactly at the key deadline a delivery is dead-lettered, not sent', async () => {
    const createdAt = T0 - 7 * DAY * 1000 + 60_000;
    const { deps, sent, store } = setup();
    await dispatchBatch([task({ createdAt })], deps);
    expect(sent).toEqual([]);
    expect(store.deadLetters[0]!.deadLetter).toMatchObject({
      reason: 'exhausted',
      detail: "the delivery's Idempotency-Key lifetime has passed",
    });
  });

  it('issue 29 item 3: a split goes through the outbox, addressed to the subscription it was split for', async () => {
    const { deps } = setup();
    const enqueued: { subscription: { id: string; delivery: string }; events: readonly string[] }[] = [];
    deps.outbox = {
      enqueue: async (subscription, messages) =>
        void enqueued.push(...messages.map(({ events }) => ({ subscription, events }))),
    };
    await dispatchBatch([task({ events: ['{"id":"a"}', '{"id":"b"}'] })], deps);
    expect(enqueued).toEqual([
      { subscription: expect.objectContaining({ id: SUB, delivery: 'push' }), events: ['{"id":"a"}'] },
      { subscription: expect.objectContaining({ id: SUB, delivery: 'push' }), events: ['{"id":"b"}'] },
    ]);
  });

  it('JSON-3: a split keeps the link to the dead letter it redrives', async () => {
    const { deps } = setup();
    const enqueued: { redriveOf?: string; events: readonly string[] }[] = [];
    deps.outbox = { enqueue: async (_subscription, messages) => void enqueued.push(...messages) };
    await dispatchBatch([task({ events: ['{"id":"a"}', '{"id":"b"}'], redriveOf: 'd-old' })], deps);
    expect(enqueued.map((m) => [m.events, m.redriveOf])).toEqual([
      [['{"id":"a"}'], 'd-old'],
      [['{"id":"b"}'], 'd-old'],
    ]);
  });
});

describe('reading the subscription', () => {
  it('EDU-12: a subscription cached as not active is read again fresh before its deliveries are held back', async () => {
    const { deps, reads, sent } = setup({ subscription: { status: 'suspended' }, freshSubscription: {} });
    await dispatchBatch([task()], deps);
    expect(reads).toEqual(['cached', 'fresh']);
    expect(sent).toHaveLength(1);
  });

  it('EDU-12: an active cached subscription is not read again', async () => {
    const { deps, reads } = setup();
    await dispatchBatch([task()], deps);
    expect(reads).toEqual(['cached']);
  });
});

describe('details a subscriber sees in its history', () => {
  it('WH-2: a 410 and a 4xx are recorded with their codes and words', async () => {
    const gone = setup({ answers: [answered(410)] });
    await dispatchBatch([task()], gone.deps);
    expect(gone.store.attempts[0]!.records[0]).toMatchObject({
      outcome: 'retired',
      status: 410,
      error: { code: 'gone', detail: 'the target answered 410 Gone' },
    });
    const rejected = setup({ answers: [answered(422)] });
    await dispatchBatch([task()], rejected.deps);
    expect(rejected.store.attempts[0]!.records[0]).toMatchObject({
      outcome: 'dead-lettered',
      status: 422,
      error: { code: 'rejected', detail: 'the target answered 422' },
    });
  });

  it("WH-2: on its last receive a failed delivery's dead letter says its retries are over, with the last failure", async () => {
    const { deps, store } = setup({ answers: [answered(500)] });
    await dispatchBatch([task({}, policy.maxReceiveCount)], deps);
    expect(store.deadLetters[0]!.deadLetter.detail).toBe(
      'retries are over (1 attempts); last: the target answered 500',
    );
  });

  it("WH-3: a credential failure takes no time of the target's", async () => {
    const { deps, store } = setup({
      accessToken: async () => {
        throw new CredentialUnavailableError('down');
      },
    });
    await dispatchBatch([task()], deps);
    expect(store.attempts[0]!.records[0]!.latencyMs).toBe(0);
  });

  it("WH-3: a 401 to a static token is the target's answer: no fresh token is asked for", async () => {
    const asked: unknown[] = [];
    const { deps, store } = setup({
      answers: [answered(401)],
      subscription: { credential: { kind: 'bearer', ciphertext: 'sealed' } },
      accessToken: async (_s, options) => (asked.push(options ?? {}), 'static-token'),
    });
    deps.policy = { ...policy, sinkCredentials: 'bearer-or-oauth2' };
    await dispatchBatch([task()], deps);
    expect(asked).toEqual([{}]);
    expect(store.deadLetters[0]!.deadLetter.reason).toBe('rejected');
  });

  it('WH-6: an OAuth2 token is fetched before the rate slots are reserved, so each request leaves at its slot', async () => {
    const order: string[] = [];
    const { deps, store } = setup({
      subscription: { allowedRatePerMinute: 60 },
      accessToken: async () => (order.push('token'), 'access-token'),
    });
    const reserve = store.reserveSendSlots.bind(store);
    store.reserveSendSlots = async (...args) => (order.push('reserve'), reserve(...args));
    await dispatchBatch([task()], deps);
    expect(order).toEqual(['token', 'reserve']);
  });

  it('EDU-12: a success clears a target with failures on record, or one merely marked failing', async () => {
    for (const target of [{ consecutiveFailures: 2 }, { consecutiveFailures: 0, failingSince: T0 - 1000 }]) {
      const { deps, store } = setup();
      store.target = target;
      await dispatchBatch([task()], deps);
      expect(store.calls).toContain('recordTargetSuccess');
    }
  });

  it('WH-3: a subscription that is no longer active is not suspended for its credential', async () => {
    const { deps, statusUpdates } = setup({ subscription: { status: 'retired', credential: undefined } });
    await dispatchBatch([task()], deps);
    expect(statusUpdates).toEqual([]);
  });

  it('JSON-3: two identical events in one message still split into two deliveries with keys of their own', async () => {
    const { deps } = setup();
    const enqueued: { deliveryId: string }[] = [];
    deps.outbox = { enqueue: async (_subscription, messages) => void enqueued.push(...messages) };
    await dispatchBatch([task({ events: ['{"id":"same"}', '{"id":"same"}'] })], deps);
    expect(new Set(enqueued.map((m) => m.deliveryId)).size).toBe(2);
  });

  it("EDU-IDEM-11: the same events split out of two different deliveries get different keys: each child key derives from its parent's", async () => {
    const { deps } = setup();
    const enqueued: { deliveryId: string }[] = [];
    deps.outbox = { enqueue: async (_subscription, messages) => void enqueued.push(...messages) };
    await dispatchBatch(
      [task({ events: ['{"id":"a"}', '{"id":"b"}'] }), task({ events: ['{"id":"a"}', '{"id":"b"}'] })],
      deps,
    );
    expect(new Set(enqueued.map((m) => m.deliveryId)).size).toBe(4);
  });

  it('EDU-18: store trouble reading the targets counts no attempts', async () => {
    const { deps, store } = setup();
    store.failures.getTargets = true;
    expect((await dispatchBatch([task()], deps)).attempts).toBe(0);
  });
});

describe('entitlement and filters, again on every attempt (issue 28, item 9; issue 29, item 3)', () => {
  const event = (id: string, type: string, subject: string) =>
    JSON.stringify({ specversion: '1.0', id, source: 'urn:nld:oin:0001', type, subject });
  /** Routed while every event matched; since then the grant narrowed to nl.edu.a. and the filter to subject leerling-*. */
  function narrowed(fields: Parameters<typeof setup>[0] = {}) {
    const context = setup({
      subscription: { filters: [{ prefix: { subject: 'leerling-' } }], ...fields.subscription },
      ...fields,
    });
    context.deps.entitlements = async () => new Map([['subscriber', [{ typePrefix: 'nl.edu.a.' }]]]);
    return context;
  }

  it('EDU-7, EDU-18, issue 29 item 3: a push delivery the owner may no longer receive (grant withdrawn, filters changed) is not sent: it is settled unsent and logged with the reason, not dead-lettered', async () => {
    const { deps, sent, store, logs } = narrowed();
    // The first was tried once before, when the grant still held.
    const retried = task({ events: [event('1', 'nl.edu.b.v1', 'leerling-1')] }, 2);
    const deliveryId = retried.messageId.slice('m-'.length);
    store.progress.set(deliveryId, {
      progress: { deliveryId, failedAttempts: 1, lastAttempts: [{ attempt: 1 } as AttemptRecord] },
      expiresAt: 0,
    });
    const outcome = await dispatchBatch(
      [
        retried,
        task({ events: [event('2', 'nl.edu.a.v1', 'klas-2')] }),
        task({ events: [event('3', 'nl.edu.a.v1', 'leerling-3')] }),
      ],
      deps,
    );
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]!)).toMatchObject({ id: '3' });
    expect(store.deadLetters).toEqual([]);
    expect(outcome.deadLettered).toBe(0);
    expect(
      logs
        .filter((line) => line.message === 'delivery withheld: settled unsent')
        .map(({ fields }) => fields['reason'])
        .sort(),
    ).toEqual(['no-longer-matches', 'not-entitled']);
    // All three leave the queue: one sent, two settled unsent.
    expect(outcome.decisions.filter((decision) => decision.action === 'done')).toHaveLength(3);
  });

  it('EDU-7, EDU-IDEM-11, issue 28: a batch delivery of which only some events may go is split, so each goes or is withheld on its own under a key of its own', async () => {
    const { deps, sent, store } = narrowed({ subscription: { contentMode: 'batch', batchSupported: true } });
    const enqueued: { events: readonly string[] }[] = [];
    deps.outbox = { enqueue: async (_subscription, messages) => void enqueued.push(...messages) };
    await dispatchBatch(
      [task({ events: [event('1', 'nl.edu.a.v1', 'leerling-1'), event('2', 'nl.edu.b.v1', 'leerling-2')] })],
      deps,
    );
    expect(sent).toEqual([]);
    expect(store.deadLetters).toEqual([]);
    expect(enqueued.map((message) => message.events.map((json) => (JSON.parse(json) as { id: string }).id))).toEqual([
      ['1'],
      ['2'],
    ]);
  });
});
