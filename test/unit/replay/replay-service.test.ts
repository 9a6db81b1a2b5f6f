/**
 * The replay API's use case (functions/core/replay/replay-service.ts) over memory adapters,
 * answered as the HTTP adapter answers: who may start, read and cancel a replay, what a request
 * may ask for, and at most one running replay per subscription.
 */
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import type { HttpRequest } from '../../../functions/core/http/messages.js';
import { MemoryReplayQueue, MemoryReplayStore } from '../../support/memory/replay-memory-adapters.js';
import { ReplayService } from '../../../functions/core/replay/replay-service.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import { answering } from '../../support/refusals.js';
import { HOUR, NOW, SOURCE, subscription } from './replay-fakes.js';
import type { Grant } from '../../../functions/core/subscriptions/entitlements.js';
import { problemTypeUri } from '../../support/problem-types.js';

const owner: Principal = { clientId: 'client-a', scopes: new Set(['subscriptions:manage']) } as Principal;
const stranger: Principal = { clientId: 'client-b', scopes: new Set(['subscriptions:manage']) } as Principal;
const admin: Principal = { clientId: 'operator', scopes: new Set(['subscriptions:manage', 'admin']) } as Principal;

function service(sub: Subscription = subscription({ types: ['nl.example.a.v1', 'nl.example.b.v1'] })) {
  const store = new MemoryReplayStore(() => NOW);
  const queue = new MemoryReplayQueue();
  let n = 0;
  const replays = answering(
    new ReplayService({
      subscriptions: { get: async (id) => (id === sub.id ? sub : undefined) },
      store,
      queue,
      entitlements: new Map([['client-a', [{ typePrefix: 'nl.example.a.' }, { typePrefix: 'nl.example.b.' }]]]),
      clock: () => NOW,
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      newId: () => `replay-${++n}`,
    }),
  );
  return { replays, store, queue };
}

const body = (value: unknown) => ({ body: Buffer.from(JSON.stringify(value)) }) as HttpRequest;
const window = { from: new Date(NOW - 2 * HOUR).toISOString(), to: new Date(NOW - HOUR).toISOString() };
const json = (response: { body: string | Buffer }) => JSON.parse(response.body.toString()) as Record<string, unknown>;

