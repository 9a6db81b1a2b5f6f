/**
 * PullService without emulators (functions/core/pull/pull-service.ts): a fake queue records what
 * would reach SQS, so these tests show which settle decisions are Koerier's own — an expired,
 * foreign or forged token never reaches SQS — and how a receive sorts what it got.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DeadLetter } from '../../../functions/core/delivery/delivery-records.js';
import { encodeDeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import type { KoerierError } from '../../../functions/core/http/problems.js';
import { silentLog, type Log } from '../../../functions/core/ports/log.js';
import { sealLockToken, type LockTokenContents } from '../../../functions/core/pull/lock-token.js';
import type {
  PulledMessage,
  PullQueues,
  QueueEntry,
  QueueEntryOutcome,
} from '../../../functions/core/pull/pull-queues.js';
import { PullService } from '../../../functions/core/pull/pull-service.js';
import type { Entitlements } from '../../../functions/core/subscriptions/entitlements.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';

const NOW = Date.UTC(2026, 10, 23, 18);
const key = randomBytes(32);
const subscription = {
  id: 'sub-1',
  owner: 'client-a',
  delivery: 'pull',
  pull: { maxDeliveryCount: 2, retentionSeconds: 3600 },
} as Subscription;

/** How the fakes behave beyond handing out `waiting`; what is absent behaves as a healthy AWS would. */
interface Behaviour {
  /** The most messages one ReceiveMessage hands out: SQS may hand out fewer than are waiting. */
  readonly perCall?: number;
  /** Messages that arrive while a long poll waits. */
  readonly arriveOnLongPoll?: PulledMessage[];
  /** Reject marks already written, by message id. */
  readonly marks?: ReadonlyMap<string, string>;
  /** Message ids whose reject mark cannot be written. */
  readonly markFails?: readonly string[];
  /** The queue's answer per receipt handle ('missing': none at all); 'done' for the others. */
  readonly outcomes?: Readonly<Record<string, QueueEntryOutcome | 'missing'>>;
  /** The owners' entitlements now; absent: the service checks none. */
  readonly entitlements?: Entitlements;
  /** Where the service's log lines go; absent: nowhere. */
  readonly log?: Log;
  /** Receipt handles whose lock was given up before (a release, a reject). */
  readonly givenUp?: readonly string[];
  /** Recording a lock as given up fails. */
  readonly giveUpFails?: boolean;
  /** Reading the given-up locks fails. */
  readonly givenUpUnreadable?: boolean;
}

