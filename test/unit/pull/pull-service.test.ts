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

function harness(waiting: PulledMessage[] = []) {
  const calls: string[] = [];
  const deadLetters: DeadLetter[] = [];
  const queues: PullQueues = {
    create: async () => undefined,
    update: async () => undefined,
    remove: async () => undefined,
    send: async () => undefined,
    receive: async (_id, { max }) => {
      calls.push(`receive ${max}`);
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
    leases: { take: async () => 0, give: async () => undefined },
    maxPollsPerSubscription: 5,
    maxPollsPerClient: 10,
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
  it('EDU-17: one long poll for a single message, then short polls for the rest; a message past maxdeliverycount is dead-lettered and deleted, not handed out', async () => {
    const { service, calls, deadLetters } = harness([message(1, 1), message(2, 3), message(3, 2)]);
    const answer = JSON.parse((await service.receive('client-a', subscription, body({ maxevents: 25, waitseconds: 0 }))).body) as {
      events: { id: string }[];
      locks: { deliverycount: number; deliverykey: string }[];
    };
    expect(calls.slice(0, 2)).toEqual(['receive 1', 'receive 10']);
    expect(answer.events.map((e) => e.id)).toEqual(['1', '3']);
    expect(answer.locks.map((l) => [l.deliverycount, l.deliverykey])).toEqual([
      [1, 'key-1'],
      [2, 'key-3'],
    ]);
    expect(deadLetters).toMatchObject([{ deliveryId: 'key-2', reason: 'max-deliveries', attempts: 2 }]);
    expect(calls).toContain('delete rh-2');
  });
});