describe('replay API (issue 13, item 2)', () => {
  it('EDU-18: a start answers 202 with Location and the record, and queues the first chunk at once', async () => {
    const { replays, queue } = service();
    const answer = await replays.start(owner, 'sub-1', body(window));
    expect(answer.status).toBe(202);
    expect(answer.headers['location']).toBe('/v1/subscriptions/sub-1/replays/replay-1');
    expect(json(answer)).toMatchObject({
      id: 'replay-1',
      state: 'running',
      ...window,
      scanned: 0,
      matched: 0,
      sent: 0,
      failed: 0,
    });
    expect(queue.messages).toEqual([{ message: { subscriptionId: 'sub-1', replayId: 'replay-1' }, delaySeconds: 0 }]);
  });

  it('EDU-18: at most one running replay per subscription: the second gets 409 with the running one in Location; after a cancel a new one starts', async () => {
    const { replays } = service();
    await replays.start(owner, 'sub-1', body(window));
    const second = await replays.start(owner, 'sub-1', body(window));
    expect(second.status).toBe(409);
    expect(json(second)['type']).toBe(problemTypeUri('replay-running'));
    expect(second.headers['location']).toBe('/v1/subscriptions/sub-1/replays/replay-1');
    const cancelled = await replays.cancel(owner, 'sub-1', 'replay-1');
    expect(json(cancelled)).toMatchObject({ state: 'cancelled' });
    expect((await replays.cancel(owner, 'sub-1', 'replay-1')).status).toBe(409);
    expect((await replays.start(owner, 'sub-1', body(window))).status).toBe(202);
  });

  it('EDU-7: a narrowing beyond the owner’s entitlement or the subscription’s types is refused with 403, also for an admin', async () => {
    const { replays } = service();
    const notEntitled = await replays.start(admin, 'sub-1', body({ ...window, types: ['nl.example.secret.v1'] }));
    expect(notEntitled.status).toBe(403);
    expect(json(notEntitled)['type']).toBe(problemTypeUri('replay-not-entitled'));
    const { replays: narrow } = service(subscription({ types: ['nl.example.a.v1'] }));
    const notSubscribed = await narrow.start(owner, 'sub-1', body({ ...window, types: ['nl.example.b.v1'] }));
    expect(json(notSubscribed)['type']).toBe(problemTypeUri('replay-beyond-subscription'));
    expect((await replays.start(owner, 'sub-1', body({ ...window, types: ['nl.example.a.v1'] }))).status).toBe(202);
  });

  it('EDU-18: the list shows the subscription’s replays newest first, to its owner only', async () => {
    let now = NOW;
    const store = new MemoryReplayStore(() => now);
    const sub = subscription();
    let n = 0;
    const replays = answering(
      new ReplayService({
        subscriptions: { get: async (id) => (id === sub.id ? sub : undefined) },
        store,
        queue: new MemoryReplayQueue(),
        entitlements: new Map([['client-a', [{ typePrefix: '' }]]]),
        clock: () => now,
        log: { info: () => undefined, warn: () => undefined, error: () => undefined },
        newId: () => `replay-${++n}`,
      }),
    );
    await replays.start(owner, 'sub-1', body(window));
    await replays.cancel(owner, 'sub-1', 'replay-1');
    now += 1000;
    await replays.start(owner, 'sub-1', body(window));
    expect((json(await replays.list(owner, 'sub-1'))['replays'] as { id: string }[]).map((r) => r.id)).toEqual([
      'replay-2',
      'replay-1',
    ]);
    expect((await replays.list(stranger, 'sub-1')).status).toBe(404);
  });

  it('EDU-18: another client sees no subscription (404); an admin may replay any', async () => {
    const { replays } = service();
    expect((await replays.start(stranger, 'sub-1', body(window))).status).toBe(404);
    const started = await replays.start(admin, 'sub-1', body(window));
    expect(started.status).toBe(202);
    expect((await replays.get(stranger, 'sub-1', 'replay-1')).status).toBe(404);
    expect((await replays.get(owner, 'sub-1', 'replay-1')).status).toBe(200);
    expect((await replays.get(owner, 'sub-1', 'nope')).status).toBe(404);
  });

  it('EDU-18: a body with a bad window, unknown members or bad narrowing is a 400 naming each; an inactive subscription is a 409', async () => {
    const { replays } = service();
    const bad = await replays.start(owner, 'sub-1', body({ from: 'yesterday', to: window.from, types: [], extra: 1 }));
    expect(bad.status).toBe(400);
    expect((json(bad)['errors'] as { attribute: string }[]).map((e) => e.attribute).sort()).toEqual([
      'extra',
      'from',
      'types',
    ]);
    const backwards = await replays.start(owner, 'sub-1', body({ from: window.to, to: window.from }));
    expect((json(backwards)['errors'] as { rule: string }[])[0]!.rule).toBe('window');
    const { replays: paused } = service(subscription({ status: 'suspended' }));
    expect((await paused.start(owner, 'sub-1', body(window))).status).toBe(409);
  });

  it('EDU-18: a window ending in the future ends at the request: the archive has nothing later', async () => {
    const { replays } = service();
    const answer = await replays.start(
      owner,
      'sub-1',
      body({ from: window.from, to: new Date(NOW + HOUR).toISOString() }),
    );
    expect(json(answer)['to']).toBe(new Date(NOW).toISOString());
  });
});