function harness(
  waiting: PulledMessage[] = [],
  outgoingEvents = async (
    _s: Subscription,
    events: readonly string[],
    _maxAnswerBytes: number,
  ): Promise<readonly string[]> => events,
  behaviour: Behaviour = {},
) {
  const calls: string[] = [];
  const deadLetters: DeadLetter[] = [];
  const deadLetterExpiries: number[] = [];
  const visibilitySeconds: number[] = [];
  const limits: [string, number][] = [];
  const finds: string[][] = [];
  const marked: { messageId: string; reason: string; expiresAt: number }[] = [];
  const cleared: string[][] = [];
  const givenUp = new Set(behaviour.givenUp ?? []);
  /** Each recording of given-up locks, with how many queue calls came before it. */
  const gaveUp: { handles: string[]; expiresAt: number; queueCallsBefore: number }[] = [];
  const answer = (entries: readonly QueueEntry[]) =>
    new Map(
      entries.flatMap((e) => {
        const outcome = behaviour.outcomes?.[e.receiptHandle] ?? 'done';
        return outcome === 'missing' ? [] : [[e.entryId, outcome] as const];
      }),
    );
  const queues: PullQueues = {
    create: async () => undefined,
    update: async () => undefined,
    remove: async () => undefined,
    send: async () => undefined,
    receive: async (_id, { max, waitSeconds, visibilitySeconds: seconds }) => {
      calls.push(waitSeconds > 0 ? `long poll ${max}` : `receive ${max}`);
      visibilitySeconds.push(seconds);
      if (waitSeconds > 0) waiting.push(...(behaviour.arriveOnLongPoll ?? []));
      return waiting.splice(0, Math.min(max, behaviour.perCall ?? max));
    },
    delete: async (_id, entries: readonly QueueEntry[]) => {
      calls.push(`delete ${entries.map((e) => e.receiptHandle).join(',')}`);
      return answer(entries);
    },
    changeVisibility: async (_id, entries) => {
      calls.push(`visibility ${entries.map((e) => `${e.receiptHandle}=${e.seconds}`).join(',')}`);
      return answer(entries);
    },
  };
  const counted: { subscriptionId: string; reason: string }[] = [];
  const service = new PullService({
    queues,
    rejections: {
      mark: async (_id, messageId, reason, expiresAt) => {
        if (behaviour.markFails?.includes(messageId)) throw new Error('dynamodb down');
        marked.push({ messageId, reason, expiresAt });
      },
      find: async (_id, messageIds) => {
        finds.push([...messageIds]);
        return new Map([...(behaviour.marks ?? [])].filter(([id]) => messageIds.includes(id)));
      },
      clear: async (_id, messageIds) => void cleared.push([...messageIds]),
    },
    givenUpLocks: {
      giveUp: async (_id, handles, expiresAt) => {
        if (behaviour.giveUpFails) throw new Error('dynamodb down');
        gaveUp.push({ handles: [...handles], expiresAt, queueCallsBefore: calls.length });
        for (const handle of handles) givenUp.add(handle);
      },
      givenUp: async (_id, handles) => {
        if (behaviour.givenUpUnreadable) throw new Error('dynamodb down');
        return new Set(handles.filter((handle) => givenUp.has(handle)));
      },
    },
    deadLetters: {
      putDeadLetter: async (deadLetter, expiresAt) => {
        deadLetters.push(deadLetter);
        deadLetterExpiries.push(expiresAt);
      },
    },
    metrics: { deadLettered: (subscriptionId, reason) => void counted.push({ subscriptionId, reason }) },
    lockTokenKey: async () => key,
    clock: () => NOW,
    deadLetterRetentionSeconds: 3600,
    log: behaviour.log ?? silentLog,
    leases: {
      take: async (scope, limit) => {
        calls.push(`take ${scope}`);
        limits.push([scope, limit]);
        return 0;
      },
      give: async (scope) => void calls.push(`give ${scope}`),
    },
    maxPollsPerSubscription: 5,
    maxPollsPerClient: 10,
    outgoingEvents,
    ...(behaviour.entitlements === undefined ? {} : { entitlements: async () => behaviour.entitlements! }),
  });
  return {
    service,
    calls,
    deadLetters,
    deadLetterExpiries,
    visibilitySeconds,
    limits,
    finds,
    marked,
    cleared,
    gaveUp,
    counted,
  };
}

const token = (over: Partial<LockTokenContents> = {}) =>
  sealLockToken(
    {
      subscriptionId: 'sub-1',
      clientId: 'client-a',
      messageId: 'm-1',
      receiptHandle: 'rh-1',
      lockedUntil: NOW + 1000,
      deliveryCount: 1,
      deliveryKey: 'k',
      ...over,
    },
    key,
  );
const body = (value: unknown) => Buffer.from(JSON.stringify(value));
const message = (n: number, receiveCount: number): PulledMessage => ({
  messageId: `m-${n}`,
  receiptHandle: `rh-${n}`,
  receiveCount,
  body: encodeDeliveryMessage({
    version: 1,
    deliveryId: `key-${n}`,
    subscriptionId: 'sub-1',
    events: [`{"id":"${n}"}`],
    createdAt: 1,
  }),
});

