/**
 * PullService without emulators (functions/core/pull/pull-service.ts): a fake queue records what
 * would reach SQS, so these tests show which settle decisions are Koerier's own — an expired,
 * foreign or forged token never reaches SQS — and how a receive sorts what it got.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DeadLetter } from '../../../functions/core/delivery/delivery-records.js';
import { encodeDeliveryMessage } from '../../../functions/core/delivery-message/delivery-message.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { sealLockToken, type LockTokenContents } from '../../../functions/core/pull/lock-token.js';
import type { PulledMessage, PullQueues, QueueEntry } from '../../../functions/core/pull/pull-queues.js';
import { PullService } from '../../../functions/core/pull/pull-service.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';

const NOW = Date.UTC(2026, 10, 23, 18);
const key = randomBytes(32);
const subscription = { id: 'sub-1', owner: 'client-a', delivery: 'pull', pull: { maxDeliveryCount: 2, retentionSeconds: 3600 } } as Subscription;

function harness(waiting: PulledMessage[] = [], outgoingEvents = async (_s: Subscription, events: readonly string[]): Promise<readonly string[]> => events) {
  const calls: string[] = [];
  const deadLetters: DeadLetter[] = [];
  const queues: PullQueues = {
    create: async () => undefined,
    update: async () => undefined,
    remove: async () => undefined,
    send: async () => undefined,
    receive: async (_id, { max, waitSeconds }) => {
      calls.push(waitSeconds > 0 ? `long poll ${max}` : `receive ${max}`);
      return waiting.splice(0, max);
    },
    delete: async (_id, entries: readonly QueueEntry[]) => {
      calls.push(`delete ${entries.map((e) => e.receiptHandle).join(',')}`);
      return new Map(entries.map((e) => [e.entryId, 'done' as const]));
    },
    changeVisibility: async (_id, entries) => {
      calls.push(`visibility ${entries.map((e) => `${e.receiptHandle}=${e.seconds}`).join(',')}`);
      return new Map(entries.map((e) => [e.entryId, 'done' as const]));
    },
  };
  const service = new PullService({
    queues,
    rejections: { mark: async () => undefined, find: async () => new Map(), clear: async () => undefined },
    deadLetters: { putDeadLetter: async (deadLetter) => void deadLetters.push(deadLetter) },
    lockTokenKey: async () => key,
    clock: () => NOW,
    deadLetterRetentionSeconds: 3600,
    log: silentLog,
    leases: {
      take: async (scope) => {
        calls.push(`take ${scope}`);
        return 0;
      },
      give: async (scope) => void calls.push(`give ${scope}`),
    },
    maxPollsPerSubscription: 5,
    maxPollsPerClient: 10,
    outgoingEvents,
  });
  return { service, calls, deadLetters };
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
  body: encodeDeliveryMessage({ version: 1, deliveryId: `key-${n}`, subscriptionId: 'sub-1', events: [`{"id":"${n}"}`], createdAt: 1 }),
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
    const result = JSON.parse(answer.body) as { succeeded: { locktoken: string }[]; failed: { locktoken: string; error: { code: string } }[] };
    expect(result.succeeded).toEqual([{ locktoken: good }]);
    expect(result.failed.map((f) => f.error.code)).toEqual(['LockLost', 'NotOwner', 'NotOwner', 'InvalidToken', 'DuplicateToken']);
    expect(calls).toEqual(['delete rh-1']);
  });

  it('EDU-17: when no token is good, SQS is not asked at all', async () => {
    const { service, calls } = harness();
    await service.settle('client-a', subscription, 'release', body({ locktokens: [token({ lockedUntil: NOW - 1 })] }));
    expect(calls).toEqual([]);
  });

  it('EDU-17: renew-lock answers a new token that carries the new expiry', async () => {
    const { service, calls } = harness();
    const answer = JSON.parse((await service.settle('client-a', subscription, 'renew-lock', body({ locktokens: [token()], lockseconds: 600 }))).body) as {
      succeeded: { newlocktoken: string; lockeduntil: string }[];
    };
    expect(calls).toEqual(['visibility rh-1=600']);
    expect(Date.parse(answer.succeeded[0]!.lockeduntil)).toBe(NOW + 600_000 - 2000);
  });
});

describe('receiving (EDU-17)', () => {
  it('EDU-17: short polls side by side for the whole batch; a message past maxdeliverycount is dead-lettered and deleted, not handed out', async () => {
    const { service, calls, deadLetters } = harness([message(1, 1), message(2, 3), message(3, 2)]);
    const answer = JSON.parse((await service.receive('client-a', subscription, body({ maxevents: 25, waitseconds: 0 }))).body) as {
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
    const answer = JSON.parse((await service.receive('client-a', subscription, body({ maxevents: 10, waitseconds: 20 }))).body) as { events: unknown[] };
    expect(answer.events).toHaveLength(2);
    expect(calls.filter((call) => call.startsWith('take') || call.startsWith('long poll'))).toEqual([]);
  });

  it('CARD-7: an empty queue is waited on by one long poll for a single message, holding a slot of the subscription and of the client', async () => {
    const { service, calls } = harness();
    await service.receive('client-a', subscription, body({ maxevents: 10, waitseconds: 20 }));
    expect(calls).toEqual(['receive 10', 'take sub#sub-1', 'take client#client-a', 'long poll 1', 'give sub#sub-1', 'give client#client-a']);
  });
});

describe('receiving with the claim check (EDU-1)', () => {
  it('EDU-1: the answer holds the events as the claim check hands them out; those it cut off go straight back to the queue', async () => {
    const seen: string[][] = [];
    const { service, calls } = harness([message(1, 1), message(2, 1), message(3, 1)], async (_s, events) => {
      seen.push([...events]);
      return [`{"id":"1","data":"inline again"}`, events[1]!];
    });
    const answer = JSON.parse((await service.receive('client-a', subscription, body({ maxevents: 3, waitseconds: 0 }))).body) as {
      events: { id: string; data?: string }[];
      locks: unknown[];
    };
    expect(seen).toEqual([['{"id":"1"}', '{"id":"2"}', '{"id":"3"}']]);
    expect(answer.events).toEqual([{ id: '1', data: 'inline again' }, { id: '2' }]);
    expect(answer.locks).toHaveLength(2);
    expect(calls.at(-1)).toBe('visibility rh-3=0');
  });

  it('EDU-1: when the claim check cannot be read the receive is a 503 problem and every received event goes back to the queue at once', async () => {
    const { service, calls } = harness([message(1, 1), message(2, 1)], async () => {
      throw new Error('s3 down');
    });
    await expect(service.receive('client-a', subscription, body({ maxevents: 2, waitseconds: 0 }))).rejects.toMatchObject({
      problem: { status: 503 },
      headers: { 'retry-after': '1' },
    });
    expect(calls.at(-1)).toBe('visibility rh-1=0,rh-2=0');
  });
});
