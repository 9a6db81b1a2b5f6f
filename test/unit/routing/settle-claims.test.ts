/**
 * settleClaims (functions/core/routing/settle-claims.ts): the router's last step with a ledger that
 * marks a batch routed in one write (EDU-IDEM-15, issue 15 item 2). The routed claims go to one
 * `completeAll`, the failed ones are released, and a commit that cannot be written fails no record.
 */
import { describe, expect, it } from 'vitest';
import { settleClaims } from '../../../functions/core/routing/settle-claims.js';
import type { ClaimedIdentity, RoutedEventBatch } from '../../../functions/core/routing/routed-events.js';
import { InMemoryLedger, SOURCE } from './routing-fakes.js';

const entry = (id: string) => ({
  record: { recordId: `r-${id}` },
  event: { source: SOURCE, id },
  claimId: `claim-${id}`,
});

function fakeBatch(failCommit = false) {
  const commits: string[][] = [];
  const released: string[] = [];
  const batch: RoutedEventBatch = {
    claim: () => Promise.reject(new Error('not used')),
    abandon: async (event) => void released.push(event.id),
    completeAll: async (claims: readonly ClaimedIdentity[]) => {
      if (failCommit) throw new Error('throttled');
      commits.push(claims.map((claim) => claim.claimId));
    },
  };
  return { batch, commits, released };
}

describe('settling the claims of one batch', () => {
  it('EDU-IDEM-15: the routed claims are committed in one call, the failed one released, none completed one by one', async () => {
    const ledger = new InMemoryLedger();
    const { batch, commits, released } = fakeBatch();
    const routed = await settleClaims(
      [entry('e1'), entry('e2'), entry('e3')],
      new Set(['r-e2']),
      ledger,
      batch,
      undefined,
    );
    expect(routed).toBe(2);
    expect(commits).toEqual([['claim-e1', 'claim-e3']]);
    expect(released).toEqual(['e2']);
    expect(ledger.completed).toEqual([]);
  });

  it('EDU-IDEM-15: a commit that cannot be written is logged per event and fails no record', async () => {
    const logs: { message: string; fields: Record<string, unknown> }[] = [];
    const log = {
      info: (message: string, fields: Record<string, unknown>) => void logs.push({ message, fields }),
      warn: () => {},
      error: () => {},
    };
    const routed = await settleClaims(
      [entry('e1'), entry('e2')],
      new Set(),
      new InMemoryLedger(),
      fakeBatch(true).batch,
      log,
    );
    expect(routed).toBe(2);
    expect(logs).toEqual([
      { message: 'routed marker not stored', fields: { source: SOURCE, id: 'e1', error: 'throttled' } },
      { message: 'routed marker not stored', fields: { source: SOURCE, id: 'e2', error: 'throttled' } },
    ]);
  });

  it('EDU-IDEM-15: with nothing routed no commit is written', async () => {
    const { batch, commits } = fakeBatch();
    expect(await settleClaims([entry('e1')], new Set(['r-e1']), new InMemoryLedger(), batch, undefined)).toBe(0);
    expect(commits).toEqual([]);
  });
});
