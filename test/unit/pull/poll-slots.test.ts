/**
 * Capacity for long polls (functions/core/pull/poll-slots.ts, issue 10, docs/PULL.md "Capacity")
 * over a fake lease table: a poll beyond the cap is refused before it waits, and a slot is leased
 * for long enough that only a dead container's slot lapses on its own.
 */
import { describe, expect, it } from 'vitest';
import { KoerierError, problemType } from '../../../functions/core/http/problems.js';
import { silentLog } from '../../../functions/core/ports/log.js';
import { withPollSlots } from '../../../functions/core/pull/poll-slots.js';

const NOW = Date.UTC(2026, 10, 27, 12);
const limits = { perSubscription: 5, perClient: 10 };
const poller = { clientId: 'client-a', subscriptionId: 'sub-1' };

/** A lease table whose scopes in `full` have no free slot; records every take and give. */
function leaseTable(full: readonly string[] = []) {
  const taken: { scope: string; limit: number; now: number; until: number }[] = [];
  const given: string[] = [];
  const leases = {
    take: async (scope: string, limit: number, _leaseId: string, now: number, until: number) => {
      taken.push({ scope, limit, now, until });
      return full.includes(scope) ? undefined : 0;
    },
    give: async (scope: string) => void given.push(scope),
  };
  return { deps: { leases, clock: () => NOW, log: silentLog }, taken, given };
}

describe('long poll slots (CARD-7, issue 10)', () => {
  it('CARD-7, issue 10: a poll holds a slot of its subscription and of its client, each up to its own limit, for 35 s from its start', async () => {
    const { deps, taken, given } = leaseTable();
    expect(await withPollSlots(deps, limits, poller, async () => 'answered')).toBe('answered');
    // 35 s is above the pull function's 28 s timeout: a live poll never outlasts its lease, and a
    // crashed container's slot frees itself soon after.
    expect(taken).toEqual([
      { scope: 'sub#sub-1', limit: 5, now: NOW, until: NOW + 35_000 },
      { scope: 'client#client-a', limit: 10, now: NOW, until: NOW + 35_000 },
    ]);
    expect(given).toEqual(['sub#sub-1', 'client#client-a']);
  });

  it('CARD-7, issue 10: with no free slot the poll is refused 429 too-many-polls with Retry-After 5 before it waits, and the slot it took is given back', async () => {
    const { deps, given } = leaseTable(['client#client-a']);
    let waited = false;
    const refusal = await withPollSlots(deps, limits, poller, async () => {
      waited = true;
    }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(KoerierError);
    expect((refusal as KoerierError).problem).toMatchObject({
      status: 429,
      type: problemType('too-many-polls'),
      title: 'Too many long polls',
    });
    expect((refusal as KoerierError).headers).toEqual({ 'retry-after': '5' });
    expect(waited).toBe(false);
    expect(given).toEqual(['sub#sub-1']);
  });

  it('CARD-7, issue 10: a full subscription refuses the poll without taking a slot of the client', async () => {
    const { deps, taken, given } = leaseTable(['sub#sub-1']);
    await expect(withPollSlots(deps, limits, poller, async () => 'answered')).rejects.toMatchObject({
      problem: { status: 429 },
    });
    expect(taken.map(({ scope }) => scope)).toEqual(['sub#sub-1']);
    expect(given).toEqual([]);
  });
});