describe('settling without asking SQS (EDU-17)', () => {
  it('EDU-17: an expired, foreign, forged or repeated token is answered by Koerier itself; only the good one reaches SQS', async () => {
    const { service, calls } = harness();
    const good = token();
    const expired = token({ lockedUntil: NOW, receiptHandle: 'rh-expired' });
    const otherSubscription = token({ subscriptionId: 'sub-2', receiptHandle: 'rh-other' });
    const otherClient = token({ clientId: 'client-b', receiptHandle: 'rh-client' });
    const answer = await service.settle(
      'client-a',
      subscription,
      'acknowledge',
      body({ locktokens: [good, expired, otherSubscription, otherClient, 'forged', good] }),
    );
    const result = JSON.parse(answer.body) as {
      succeeded: { locktoken: string }[];
      failed: { locktoken: string; error: { code: string } }[];
    };
    expect(result.succeeded).toEqual([{ locktoken: good }]);
    expect(result.failed.map((f) => f.error.code)).toEqual([
      'LockLost',
      'NotOwner',
      'NotOwner',
      'InvalidToken',
      'DuplicateToken',
    ]);
    expect(calls).toEqual(['delete rh-1']);
  });

  it('EDU-17: when no token is good, SQS is not asked at all', async () => {
    const { service, calls } = harness();
    await service.settle('client-a', subscription, 'release', body({ locktokens: [token({ lockedUntil: NOW - 1 })] }));
    expect(calls).toEqual([]);
  });

  it('EDU-17: renew-lock answers a new token that carries the new expiry', async () => {
    const { service, calls } = harness();
    const answer = JSON.parse(
      (await service.settle('client-a', subscription, 'renew-lock', body({ locktokens: [token()], lockseconds: 600 })))
        .body,
    ) as {
      succeeded: { newlocktoken: string; lockeduntil: string }[];
    };
    expect(calls).toEqual(['visibility rh-1=600']);
    expect(Date.parse(answer.succeeded[0]!.lockeduntil)).toBe(NOW + 600_000 - 2000);
  });
});

describe('receiving (EDU-17)', () => {
  it('EDU-7, EDU-17, issue 29 item 3: a pull receive hands out only what the owner is entitled to and the filters match now; the rest is settled unsent (deleted, logged with the reason), not dead-lettered', async () => {
    const stored = (n: number, type: string, subject: string) =>
      ({
        messageId: `m-${n}`,
        receiptHandle: `rh-${n}`,
        receiveCount: 1,
        body: encodeDeliveryMessage({
          version: 1,
          deliveryId: `key-${n}`,
          subscriptionId: 'sub-1',
          events: [JSON.stringify({ specversion: '1.0', id: String(n), source: 'urn:nld:oin:0001', type, subject })],
          createdAt: 1,
        }),
      }) satisfies PulledMessage;
    // Routed while all three matched; since then the grant narrowed to nl.edu.a. and the filter to subject leerling-*.
    const logged: { message: string; fields: Record<string, unknown> | undefined }[] = [];
    const filtered = { ...subscription, filters: [{ prefix: { subject: 'leerling-' } }] } as Subscription;
    const { service, calls, deadLetters } = harness(
      [
        stored(1, 'nl.edu.a.v1', 'leerling-1'),
        stored(2, 'nl.edu.b.v1', 'leerling-2'),
        stored(3, 'nl.edu.a.v1', 'klas-3'),
      ],
      undefined,
      {
        entitlements: new Map([['client-a', [{ typePrefix: 'nl.edu.a.' }]]]),
        log: { ...silentLog, info: (message, fields) => void logged.push({ message, fields }) },
      },
    );
    const answer = JSON.parse(
      (await service.receive('client-a', filtered, body({ maxevents: 10, waitseconds: 0 }))).body,
    ) as { events: { id: string }[] };
    expect(answer.events.map((event) => event.id)).toEqual(['1']);
    expect(deadLetters).toEqual([]);
    expect(calls).toContain('delete rh-2,rh-3');
    expect(logged.filter((line) => line.message === 'delivery withheld: settled unsent')).toEqual([
      {
        message: 'delivery withheld: settled unsent',
        fields: { subscriptionId: 'sub-1', deliveryId: 'key-2', reason: 'not-entitled' },
      },
      {
        message: 'delivery withheld: settled unsent',
        fields: { subscriptionId: 'sub-1', deliveryId: 'key-3', reason: 'no-longer-matches' },
      },
    ]);
  });

  it('EDU-17: short polls side by side for the whole batch; a message past maxdeliverycount is dead-lettered and deleted, not handed out', async () => {
    const { service, calls, deadLetters } = harness([message(1, 1), message(2, 3), message(3, 2)]);
    const answer = JSON.parse(
      (await service.receive('client-a', subscription, body({ maxevents: 25, waitseconds: 0 }))).body,
    ) as {
      events: { id: string }[];
      locks: { deliverycount: number; deliverykey: string }[];
    };
    expect(calls.slice(0, 3)).toEqual(['receive 10', 'receive 10', 'receive 5']);
    expect(answer.events.map((e) => e.id)).toEqual(['1', '3']);
    expect(answer.locks.map((l) => [l.deliverycount, l.deliverykey])).toEqual([
      [1, 'key-1'],
      [2, 'key-3'],
    ]);
    expect(deadLetters).toMatchObject([{ deliveryId: 'key-2', reason: 'max-deliveries', attempts: 2 }]);
    expect(calls).toContain('delete rh-2');
  });

  it('CARD-7: events already waiting are taken by short polls without a poll slot, even when the request would wait', async () => {
    const { service, calls } = harness([message(1, 1), message(2, 1)]);
    const answer = JSON.parse(
      (await service.receive('client-a', subscription, body({ maxevents: 10, waitseconds: 20 }))).body,
    ) as { events: unknown[] };
    expect(answer.events).toHaveLength(2);
    expect(calls.filter((call) => call.startsWith('take') || call.startsWith('long poll'))).toEqual([]);
  });

  it('CARD-7: an empty queue is waited on by one long poll for a single message, holding a slot of the subscription and of the client', async () => {
    const { service, calls, limits } = harness();
    await service.receive('client-a', subscription, body({ maxevents: 10, waitseconds: 20 }));
    expect(calls).toEqual([
      'receive 10',
      'take sub#sub-1',
      'take client#client-a',
      'long poll 1',
      'give sub#sub-1',
      'give client#client-a',
    ]);
    // The caps configured for the deployment (maxPollsPerSubscription, maxPollsPerClient).
    expect(limits).toEqual([
      ['sub#sub-1', 5],
      ['client#client-a', 10],
    ]);
  });
});

