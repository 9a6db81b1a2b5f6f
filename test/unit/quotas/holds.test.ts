/**
 * The count behind the per-client count quotas (functions/core/quotas/holds.ts): a place per id,
 * written only at the version read, weeded of what is gone only when the ledger looks full.
 */
import { describe, expect, it } from 'vitest';
import { quotasOf, DEFAULT_QUOTAS } from '../../../functions/core/quotas/client-quotas.js';
import { readJsonBody } from '../../../functions/core/http/json-body.js';
import { KoerierError } from '../../../functions/core/http/problems.js';
import { CLIENT_INPUT_BODY } from '../../../functions/core/partners/partner-input.js';
import { releaseHold, takeHold, type HoldRequest } from '../../../functions/core/quotas/holds.js';
import { MemoryHoldLedger } from '../../support/memory/quotas-memory-adapters.js';

const request = (id: string, overrides: Partial<HoldRequest> = {}): HoldRequest => ({
  key: 'pull-subscriptions/school-a',
  id,
  limit: 2,
  now: 1_000,
  isLive: async () => true,
  ...overrides,
});

describe('holds of a count quota (issue 28, item 13)', () => {
  it('EDU-20, issue 28: places up to the limit, a repeat of a held id takes none, the next is refused with the count; a release frees one', async () => {
    const ledger = new MemoryHoldLedger();
    expect(await takeHold(ledger, request('a'))).toEqual({ taken: true });
    expect(await takeHold(ledger, request('b'))).toEqual({ taken: true });
    expect(await takeHold(ledger, request('a'))).toEqual({ taken: true });
    expect(await takeHold(ledger, request('c'))).toEqual({ taken: false, held: 2 });
    await releaseHold(ledger, 'pull-subscriptions/school-a', 'a');
    expect(await takeHold(ledger, request('c'))).toEqual({ taken: true });
  });

  it('EDU-20, issue 28: a full ledger is weeded of entries that are gone, and only then refuses; isLive is not asked below the limit', async () => {
    const ledger = new MemoryHoldLedger();
    const asked: string[] = [];
    const isLive = async (id: string) => (asked.push(id), id !== 'gone');
    await takeHold(ledger, request('gone', { isLive }));
    await takeHold(ledger, request('kept', { isLive }));
    expect(asked).toEqual([]);
    expect(await takeHold(ledger, request('new', { isLive }))).toEqual({ taken: true });
    expect(asked.sort()).toEqual(['gone', 'kept']);
    expect(Object.keys((await ledger.load('pull-subscriptions/school-a'))!.entries).sort()).toEqual(['kept', 'new']);
  });

  it('EDU-20, issue 28: a ledger never written starts from what the client held before quotas were counted', async () => {
    const ledger = new MemoryHoldLedger();
    const initial = async () => ['old-1', 'old-2'];
    expect(await takeHold(ledger, request('new', { initial }))).toEqual({ taken: false, held: 2 });
    expect(await takeHold(ledger, request('old-1', { initial }))).toEqual({ taken: true });
  });

  it('EDU-20, issue 28: two takes that read the same version cannot both write: the second reads again and is refused', async () => {
    const ledger = new MemoryHoldLedger();
    await takeHold(ledger, request('a'));
    const racing = new MemoryHoldLedger();
    racing.ledgers.set('pull-subscriptions/school-a', ledger.ledgers.get('pull-subscriptions/school-a')!);
    // Both load at version 1, then save one after the other.
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const original = racing.load.bind(racing);
    racing.load = async (key) => {
      const loaded = await original(key);
      if (++loads <= 2) await gate;
      return loaded;
    };
    const both = Promise.all([takeHold(racing, request('b')), takeHold(racing, request('c'))]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    expect((await both).map((outcome) => outcome.taken).sort()).toEqual([false, true]);
    expect(Object.keys((await racing.load('pull-subscriptions/school-a'))!.entries)).toHaveLength(2);
  });

  it("EDU-20, issue 28: a partner's own quotas win over the defaults; an admin's quotas are whole numbers within bounds, known names only", () => {
    expect(quotasOf('a', DEFAULT_QUOTAS, new Map([['a', { maxConcurrentReplays: 5 }]]))).toEqual({
      ...DEFAULT_QUOTAS,
      maxConcurrentReplays: 5,
    });
    expect(quotasOf('b', DEFAULT_QUOTAS, new Map([['a', { maxConcurrentReplays: 5 }]]))).toEqual(DEFAULT_QUOTAS);
    // An admin's quotas are read by the partner body's one schema (issue 29 item 2).
    const quotasIn = (quotas: unknown) => readJsonBody(JSON.stringify({ quotas }), CLIENT_INPUT_BODY).quotas;
    expect(quotasIn({ maxPullSubscriptions: 0, uploadBytesPerHour: 1 })).toEqual({
      maxPullSubscriptions: 0,
      uploadBytesPerHour: 1,
    });
    for (const bad of [{ maxPullSubscriptions: 1001 }, { maxConcurrentReplays: '2' }, { other: 1 }, null, [1]])
      expect(() => quotasIn(bad)).toThrow(KoerierError);
  });
});
