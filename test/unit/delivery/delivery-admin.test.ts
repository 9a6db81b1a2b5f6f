/**
 * DeliveryAdmin with an in-memory delivery state store: what a subscriber sees of its deliveries
 * and dead letters, and what a redrive or a resume sends again (EDU-18, EDU-IDEM-13, review #16).
 * The same flows against the emulators and the laptop host are in test/integration/delivery-*.test.ts
 * and test/e2e/delivery-push.test.ts; these run per mutant in `npm run mutate`.
 */
import { describe, expect, it } from 'vitest';
import { scopes, type Principal } from '../../../functions/core/auth/access-tokens.js';
import { DeliveryAdmin, type DeliveryAdminDependencies } from '../../../functions/core/delivery/delivery-admin.js';
import { MAX_REDRIVE } from '../../../functions/core/delivery/redrive.js';
import type { DeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import {
  InvalidPageCursorError,
  type AttemptRecord,
  type DeadLetter,
  type DeadLetterStore,
  type DeliveryLedger,
  type Page,
  type TargetHealthStore,
} from '../../../functions/core/delivery/delivery-records.js';
import type { HttpRequest, HttpResponse } from '../../../functions/core/http/messages.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import type { Overrides } from '../../support/overrides.js';
import { subscription as storedSubscription, T0 as NOW } from './dispatcher-harness.js';
import { answering } from '../../support/refusals.js';
import { problemTypeUri } from '../../support/problem-types.js';
import {
  operationalEventJson,
  operationalEventTypes,
  type OperationalNotice,
} from '../../../functions/core/operations/operational-events.js';

/** All three delivery ports in one in-memory object; DeliveryAdmin uses a few methods of each. */
type DeliveryStateStore = TargetHealthStore & DeliveryLedger & DeadLetterStore;

const SOURCE = 'urn:nld:oin:00000001234567890000:systeem:lvs';
const TYPE = 'nl.edu.leerling.ingeschreven.v1';
const owner: Principal = { clientId: 'subscriber', scopes: new Set([scopes.manageSubscriptions]) };
const stranger: Principal = { clientId: 'someone-else', scopes: new Set([scopes.manageSubscriptions]) };
const admin: Principal = { clientId: 'operator', scopes: new Set([scopes.admin]) };

const event = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    specversion: '1.0',
    id,
    source: SOURCE,
    type: TYPE,
    subject: `leerling/${id}`,
    ...extra,
    data: { secret: 'never shown' },
  });

function subscription(over: Overrides<Subscription> = {}): Subscription {
  return storedSubscription({
    id: 'sub-1',
    sink: 'https://ontvanger.example/hook',
    routeKeys: [],
    version: 1,
    ...over,
  });
}

function deadLetter(n: number, over: Partial<DeadLetter> = {}): DeadLetter {
  return {
    subscriptionId: 'sub-1',
    deliveryId: `d-${String(n).padStart(4, '0')}`,
    events: [event(`e${n}`)],
    createdAt: NOW - 1000 * (10_000 - n),
    deadLetteredAt: new Date(NOW).toISOString(),
    reason: 'exhausted',
    detail: 'retries are over',
    attempts: 3,
    lastAttempts: [],
    ...over,
  };
}

function attempt(n: number, over: Overrides<AttemptRecord> = {}): AttemptRecord {
  return {
    subscriptionId: 'sub-1',
    deliveryId: `d-${n}`,
    attempt: 1,
    at: new Date(NOW - n).toISOString(),
    outcome: 'retrying',
    status: 500,
    latencyMs: 40 + n,
    ...over,
  } as AttemptRecord;
}

/** Pages by position; a cursor is the next position as text, anything else is forged. */
function paged<T>(items: readonly T[], page: { limit: number; cursor?: string | undefined }): Page<T> {
  const start = page.cursor === undefined ? 0 : Number(page.cursor);
  if (!Number.isInteger(start) || start < 0) throw new InvalidPageCursorError('forged');
  const end = start + page.limit;
  return { items: items.slice(start, end), cursor: end < items.length ? String(end) : undefined };
}