describe('receiving with the claim check (EDU-1)', () => {
  it('EDU-1: the answer holds the events as the claim check hands them out; those it cut off go straight back to the queue', async () => {
    const seen: string[][] = [];
    const { service, calls } = harness([message(1, 1), message(2, 1), message(3, 1)], async (_s, events) => {
      seen.push([...events]);
      return [`{"id":"1","data":"inline again"}`, events[1]!];
    });
    const answer = JSON.parse(
      (await service.receive('client-a', subscription, body({ maxevents: 3, waitseconds: 0 }))).body,
    ) as {
      events: { id: string; data?: string }[];
      locks: unknown[];
    };
    expect(seen).toEqual([['{"id":"1"}', '{"id":"2"}', '{"id":"3"}']]);
    expect(answer.events).toEqual([{ id: '1', data: 'inline again' }, { id: '2' }]);
    expect(answer.locks).toHaveLength(2);
    expect(calls.at(-1)).toBe('visibility rh-3=0');
  });

  it('EDU-IDEM-3, issue 36 item 4: a receive with a smaller answer budget (one stored for repeats) hands the claim check that budget and holds only what fits it; the rest goes back', async () => {
    const budgets: number[] = [];
    const big = (n: number) => `{"id":"${n}","data":"${'x'.repeat(7000)}"}`;
    const { service, calls } = harness(
      [message(1, 1), message(2, 1), message(3, 1)],
      async (_s, events, maxAnswerBytes) => {
        budgets.push(maxAnswerBytes);
        return events.map((_, index) => big(index + 1));
      },
    );
    const answer = await service.receive('client-a', subscription, body({ maxevents: 3, waitseconds: 0 }), 12_000);
    expect(budgets).toEqual([12_000]);
    expect(Buffer.byteLength(answer.body)).toBeLessThanOrEqual(12_000);
    expect((JSON.parse(answer.body) as { events: { id: string }[] }).events.map((event) => event.id)).toEqual(['1']);
    expect(calls.at(-1)).toBe('visibility rh-2=0,rh-3=0');
  });

  it('EDU-IDEM-3, issue 36 item 4: when not even the first event fits a receive stored for repeats, it is a 422 naming the rule, and every event is back in the queue', async () => {
    const { service, calls } = harness([message(1, 1), message(2, 1)], async (_s, events) =>
      events.map((_, n) => `{"id":"${n}","data":"${'x'.repeat(20_000)}"}`),
    );
    const refused = await service
      .receive('client-a', subscription, body({ maxevents: 2, waitseconds: 0 }), 12_000)
      .then(
        () => undefined,
        (error: unknown) => error as KoerierError,
      );
    expect(refused?.problem).toMatchObject({
      status: 422,
      type: expect.stringContaining('receive-too-large-to-replay'),
    });
    expect(calls.at(-1)).toBe('visibility rh-1=0,rh-2=0');
  });

  it('EDU-1: when the claim check cannot be read the receive is a 503 problem and every received event goes back to the queue at once', async () => {
    const { service, calls } = harness([message(1, 1), message(2, 1)], async () => {
      throw new Error('s3 down');
    });
    await expect(
      service.receive('client-a', subscription, body({ maxevents: 2, waitseconds: 0 })),
    ).rejects.toMatchObject({
      problem: { status: 503 },
      headers: { 'retry-after': '1' },
    });
    expect(calls.at(-1)).toBe('visibility rh-1=0,rh-2=0');
  });
});