describe('replay API: what is stored and answered (issue 13, item 2)', () => {
  /** The service over memory adapters with the given subscription, owner grants and store/queue overrides. */
  function world(
    sub: Subscription,
    grants: readonly Grant[],
    over: { store?: MemoryReplayStore; queue?: MemoryReplayQueue } = {},
  ) {
    const store = over.store ?? new MemoryReplayStore(() => NOW);
    const queue = over.queue ?? new MemoryReplayQueue();
    const replays = answering(
      new ReplayService({
        subscriptions: { get: async (id) => (id === sub.id ? sub : undefined) },
        store,
        queue,
        entitlements: new Map([['client-a', grants]]),
        clock: () => NOW,
        log: { info: () => undefined, warn: () => undefined, error: () => undefined },
        newId: () => 'replay-1',
      }),
    );
    return { replays, store, queue };
  }
  const all: Grant[] = [{ typePrefix: '' }];

  it('EDU-18: the narrowing asked for is what the replay stores and runs with', async () => {
    const { replays, store } = world(subscription(), all);
    const filters = [{ prefix: { id: 'keep' } }];
    const answer = await replays.start(owner, 'sub-1', body({ ...window, types: ['nl.example.a.v1'], filters }));
    expect(json(answer)).toMatchObject({ types: ['nl.example.a.v1'], filters });
    expect(await store.get('sub-1', 'replay-1')).toMatchObject({ types: ['nl.example.a.v1'], filters });
  });

  it('EDU-7: a narrowing within a grant bound to the subscription’s source is entitled', async () => {
    const { replays } = world(subscription({ source: SOURCE }), [{ typePrefix: 'nl.example.a.', source: SOURCE }]);
    expect((await replays.start(owner, 'sub-1', body({ ...window, types: ['nl.example.a.v1'] }))).status).toBe(202);
  });

  it('EDU-18: a subscription without types of its own may be narrowed to any type its owner is entitled to', async () => {
    for (const types of [undefined, []]) {
      const { replays } = world(subscription(types ? { types } : {}), all);
      expect(
        (await replays.start(owner, 'sub-1', body({ ...window, types: ['nl.example.a.v1'] }))).status,
        String(types),
      ).toBe(202);
    }
  });

  it('EDU-18: a store failure on start is a failure, not a 409 for a replay that is not running', async () => {
    const store = new MemoryReplayStore(() => NOW);
    store.start = async () => Promise.reject(new Error('DynamoDB down'));
    const { replays } = world(subscription(), all, { store });
    // Thrown on, for the HTTP adapter's 500, rather than answered as a 409.
    await expect(replays.start(owner, 'sub-1', body(window))).rejects.toThrow('DynamoDB down');
  });

  it('EDU-18: a start whose first chunk cannot be queued fails the replay and frees the slot, so a retry can start', async () => {
    const queue = new MemoryReplayQueue();
    queue.continueLater = async () => Promise.reject(new Error('SQS down'));
    const { replays, store } = world(subscription(), all, { queue });
    await expect(replays.start(owner, 'sub-1', body(window))).rejects.toThrow('SQS down');
    expect(await store.get('sub-1', 'replay-1')).toMatchObject({
      state: 'failed',
      reason: 'not queued',
      finishedAt: NOW,
      version: 2,
    });
    expect(store.slots.has('sub-1')).toBe(false);
  });

  it('EDU-18: progress and the list are never cached; the list shows at most 100 replays, the newest', async () => {
    const { replays, store } = world(subscription(), all);
    await replays.start(owner, 'sub-1', body(window));
    expect((await replays.get(owner, 'sub-1', 'replay-1')).headers['cache-control']).toBe('no-store');
    for (let i = 2; i <= 101; i++) {
      const record = {
        ...(await store.get('sub-1', 'replay-1'))!,
        replayId: `replay-${i}`,
        state: 'finished' as const,
        createdAt: NOW + i,
      };
      store.records.set(`sub-1/replay-${i}`, record);
    }
    const list = await replays.list(owner, 'sub-1');
    expect(list.headers['cache-control']).toBe('no-store');
    const ids = (json(list)['replays'] as { id: string }[]).map((r) => r.id);
    expect(ids).toHaveLength(100);
    expect(ids[0]).toBe('replay-101');
    expect(ids).not.toContain('replay-1');
  });

  it('EDU-18: a cancel of an unknown replay is a 404; a cancel moves the stored version on, so a chunk in flight cannot store over it', async () => {
    const { replays, store } = world(subscription(), all);
    expect((await replays.cancel(owner, 'sub-1', 'replay-1')).status).toBe(404);
    await replays.start(owner, 'sub-1', body(window));
    expect((await replays.cancel(owner, 'sub-1', 'replay-1')).status).toBe(200);
    expect(await store.get('sub-1', 'replay-1')).toMatchObject({ state: 'cancelled', finishedAt: NOW, version: 2 });
  });
});