function setUp(
  options: {
    subscription?: Subscription | undefined;
    deadLetters?: DeadLetter[];
    attempts?: AttemptRecord[];
    entitlements?: [string, { typePrefix: string; source?: string }[]][];
    store?: Partial<DeliveryStateStore>;
  } = {},
) {
  let deadLetters = [...(options.deadLetters ?? [])];
  const calls: string[] = [];
  const enqueued: DeliveryMessage[] = [];
  const audits: { message: string; fields: Record<string, unknown> }[] = [];
  const statusChanges: unknown[][] = [];
  const told: OperationalNotice[] = [];
  const unused = async () => Promise.reject(new Error('not used by DeliveryAdmin'));
  const store = {
    getTarget: unused,
    getTargets: unused,
    reserveSendSlots: unused,
    takeProbe: unused,
    releaseProbe: unused,
    recordTargetSuccess: unused,
    recordTargetFailures: unused,
    recordThrottle: unused,
    resetTarget: async (id: string) => void calls.push(`resetTarget ${id}`),
    getProgress: unused,
    putProgress: unused,
    recordAttempts: unused,
    listAttempts: async (_id: string, page: { limit: number; cursor?: string | undefined }) =>
      paged(options.attempts ?? [], page),
    putDeadLetter: unused,
    listDeadLetters: async (_id: string, page: { limit: number; cursor?: string | undefined }) =>
      paged(deadLetters, page),
    deleteDeadLetters: async (gone: readonly Pick<DeadLetter, 'deliveryId'>[]) => {
      calls.push(`delete ${gone.length}`);
      const ids = new Set(gone.map((d) => d.deliveryId));
      deadLetters = deadLetters.filter((d) => !ids.has(d.deliveryId));
    },
    ...options.store,
  } as unknown as DeliveryStateStore;
  const current = { value: 'subscription' in options ? options.subscription : subscription() };
  const deps: DeliveryAdminDependencies = {
    targets: store,
    breaker: { failureThreshold: 5, cooldownSeconds: 60 },
    ledger: store,
    deadLetters: store,
    subscriptions: {
      get: async (id) => (current.value?.id === id ? current.value : undefined),
      updateStatus: async (...args: unknown[]) => void statusChanges.push(args),
    },
    outbox: {
      enqueue: async (_subscription, messages) => {
        calls.push(`enqueue ${messages.length}`);
        enqueued.push(...messages);
      },
    },
    audit: {
      info: (message, fields) => void audits.push({ message, fields }),
      warn: (message, fields) => void audits.push({ message, fields }),
      error: (message, fields) => void audits.push({ message, fields }),
    },
    entitlements: new Map(options.entitlements ?? [['subscriber', [{ typePrefix: 'nl.edu.' }]]]),
    sinkCredentials: 'oauth2-only',
    operations: { publish: async (notices) => void told.push(...notices) },
    clock: () => NOW,
  };
  return {
    admin: answering(new DeliveryAdmin(deps)),
    calls,
    enqueued,
    audits,
    statusChanges,
    told,
    remaining: () => deadLetters,
  };
}

const get = (query: Record<string, string> = {}): HttpRequest => ({
  method: 'GET',
  routeKey: 'GET /subscriptions/{id}/deliveries',
  path: '/',
  headers: {},
  query,
  pathParameters: {},
  body: Buffer.alloc(0),
});
const post = (body: unknown): HttpRequest => ({
  method: 'POST',
  routeKey: 'POST /subscriptions/{id}/dead-letters/redrive',
  path: '/',
  headers: {},
  query: {},
  pathParameters: {},
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});
const json = (response: HttpResponse) => JSON.parse(response.body) as Record<string, unknown>;

describe('listing attempts and dead letters (EDU-18)', () => {
  it('EDU-18: the owner pages through the attempts, 50 by default, with a next link that keeps the limit', async () => {
    const { admin: deliveries } = setUp({ attempts: Array.from({ length: 60 }, (_, i) => attempt(i)) });
    const first = await deliveries.listAttempts(owner, 'sub-1', get());
    expect(first.status).toBe(200);
    const body = json(first);
    expect((body['attempts'] as unknown[]).length).toBe(50);
    expect(body['next']).toBe('/v1/subscriptions/sub-1/deliveries?limit=50&cursor=50');
    expect(first.headers['link']).toBe('</v1/subscriptions/sub-1/deliveries?limit=50&cursor=50>; rel="next"');
    const last = json(await deliveries.listAttempts(owner, 'sub-1', get({ limit: '50', cursor: '50' })));
    expect((last['attempts'] as unknown[]).length).toBe(10);
    expect(last).not.toHaveProperty('next');
  });

  it("EDU-18, review #19: an attempt shows the target's status and latency; one without an answer shows no latency; never the subscription id", async () => {
    const { admin: deliveries } = setUp({
      attempts: [
        attempt(1),
        attempt(2, { status: undefined, error: { code: 'target-unreachable', detail: 'no answer' } }),
      ],
    });
    const [answered, unanswered] = json(await deliveries.listAttempts(owner, 'sub-1', get()))['attempts'] as Record<
      string,
      unknown
    >[];
    expect(answered).toEqual({
      deliveryId: 'd-1',
      attempt: 1,
      at: new Date(NOW - 1).toISOString(),
      outcome: 'retrying',
      status: 500,
      latencyMs: 41,
    });
    expect(unanswered).toEqual({
      deliveryId: 'd-2',
      attempt: 1,
      at: new Date(NOW - 2).toISOString(),
      outcome: 'retrying',
      error: { code: 'target-unreachable', detail: 'no answer' },
    });
  });

  it.each([['0'], ['101'], ['1.5'], ['ten']])('EDU-18: limit=%s is refused with 400', async (limit) => {
    const { admin: deliveries } = setUp();
    const response = await deliveries.listDeadLetters(owner, 'sub-1', get({ limit }));
    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject({
      type: problemTypeUri('invalid-parameter'),
      detail: 'limit must be an integer from 1 to 100.',
    });
  });

  it('EDU-18: limits 1 and 100 are taken', async () => {
    const { admin: deliveries } = setUp({ deadLetters: Array.from({ length: 120 }, (_, i) => deadLetter(i)) });
    expect(
      (json(await deliveries.listDeadLetters(owner, 'sub-1', get({ limit: '1' })))['deadLetters'] as unknown[]).length,
    ).toBe(1);
    expect(
      (json(await deliveries.listDeadLetters(owner, 'sub-1', get({ limit: '100' })))['deadLetters'] as unknown[])
        .length,
    ).toBe(100);
  });

  it('review #10: a cursor the list did not hand out is a 400, not a 500', async () => {
    const { admin: deliveries } = setUp({ deadLetters: [deadLetter(1)] });
    const response = await deliveries.listDeadLetters(owner, 'sub-1', get({ cursor: 'forged' }));
    expect(response.status).toBe(400);
    expect(json(response)['detail']).toBe('cursor is not one this list handed out.');
  });

  it('CE-16: a dead letter shows its events by their context attributes, never their data', async () => {
    const { admin: deliveries } = setUp({
      deadLetters: [
        deadLetter(1, { redriveOf: 'd-old' }),
        deadLetter(2, { events: [JSON.stringify({ specversion: '1.0', id: 'x', source: SOURCE, type: TYPE })] }),
      ],
    });
    const response = await deliveries.listDeadLetters(owner, 'sub-1', get());
    expect(response.body).not.toContain('never shown');
    const [first, second] = json(response)['deadLetters'] as Record<string, unknown>[];
    expect(first).toEqual({
      deliveryId: 'd-0001',
      createdAt: new Date(NOW - 1000 * 9999).toISOString(),
      deadLetteredAt: new Date(NOW).toISOString(),
      reason: 'exhausted',
      detail: 'retries are over',
      attempts: 3,
      lastAttempts: [],
      events: [{ id: 'e1', source: SOURCE, type: TYPE, subject: 'leerling/e1' }],
      redriveOf: 'd-old',
    });
    expect(second!['events']).toEqual([{ id: 'x', source: SOURCE, type: TYPE }]);
    expect(second).not.toHaveProperty('redriveOf');
  });

  it("EDU-7: another client's subscription is not there for it — 404 for lists, redrive and resume; an admin sees it", async () => {
    const { admin: deliveries } = setUp({
      deadLetters: [deadLetter(1)],
      subscription: subscription({ status: 'suspended', suspendedFor: 'target-failing' }),
    });
    for (const response of [
      await deliveries.listAttempts(stranger, 'sub-1', get()),
      await deliveries.listDeadLetters(stranger, 'sub-1', get()),
      await deliveries.redrive(stranger, 'sub-1', post({ all: true })),
      await deliveries.resume(stranger, 'sub-1'),
      await deliveries.listDeadLetters(owner, 'sub-unknown', get()),
    ]) {
      expect(response.status).toBe(404);
    }
    expect((await deliveries.listDeadLetters(admin, 'sub-1', get())).status).toBe(200);
  });
});