type Answer = { events: { id: string }[]; locks: { locktoken: string; replay?: unknown }[] };
type Settled = { succeeded: { locktoken: string }[]; failed: { locktoken: string; error: { code: string } }[] };
const receive = async (service: PullService, request: unknown) =>
  JSON.parse((await service.receive('client-a', subscription, body(request))).body) as Answer;
const ids = (answer: Answer) => answer.events.map((e) => e.id);

describe('how a receive takes messages (EDU-17, CARD-7)', () => {
  it('EDU-17: a receive without wait on an empty queue answers at once, as JSON that is never cached, with no poll slot and no long poll', async () => {
    const { service, calls } = harness();
    const answer = await service.receive('client-a', subscription, body({ waitseconds: 0 }));
    expect(calls).toEqual(['receive 10']);
    expect(answer.headers).toEqual({ 'content-type': 'application/json', 'cache-control': 'no-store' });
  });

  it("EDU-17: every ReceiveMessage hides what it hands out for the request's lockseconds", async () => {
    const { service, calls, visibilitySeconds } = harness([], undefined, { arriveOnLongPoll: [message(1, 1)] });
    await receive(service, { maxevents: 12, waitseconds: 20, lockseconds: 300 });
    expect(calls.filter((call) => call.includes('poll') || call.startsWith('receive'))).toEqual([
      'receive 10',
      'receive 2',
      'long poll 1',
      'receive 10',
      'receive 1',
    ]);
    expect(new Set(visibilitySeconds)).toEqual(new Set([300]));
  });

  it('CARD-7: after a long poll brings one message, short polls fill up to maxevents with the ones that arrived beside it', async () => {
    const { service, calls } = harness([], undefined, {
      arriveOnLongPoll: [message(1, 1), message(2, 1), message(3, 1)],
    });
    expect(ids(await receive(service, { maxevents: 10, waitseconds: 20 }))).toEqual(['1', '2', '3']);
    expect(calls).toEqual([
      'receive 10',
      'take sub#sub-1',
      'take client#client-a',
      'long poll 1',
      'receive 9',
      'receive 7',
      'give sub#sub-1',
      'give client#client-a',
    ]);
  });

  it('EDU-17: short polls go on filling until a round brings nothing, as SQS may hand out fewer than are waiting', async () => {
    const { service, calls } = harness(
      [1, 2, 3, 4, 5].map((n) => message(n, 1)),
      undefined,
      { perCall: 2 },
    );
    expect(ids(await receive(service, { maxevents: 10, waitseconds: 0 }))).toEqual(['1', '2', '3', '4', '5']);
    expect(calls).toEqual(['receive 10', 'receive 8', 'receive 6', 'receive 5']);
  });

  it('EDU-17: only delivered events that did not fit go back to the queue; a dead-lettered or unreadable message is not given back', async () => {
    // Given back, an unreadable one would skip its lock and reach the redrive policy too soon;
    // the one handed out would be delivered twice.
    const unreadable = { ...message(2, 1), body: 'garbage' };
    const { service, calls } = harness([message(1, 3), unreadable, message(3, 1), message(4, 1)], async (_s, events) =>
      events.slice(0, 1),
    );
    expect(ids(await receive(service, { maxevents: 4, waitseconds: 0 }))).toEqual(['3']);
    expect(calls.filter((call) => call.startsWith('visibility'))).toEqual(['visibility rh-4=0']);
  });

  it("EDU-17: a replayed event's lock names its replay and place; a first delivery's lock has no replay member (docs/REPLAY.md)", async () => {
    const replayed: PulledMessage = {
      ...message(2, 1),
      body: encodeDeliveryMessage({
        version: 1,
        deliveryId: 'key-2',
        subscriptionId: 'sub-1',
        events: ['{"id":"2"}'],
        createdAt: 1,
        replay: { id: 'r-1', sequence: 4 },
      }),
    };
    const { service } = harness([message(1, 1), replayed]);
    const { locks } = await receive(service, { maxevents: 2, waitseconds: 0 });
    expect(locks[0]).not.toHaveProperty('replay');
    expect(locks[1]!.replay).toEqual({ id: 'r-1', sequence: 4 });
  });
});

describe('dead letters on a receive (EDU-18)', () => {
  it("EDU-18: a rejected message that comes back is found by its mark and dead-lettered with the reject's reason, its mark cleared; only messages received before are looked up", async () => {
    const { service, finds, deadLetters, cleared } = harness([message(1, 1), message(2, 2), message(3, 2)], undefined, {
      marks: new Map([['m-2', 'unknown leerling']]),
    });
    expect(ids(await receive(service, { maxevents: 3, waitseconds: 0 }))).toEqual(['1', '3']);
    expect(finds).toEqual([['m-2', 'm-3']]);
    expect(deadLetters).toMatchObject([{ deliveryId: 'key-2', reason: 'rejected', detail: 'unknown leerling' }]);
    expect(cleared).toEqual([['m-2']]);
  });

  it('issue 29 item 3: each pull dead letter (past maxdeliverycount, rejected) is counted once, with its subscription and reason, on the metrics path push dead letters take', async () => {
    const { service, counted } = harness([message(1, 1), message(2, 3), message(3, 2)], undefined, {
      marks: new Map([['m-3', 'unknown leerling']]),
    });
    expect(ids(await receive(service, { maxevents: 3, waitseconds: 0 }))).toEqual(['1']);
    expect(counted).toEqual([
      { subscriptionId: 'sub-1', reason: 'max-deliveries' },
      { subscriptionId: 'sub-1', reason: 'rejected' },
    ]);
  });

  it('EDU-18: a receive of first deliveries only asks for no reject marks', async () => {
    const { service, finds } = harness([message(1, 1), message(2, 1)]);
    expect(ids(await receive(service, { maxevents: 2, waitseconds: 0 }))).toEqual(['1', '2']);
    expect(finds).toEqual([]);
  });

  it('EDU-18: a dead letter past maxdeliverycount is kept deadLetterRetentionSeconds, with no attempts listed, and clears no reject mark', async () => {
    const { service, deadLetters, deadLetterExpiries, cleared } = harness([message(1, 3)]);
    await receive(service, { maxevents: 1, waitseconds: 0 });
    expect(deadLetterExpiries).toEqual([NOW / 1000 + 3600]);
    expect(deadLetters).toMatchObject([{ deliveryId: 'key-1', reason: 'max-deliveries', lastAttempts: [] }]);
    expect(cleared).toEqual([]);
  });
});