describe("the subscription's delivery health (issue 13, item 5)", () => {
  const failing = { consecutiveFailures: 6, failingSince: NOW - 600_000, lastFailureAt: NOW - 10_000 };

  it('EDU-18: an open breaker reads breaker-open with its failure streak, since when, the last success and when the next attempt may go', async () => {
    const { admin } = setUp({
      attempts: [
        attempt(1),
        attempt(2, { outcome: 'delivered', status: 202 }),
        attempt(3, { outcome: 'delivered', status: 202 }),
      ],
      store: { getTarget: async () => failing },
    });
    const health = json(await admin.health(owner, 'sub-1'));
    expect(health).toEqual({
      id: 'sub-1',
      state: 'breaker-open',
      breaker: 'open',
      failurestreak: 6,
      failingsince: new Date(NOW - 600_000).toISOString(),
      lastfailure: new Date(NOW - 10_000).toISOString(),
      lastsuccess: new Date(NOW - 2).toISOString(),
      nextattemptat: new Date(NOW - 10_000 + 60_000).toISOString(),
    });
  });

  it('EDU-18: once the cool-down is over the breaker is half-open and no next-attempt time in the past is shown; a healthy target says so', async () => {
    const { admin } = setUp({ store: { getTarget: async () => ({ ...failing, lastFailureAt: NOW - 120_000 }) } });
    const probing = json(await admin.health(owner, 'sub-1'));
    expect(probing).toMatchObject({ state: 'probing', breaker: 'half-open' });
    expect(probing).not.toHaveProperty('nextattemptat');
    const { admin: healthyAdmin } = setUp({ store: { getTarget: async () => ({ consecutiveFailures: 0 }) } });
    expect(json(await healthyAdmin.health(owner, 'sub-1'))).toEqual({
      id: 'sub-1',
      state: 'healthy',
      breaker: 'closed',
      failurestreak: 0,
    });
  });

  it('EDU-12: failures below the breaker threshold read failing with the breaker closed; a 429 slow-down without failures reads throttled with its rate', async () => {
    const { admin: failingAdmin } = setUp({
      store: {
        getTarget: async () => ({ consecutiveFailures: 2, failingSince: NOW - 5000, lastFailureAt: NOW - 1000 }),
      },
    });
    expect(json(await failingAdmin.health(owner, 'sub-1'))).toMatchObject({
      state: 'failing',
      breaker: 'closed',
      failurestreak: 2,
    });
    const { admin: throttledAdmin } = setUp({
      store: {
        getTarget: async () => ({ consecutiveFailures: 0, throttle: { ratePerMinute: 30, since: NOW - 1000 } }),
      },
    });
    expect(json(await throttledAdmin.health(owner, 'sub-1'))).toEqual({
      id: 'sub-1',
      state: 'throttled',
      breaker: 'closed',
      failurestreak: 0,
      throttledto: 30,
    });
  });

  it('EDU-10, EDU-18: a next send held back by the rate shows when it may go, with the breaker closed; one due exactly now is not "ahead"', async () => {
    const { admin: spaced } = setUp({
      store: { getTarget: async () => ({ consecutiveFailures: 0, nextSendAt: NOW + 4000 }) },
    });
    expect(json(await spaced.health(owner, 'sub-1'))).toMatchObject({
      state: 'healthy',
      nextattemptat: new Date(NOW + 4000).toISOString(),
    });
    const { admin: due } = setUp({ store: { getTarget: async () => ({ consecutiveFailures: 0, nextSendAt: NOW }) } });
    expect(json(await due.health(owner, 'sub-1'))).not.toHaveProperty('nextattemptat');
  });

  it("EDU-7: another client's subscription's health is not found", async () => {
    const { admin } = setUp({ store: { getTarget: async () => failing } });
    expect((await admin.health(stranger, 'sub-1')).status).toBe(404);
  });
});