describe('settling through SQS (EDU-17, EDU-18)', () => {
  const settle = async (
    service: PullService,
    action: 'acknowledge' | 'release' | 'renew-lock' | 'reject',
    request: unknown,
  ) => {
    const answer = await service.settle('client-a', subscription, action, body(request));
    expect(answer.headers).toMatchObject({ 'cache-control': 'no-store' });
    return JSON.parse(answer.body) as Settled;
  };
  const codes = (settled: Settled) => settled.failed.map((f) => [f.locktoken, f.error.code]);

  it('EDU-17: a release makes the event visible again after its delayseconds', async () => {
    const { service, calls } = harness();
    const good = token();
    expect(await settle(service, 'release', { locktokens: [good], delayseconds: 30 })).toEqual({
      succeeded: [{ locktoken: good }],
      failed: [],
    });
    expect(calls).toEqual(['visibility rh-1=30']);
  });

  it("EDU-17: SQS's answer per entry decides: lock-lost is LockLost, failed or no answer at all is Unavailable, never succeeded", async () => {
    const { service } = harness([], undefined, {
      outcomes: { 'rh-2': 'lock-lost', 'rh-3': 'failed', 'rh-4': 'missing' },
    });
    const [t1, t2, t3, t4] = [1, 2, 3, 4].map((n) => token({ messageId: `m-${n}`, receiptHandle: `rh-${n}` }));
    const settled = await settle(service, 'acknowledge', { locktokens: [t1, t2, t3, t4] });
    expect(settled.succeeded).toEqual([{ locktoken: t1 }]);
    expect(codes(settled)).toEqual([
      [t2, 'LockLost'],
      [t3, 'Unavailable'],
      [t4, 'Unavailable'],
    ]);
  });

  it("EDU-18: a reject marks the message with its reason (or the consumer's default) for the subscription's retention, then makes it visible at once", async () => {
    const { service, calls, marked } = harness();
    await settle(service, 'reject', { locktokens: [token()], reason: 'unknown leerling' });
    await settle(service, 'reject', { locktokens: [token({ messageId: 'm-2', receiptHandle: 'rh-2' })] });
    expect(marked).toEqual([
      { messageId: 'm-1', reason: 'unknown leerling', expiresAt: NOW / 1000 + 3600 },
      { messageId: 'm-2', reason: 'rejected by the consumer', expiresAt: NOW / 1000 + 3600 },
    ]);
    expect(calls).toEqual(['visibility rh-1=0', 'visibility rh-2=0']);
  });

  it('EDU-17, issue 28 item 14e: a release and a reject record the lock as given up before SQS is asked; the token then settles nothing, without reaching SQS', async () => {
    const { service, calls, gaveUp } = harness();
    const [released, rejected] = [1, 2].map((n) => token({ messageId: `m-${n}`, receiptHandle: `rh-${n}` }));
    await settle(service, 'release', { locktokens: [released] });
    await settle(service, 'reject', { locktokens: [rejected], reason: 'r' });
    // Remembered as long as any token of that receipt handle could be accepted: SQS's 12 hours, and a minute.
    expect(gaveUp).toEqual([
      { handles: ['rh-1'], expiresAt: NOW / 1000 + 12 * 3600 + 60, queueCallsBefore: 0 },
      { handles: ['rh-2'], expiresAt: NOW / 1000 + 12 * 3600 + 60, queueCallsBefore: 1 },
    ]);
    for (const action of ['acknowledge', 'release', 'renew-lock', 'reject'] as const) {
      const settled = await settle(service, action, { locktokens: [released, rejected] });
      expect(settled.succeeded, action).toEqual([]);
      expect(codes(settled), action).toEqual([
        [released, 'LockLost'],
        [rejected, 'LockLost'],
      ]);
    }
    expect(calls).toEqual(['visibility rh-1=0', 'visibility rh-2=0']);
  });

  it('EDU-17, issue 28 item 14e: a token of a lock given up is LockLost beside a held one, which still settles; acknowledge and renew-lock give nothing up', async () => {
    const { service, calls, gaveUp } = harness([], undefined, { givenUp: ['rh-1'] });
    const [old, held] = [1, 2].map((n) => token({ messageId: 'm-1', receiptHandle: `rh-${n}` }));
    const settled = await settle(service, 'acknowledge', { locktokens: [old, held] });
    expect(settled.succeeded).toEqual([{ locktoken: held }]);
    expect(codes(settled)).toEqual([[old, 'LockLost']]);
    await settle(service, 'renew-lock', { locktokens: [held], lockseconds: 60 });
    expect(calls).toEqual(['delete rh-2', 'visibility rh-2=60']);
    expect(gaveUp).toEqual([]);
  });

  it('EDU-17, issue 28 item 14e: when the given-up locks cannot be read or written, the tokens are Unavailable and SQS is not asked', async () => {
    for (const behaviour of [{ givenUpUnreadable: true }, { giveUpFails: true }]) {
      const { service, calls } = harness([], undefined, behaviour);
      const settled = await settle(service, 'release', { locktokens: [token()] });
      expect(
        settled.failed.map((f) => f.error.code),
        JSON.stringify(behaviour),
      ).toEqual(['Unavailable']);
      expect(calls, JSON.stringify(behaviour)).toEqual([]);
    }
  });

  it('EDU-18: a reject whose mark cannot be written fails Unavailable and stays hidden, so it is never delivered unmarked; the others go on', async () => {
    const { service, calls } = harness([], undefined, { markFails: ['m-1'] });
    const [t1, t2] = [1, 2].map((n) => token({ messageId: `m-${n}`, receiptHandle: `rh-${n}` }));
    const settled = await settle(service, 'reject', { locktokens: [t1, t2], reason: 'r' });
    expect(settled.succeeded).toEqual([{ locktoken: t2 }]);
    expect(codes(settled)).toEqual([[t1, 'Unavailable']]);
    expect(calls).toEqual(['visibility rh-2=0']);
  });
});