describe('redrive (EDU-18, EDU-IDEM-13)', () => {
  // Issue 29 item 2: the selection is checked against its schema (REDRIVE_BODY), so a refusal names
  // the member and its rule in `errors` as every body's does, and malformed JSON is `malformed-json`.
  const wrong = (attribute: string | undefined, rule: string) => ({
    type: problemTypeUri('invalid-redrive-selection'),
    errors: [{ ...(attribute === undefined ? {} : { attribute }), rule, requirement: 'EDU-18' }],
  });
  it.each([
    ['not JSON', '{all', { type: problemTypeUri('malformed-json'), detail: 'The body is not valid JSON (RFC 8259).' }],
    ['a list', '[]', wrong(undefined, 'object')],
    ['null', 'null', wrong(undefined, 'object')],
    ['an unknown member', { all: true, force: true }, wrong('force', 'unknown-member')],
    ['both', { all: true, deliveryIds: ['d-1'] }, wrong('deliveryIds', 'unknown-member')],
    ['all false', { all: false }, wrong('all', 'one-of')],
    ['an empty list', { deliveryIds: [] }, wrong('deliveryIds', 'items')],
    [
      'too many ids',
      { deliveryIds: Array.from({ length: MAX_REDRIVE + 1 }, (_, i) => `d-${i}`) },
      wrong('deliveryIds', 'items'),
    ],
    ['an empty id', { deliveryIds: ['d-1', ''] }, wrong('deliveryIds[1]', 'length')],
    ['a numeric id', { deliveryIds: [7] }, wrong('deliveryIds[0]', 'string')],
    // Not a string, yet it has a length: only the type check refuses it.
    ['a list as an id', { deliveryIds: [['d-0001']] }, wrong('deliveryIds[0]', 'string')],
  ])('EDU-18: a selection that is %s is a 400 naming what is wrong', async (_what, body, expected) => {
    const { admin: deliveries, calls } = setUp({ deadLetters: [deadLetter(1)] });
    const response = await deliveries.redrive(owner, 'sub-1', post(body));
    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject(expected);
    expect(calls).toEqual([]);
  });

  it('EDU-18: exactly the largest selection is taken', async () => {
    const { admin: deliveries } = setUp({ deadLetters: [deadLetter(1)] });
    const response = await deliveries.redrive(
      owner,
      'sub-1',
      post({ deliveryIds: Array.from({ length: MAX_REDRIVE }, (_, i) => `d-${String(i).padStart(4, '0')}`) }),
    );
    expect(response.status).toBe(202);
  });

  it('EDU-IDEM-13: a redrive queues each dead letter as a new delivery under a new key, linked to the old one, then removes the dead letters', async () => {
    const {
      admin: deliveries,
      calls,
      enqueued,
      audits,
      remaining,
    } = setUp({ deadLetters: [deadLetter(1), deadLetter(2)] });
    const response = await deliveries.redrive(owner, 'sub-1', post({ all: true }));
    expect(response.status).toBe(202);
    expect(calls).toEqual(['enqueue 2', 'delete 2']);
    expect(remaining()).toEqual([]);
    expect(enqueued.map((m) => ({ ...m, deliveryId: 'new' }))).toEqual([
      {
        version: 1,
        deliveryId: 'new',
        subscriptionId: 'sub-1',
        events: [event('e1')],
        createdAt: NOW,
        redriveOf: 'd-0001',
      },
      {
        version: 1,
        deliveryId: 'new',
        subscriptionId: 'sub-1',
        events: [event('e2')],
        createdAt: NOW,
        redriveOf: 'd-0002',
      },
    ]);
    for (const message of enqueued)
      expect(message.deliveryId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(json(response)).toEqual({
      redriven: enqueued.map((m) => ({ deliveryId: m.redriveOf, newDeliveryId: m.deliveryId })),
      more: false,
    });
    expect(audits).toEqual([
      {
        message: 'dead letters redriven',
        fields: { subscriptionId: 'sub-1', by: 'subscriber', count: 2, withheld: [] },
      },
    ]);
  });

  it('EDU-18: a redrive by ids sends those, and names the ids it did not find', async () => {
    const {
      admin: deliveries,
      enqueued,
      remaining,
    } = setUp({ deadLetters: [deadLetter(1), deadLetter(2), deadLetter(3)] });
    const body = json(await deliveries.redrive(owner, 'sub-1', post({ deliveryIds: ['d-0002', 'd-9999'] })));
    expect(enqueued.map((m) => m.redriveOf)).toEqual(['d-0002']);
    expect(body['notFound']).toEqual(['d-9999']);
    expect(remaining().map((d) => d.deliveryId)).toEqual(['d-0001', 'd-0003']);
  });

  it('EDU-18: nothing to send is a 202 with nothing queued', async () => {
    const { admin: deliveries, calls } = setUp();
    expect(json(await deliveries.redrive(owner, 'sub-1', post({ all: true })))).toEqual({ redriven: [], more: false });
    expect(calls).toEqual([]);
  });

  it('EDU-18: one request sends at most 500, reading every page, and says there are more', async () => {
    const { admin: deliveries, enqueued } = setUp({
      deadLetters: Array.from({ length: MAX_REDRIVE + 20 }, (_, i) => deadLetter(i)),
    });
    const body = json(await deliveries.redrive(owner, 'sub-1', post({ all: true })));
    expect(enqueued).toHaveLength(MAX_REDRIVE);
    expect(body['more']).toBe(true);
    const again = json(await deliveries.redrive(owner, 'sub-1', post({ all: true })));
    expect(again['more']).toBe(false);
    expect(enqueued).toHaveLength(MAX_REDRIVE + 20);
  });

  it('EDU-18: a subscription that is not active gets nothing; a suspended one is told to resume first', async () => {
    const suspended = setUp({ deadLetters: [deadLetter(1)], subscription: subscription({ status: 'suspended' }) });
    const response = await suspended.admin.redrive(owner, 'sub-1', post({ all: true }));
    expect(response.status).toBe(409);
    expect(json(response)).toMatchObject({
      type: problemTypeUri('subscription-not-active'),
      detail:
        'The subscription is suspended; nothing can be delivered to it. Resume it first (POST /subscriptions/sub-1/resume).',
    });
    const retired = setUp({ deadLetters: [deadLetter(1)], subscription: subscription({ status: 'retired' }) });
    expect(json(await retired.admin.redrive(owner, 'sub-1', post({ all: true })))['detail']).toBe(
      'The subscription is retired; nothing can be delivered to it.',
    );
    expect([...suspended.calls, ...retired.calls]).toEqual([]);
  });

  it('review #16: a dead letter the owner is no longer entitled to, or that no longer matches the filters, is withheld and kept', async () => {
    const gov = deadLetter(2, { events: [event('e2', { type: 'nl.gov.zaak.gestart.v1' })] });
    const otherSubject = deadLetter(3, { events: [event('e3', { subject: 'leerling/other' })] });
    const {
      admin: deliveries,
      enqueued,
      remaining,
      audits,
    } = setUp({
      deadLetters: [deadLetter(1), gov, otherSubject],
      subscription: subscription({ filters: [{ prefix: { subject: 'leerling/e' } }] }),
    });
    const body = json(await deliveries.redrive(owner, 'sub-1', post({ all: true })));
    expect(enqueued.map((m) => m.redriveOf)).toEqual(['d-0001']);
    expect(body['withheld']).toEqual([
      { deliveryId: 'd-0002', reason: 'not-entitled' },
      { deliveryId: 'd-0003', reason: 'no-longer-matches' },
    ]);
    expect(remaining().map((d) => d.deliveryId)).toEqual(['d-0002', 'd-0003']);
    expect(audits[0]!.fields['withheld']).toEqual(body['withheld']);
  });

  it('review #16, EDU-7: a grant limited to one source withholds dead letters from another source', async () => {
    const { admin: deliveries, enqueued } = setUp({
      deadLetters: [deadLetter(1)],
      entitlements: [['subscriber', [{ typePrefix: 'nl.edu.', source: 'urn:nld:oin:1:systeem:x' }]]],
    });
    expect(json(await deliveries.redrive(owner, 'sub-1', post({ all: true })))['withheld']).toEqual([
      { deliveryId: 'd-0001', reason: 'not-entitled' },
    ]);
    expect(enqueued).toEqual([]);
  });
});

describe('resume (EDU-12, EDU-18)', () => {
  it("EDU-12: resuming a suspended subscription clears the target's failures, activates it and sends what was parked meanwhile", async () => {
    const parked = [
      deadLetter(1, { reason: 'subscription-suspended' }),
      deadLetter(2, { reason: 'exhausted' }),
      deadLetter(3, { reason: 'subscription-suspended' }),
    ];
    const {
      admin: deliveries,
      calls,
      enqueued,
      statusChanges,
      audits,
      remaining,
    } = setUp({
      deadLetters: parked,
      subscription: subscription({ status: 'suspended', suspendedFor: 'target-failing' }),
    });
    const response = await deliveries.resume(owner, 'sub-1');
    expect(response.status).toBe(200);
    expect(json(response)).toEqual({ id: 'sub-1', status: 'active', redriven: 2 });
    expect(calls[0]).toBe('resetTarget sub-1');
    expect(statusChanges[0]!.slice(0, 3)).toEqual([
      'sub-1',
      'active',
      `Resumed by subscriber at ${new Date(NOW).toISOString()}.`,
    ]);
    expect(enqueued.map((m) => m.redriveOf)).toEqual(['d-0001', 'd-0003']);
    expect(remaining().map((d) => d.deliveryId)).toEqual(['d-0002']);
    expect(audits).toEqual([
      {
        message: 'subscription resumed',
        fields: { subscriptionId: 'sub-1', by: 'subscriber', redriven: 2, withheld: [] },
      },
    ]);
  });

  it('EDU-12: a resume is told to the owner as an operational event, with who resumed it and how much went out again; each resume is an event of its own', async () => {
    const parked = [deadLetter(1, { reason: 'subscription-suspended' })];
    const { admin: deliveries, told } = setUp({
      deadLetters: parked,
      subscription: subscription({ status: 'suspended', suspendedFor: 'paused', version: 4 }),
    });
    await deliveries.resume(owner, 'sub-1');
    expect(told).toEqual([
      {
        type: operationalEventTypes.subscriptionResumed,
        subscription: { id: 'sub-1', owner: 'subscriber' },
        occurrence: ['4'],
        time: NOW,
        data: { status: 'active', resumedBy: 'subscriber', redriven: 1 },
      },
    ]);
    // The router drops an operational event whose id it has seen: a later resume (a later version) must not share it.
    const later = setUp({ subscription: subscription({ status: 'suspended', suspendedFor: 'paused', version: 6 }) });
    await later.admin.resume(owner, 'sub-1');
    const id = (notice: OperationalNotice) =>
      (JSON.parse(operationalEventJson(notice, 'urn:koerier')) as { id: string }).id;
    expect(id(later.told[0]!)).not.toBe(id(told[0]!));
  });

  it('review #16: on resume, parked deliveries the owner may no longer receive stay parked and are listed', async () => {
    const parked = [
      deadLetter(1, { reason: 'subscription-suspended' }),
      deadLetter(2, { reason: 'subscription-suspended', events: [event('e2', { type: 'nl.gov.x.v1' })] }),
    ];
    const { admin: deliveries, enqueued } = setUp({
      deadLetters: parked,
      subscription: subscription({ status: 'suspended', suspendedFor: 'target-failing' }),
    });
    expect(json(await deliveries.resume(owner, 'sub-1'))).toEqual({
      id: 'sub-1',
      status: 'active',
      redriven: 1,
      withheld: [{ deliveryId: 'd-0002', reason: 'not-entitled' }],
    });
    expect(enqueued.map((m) => m.redriveOf)).toEqual(['d-0001']);
  });

  it('EDU-12: resuming sends every parked delivery, however many rounds of 500 that takes', async () => {
    const parked = Array.from({ length: MAX_REDRIVE + 5 }, (_, i) =>
      deadLetter(i, { reason: 'subscription-suspended' }),
    );
    const { admin: deliveries, enqueued } = setUp({
      deadLetters: parked,
      subscription: subscription({ status: 'suspended', suspendedFor: 'target-failing' }),
    });
    expect(json(await deliveries.resume(owner, 'sub-1'))['redriven']).toBe(MAX_REDRIVE + 5);
    expect(enqueued).toHaveLength(MAX_REDRIVE + 5);
  });

  it('EDU-12: only a suspended subscription can be resumed', async () => {
    const { admin: deliveries, calls } = setUp();
    const response = await deliveries.resume(owner, 'sub-1');
    expect(response.status).toBe(409);
    expect(json(response)).toMatchObject({
      type: problemTypeUri('subscription-not-suspended'),
      detail: 'The subscription is active; only a suspended subscription can be resumed.',
    });
    expect(calls).toEqual([]);
  });

  it.each([
    [
      'suspended for want of a credential',
      { suspendedFor: 'credential-required' as const },
      'it needs a new sink credential',
    ],
    [
      'without a credential',
      { suspendedFor: 'target-failing' as const, credential: undefined },
      'the subscription has no sink credential',
    ],
    [
      'with a static token where only OAuth2 is allowed',
      { suspendedFor: 'target-failing' as const, credential: { kind: 'bearer' as const, ciphertext: 'sealed' } },
      'accepts only OAuth2 client credentials',
    ],
  ])('WH-3: a subscription %s is not resumed', async (_what, over, says) => {
    const { admin: deliveries, calls } = setUp({ subscription: subscription({ status: 'suspended', ...over }) });
    const response = await deliveries.resume(owner, 'sub-1');
    expect(response.status).toBe(409);
    expect(json(response)['type']).toBe(problemTypeUri('credential-required'));
    expect(json(response)['detail']).toContain(says);
    expect(calls).toEqual([]);
  });
});

describe('pause (EDU-12, EDU-18)', () => {
  it('EDU-12: pausing an active push subscription suspends it as paused, says so and audits who did it', async () => {
    const { admin: deliveries, statusChanges, audits } = setUp();
    const response = await deliveries.pause(owner, 'sub-1');
    expect(response.status).toBe(200);
    expect(json(response)).toEqual({ id: 'sub-1', status: 'suspended', suspendedfor: 'paused' });
    expect(statusChanges).toEqual([
      ['sub-1', 'suspended', `Paused by subscriber at ${new Date(NOW).toISOString()}.`, undefined, 'paused'],
    ]);
    expect(audits).toEqual([{ message: 'subscription paused', fields: { subscriptionId: 'sub-1', by: 'subscriber' } }]);
  });

  it('EDU-17: a pull subscription is not paused (it pauses by not receiving): 409 not-a-push-subscription, nothing changed', async () => {
    const { admin: deliveries, statusChanges } = setUp({ subscription: subscription({ delivery: 'pull' }) });
    const response = await deliveries.pause(owner, 'sub-1');
    expect(response.status).toBe(409);
    expect(json(response)).toMatchObject({
      type: problemTypeUri('not-a-push-subscription'),
      title: 'Not a push subscription',
      detail: 'A pull subscription pauses by not receiving: its events wait in its queue.',
    });
    expect(statusChanges).toEqual([]);
  });

  it('EDU-12: only an active subscription can be paused: 409 subscription-not-active naming its status, nothing changed', async () => {
    const { admin: deliveries, statusChanges, audits } = setUp({ subscription: subscription({ status: 'retired' }) });
    const response = await deliveries.pause(owner, 'sub-1');
    expect(response.status).toBe(409);
    expect(json(response)).toMatchObject({
      type: problemTypeUri('subscription-not-active'),
      title: 'Subscription not active',
      detail: 'The subscription is retired; only an active subscription can be paused.',
    });
    expect([statusChanges, audits]).toEqual([[], []]);
  });

  it("EDU-7: another client's subscription is not found for a pause; an admin pauses it", async () => {
    const { admin: deliveries, statusChanges } = setUp();
    expect((await deliveries.pause(stranger, 'sub-1')).status).toBe(404);
    expect((await deliveries.pause(owner, 'sub-unknown')).status).toBe(404);
    expect(statusChanges).toEqual([]);
    expect((await deliveries.pause(admin, 'sub-1')).status).toBe(200);
  });
});

it('EDU-IDEM-13: every redriven delivery gets a key of its own', async () => {
  const { admin: deliveries, enqueued } = setUp({ deadLetters: Array.from({ length: 30 }, (_, i) => deadLetter(i)) });
  await deliveries.redrive(owner, 'sub-1', post({ all: true }));
  expect(new Set(enqueued.map((m) => m.deliveryId)).size).toBe(30);
  expect(enqueued.some((m) => m.deliveryId === m.redriveOf)).toBe(false);
});

describe('what the problems say (RFC 9457)', () => {
  it('EDU-18: each refusal has its title, and a missing subscription names the id', async () => {
    const { admin: deliveries } = setUp({
      subscription: subscription({ status: 'suspended', suspendedFor: 'credential-required' }),
    });
    expect(json(await deliveries.redrive(owner, 'sub-1', post({ all: true })))['title']).toBe(
      'Subscription not active',
    );
    expect(json(await deliveries.resume(owner, 'sub-1'))['title']).toBe('Credential required');
    expect(json(await setUp().admin.resume(owner, 'sub-1'))['title']).toBe('Subscription not suspended');
    expect(json(await deliveries.redrive(owner, 'sub-1', post('{')))['title']).toBe('Malformed JSON');
    expect(json(await deliveries.redrive(owner, 'sub-1', post([])))['title']).toBe('Invalid redrive selection');
    expect(json(await deliveries.listAttempts(owner, 'sub-1', get({ limit: '0' })))['title']).toBe('Invalid parameter');
    expect(json(await deliveries.listAttempts(owner, 'sub-1', get({ cursor: '-1' })))).toMatchObject({
      title: 'Invalid parameter',
      status: 400,
    });
    expect(json(await deliveries.listAttempts(owner, 'sub-9', get()))['detail']).toBe(
      'There is no subscription sub-9 for this client.',
    );
  });

  it('EDU-18: a selection that is a JSON string is not an object; several unknown members are all named', async () => {
    const { admin: deliveries } = setUp({ deadLetters: [deadLetter(1)] });
    const issues = async (body: unknown) =>
      (
        json(await deliveries.redrive(owner, 'sub-1', post(body)))['errors'] as {
          attribute?: string;
          message: string;
        }[]
      ).map(({ attribute, message }) => ({ attribute, message }));
    expect(await issues('"all"')).toEqual([{ attribute: undefined, message: 'the body must be an object' }]);
    expect(await issues({ all: true, force: 1, now: 2 })).toEqual([
      { attribute: 'force', message: 'unknown member "force"; members: all' },
      { attribute: 'now', message: 'unknown member "now"; members: all' },
    ]);
  });

  it('EDU-18: the dead letters list pages with a next link of its own path', async () => {
    const { admin: deliveries } = setUp({ deadLetters: Array.from({ length: 3 }, (_, i) => deadLetter(i)) });
    expect(json(await deliveries.listDeadLetters(owner, 'sub-1', get({ limit: '2' })))['next']).toBe(
      '/v1/subscriptions/sub-1/dead-letters?limit=2&cursor=2',
    );
  });

  it('EDU-18: store trouble while listing is not mistaken for a bad cursor', async () => {
    const { admin: deliveries } = setUp({
      store: { listAttempts: async () => Promise.reject(new Error('throttled')) },
    });
    await expect(deliveries.listAttempts(owner, 'sub-1', get())).rejects.toThrow('throttled');
  });
});

describe('what happened to my event? (issue 13, item 5)', () => {
  const ref = (id: string) => ({ source: SOURCE, id, type: TYPE });
  const history = [
    attempt(1, { outcome: 'delivered', events: [ref('e1')], at: '2026-03-01T11:00:00.000Z' }),
    attempt(2, { outcome: 'dead-lettered', events: [ref('e2')], at: '2026-03-01T10:00:00.000Z', redriveOf: 'd-old' }),
    attempt(3, { outcome: 'retrying', events: [ref('e1'), ref('e3')], at: '2026-03-01T09:00:00.000Z' }),
    attempt(4, {
      outcome: 'retrying',
      events: [{ ...ref('e1'), source: 'urn:other' }],
      at: '2026-03-01T08:00:00.000Z',
    }),
  ];
  const ids = (response: HttpResponse) =>
    (json(response)['attempts'] as { deliveryId: string }[]).map((a) => a.deliveryId);

  it('EDU-18: each attempt shows the events it carried (source, id, type) and the dead letter it redrove', async () => {
    const { admin: deliveries } = setUp({ attempts: history });
    const [, redriven] = json(await deliveries.listAttempts(owner, 'sub-1', get()))['attempts'] as Record<
      string,
      unknown
    >[];
    expect(redriven).toMatchObject({
      deliveryId: 'd-2',
      events: [{ source: SOURCE, id: 'e2', type: TYPE }],
      redriveOf: 'd-old',
    });
  });

  it('EDU-18: the attempts of one event, by source + id, across batch deliveries; another source with the same id is another event', async () => {
    const { admin: deliveries } = setUp({ attempts: history });
    expect(ids(await deliveries.listAttempts(owner, 'sub-1', get({ source: SOURCE, id: 'e1' })))).toEqual([
      'd-1',
      'd-3',
    ]);
    expect(ids(await deliveries.listAttempts(owner, 'sub-1', get({ source: 'urn:other', id: 'e1' })))).toEqual(['d-4']);
    expect(ids(await deliveries.listAttempts(owner, 'sub-1', get({ source: SOURCE, id: 'nothing' })))).toEqual([]);
  });

  it('EDU-18: filtered by outcome and by time (since inclusive, until exclusive)', async () => {
    const { admin: deliveries } = setUp({ attempts: history });
    expect(ids(await deliveries.listAttempts(owner, 'sub-1', get({ outcome: 'retrying' })))).toEqual(['d-3', 'd-4']);
    expect(
      ids(
        await deliveries.listAttempts(
          owner,
          'sub-1',
          get({ since: '2026-03-01T09:00:00Z', until: '2026-03-01T11:00:00Z' }),
        ),
      ),
    ).toEqual(['d-2', 'd-3']);
    expect(
      ids(
        await deliveries.listAttempts(owner, 'sub-1', get({ outcome: 'retrying', since: '2026-03-01T09:00:00+00:00' })),
      ),
    ).toEqual(['d-3']);
  });

  it('EDU-18: the filter applies per page, and the next link carries it', async () => {
    const { admin: deliveries } = setUp({ attempts: history });
    const first = json(await deliveries.listAttempts(owner, 'sub-1', get({ limit: '2', outcome: 'retrying' })));
    expect(first['attempts']).toEqual([]);
    expect(first['next']).toBe('/v1/subscriptions/sub-1/deliveries?limit=2&cursor=2&outcome=retrying');
    const second = await deliveries.listAttempts(owner, 'sub-1', get({ limit: '2', cursor: '2', outcome: 'retrying' }));
    expect(ids(second)).toEqual(['d-3', 'd-4']);
  });

  it('EDU-18: the attempts of one source, or of one id across sources, when only that is asked', async () => {
    const { admin: deliveries } = setUp({ attempts: history });
    expect(ids(await deliveries.listAttempts(owner, 'sub-1', get({ source: 'urn:other' })))).toEqual(['d-4']);
    expect(ids(await deliveries.listAttempts(owner, 'sub-1', get({ id: 'e3' })))).toEqual(['d-3']);
  });

  it('EDU-18: times with fractional seconds are RFC 3339 date-times too', async () => {
    const { admin: deliveries } = setUp({ attempts: history });
    const window = get({ since: '2026-03-01T09:00:00.000Z', until: '2026-03-01T10:59:59.999Z' });
    expect(ids(await deliveries.listAttempts(owner, 'sub-1', window))).toEqual(['d-2', 'd-3']);
  });

  it('EDU-18: every filter goes into the next link', async () => {
    const { admin: deliveries } = setUp({ attempts: history });
    const first = json(
      await deliveries.listAttempts(owner, 'sub-1', get({ limit: '2', source: 'urn:other', outcome: 'retrying' })),
    );
    expect(first['next']).toBe(
      '/v1/subscriptions/sub-1/deliveries?limit=2&cursor=2&source=urn%3Aother&outcome=retrying',
    );
  });

  it.each([
    [{ outcome: 'lost' }, 'outcome must be one of delivered, retrying, dead-lettered, retired.'],
    [{ since: 'yesterday' }, 'since must be an RFC 3339 date-time, e.g. 2026-11-23T09:00:00Z.'],
    // An expanded year is an ISO 8601 form that Date.parse takes, but not RFC 3339.
    [{ since: '+002026-03-01T09:00:00Z' }, 'since must be an RFC 3339 date-time, e.g. 2026-11-23T09:00:00Z.'],
    [{ until: '2026-03-01 09:00' }, 'until must be an RFC 3339 date-time, e.g. 2026-11-23T09:00:00Z.'],
  ])('EDU-18: %o is a 400 invalid-parameter that says what to send', async (query, detail) => {
    const { admin: deliveries } = setUp({ attempts: history });
    const response = await deliveries.listAttempts(owner, 'sub-1', get(query));
    expect(response.status).toBe(400);
    expect(json(response)).toMatchObject({
      type: problemTypeUri('invalid-parameter'),
      title: 'Invalid parameter',
      detail,
    });
  });

  it('unknown query parameters are refused with 400, naming them, on both lists; so are a bad outcome and a bad time', async () => {
    const { admin: deliveries } = setUp({ attempts: history });
    const misspelt = json(await deliveries.listAttempts(owner, 'sub-1', get({ outcom: 'retrying' })));
    expect(misspelt).toMatchObject({ status: 400, type: problemTypeUri('invalid-parameter') });
    expect(misspelt['detail']).toContain('outcom');
    expect(json(await deliveries.listDeadLetters(owner, 'sub-1', get({ outcome: 'retrying' })))['detail']).toContain(
      'outcome',
    );
    expect(json(await deliveries.listAttempts(owner, 'sub-1', get({ outcome: 'lost' })))).toMatchObject({
      status: 400,
    });
    expect(json(await deliveries.listAttempts(owner, 'sub-1', get({ since: 'yesterday' })))).toMatchObject({
      status: 400,
    });
  });
});
