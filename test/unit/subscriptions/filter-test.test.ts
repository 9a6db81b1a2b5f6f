/**
 * The filter trial's use case (issue 32, `POST /subscriptions/filters/test`) without emulators:
 * it answers as delivery decides (every filter, `sql` errors as no match, wherever the expression
 * sits), and of the archive it shows only what the caller may receive — its grants, and of
 * Koerier's operational events only those about its own subscriptions.
 */
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../functions/core/auth/access-tokens.js';
import { testFilters } from '../../../functions/core/filter-test/filter-test.js';
import { parseFilterTestRequest } from '../../../functions/core/filter-test/filter-test-request.js';
import { KoerierError } from '../../../functions/core/http/problems.js';
import type { ArchivedEvent } from '../../../functions/core/replay/archive-format.js';
import { MemoryEventArchive } from '../../support/memory/replay-memory-adapters.js';
import { archiveAll, HOUR, NOW } from '../replay/replay-fakes.js';

const caller: Principal = { clientId: 'school-a', scopes: new Set(['subscriptions:manage']) };
const entitlements = new Map([['school-a', [{ typePrefix: 'nl.edu' }]]]);
const body = (value: unknown) => Buffer.from(JSON.stringify(value));
const deps = (archive = new MemoryEventArchive()) => ({ archive, entitlements, now: NOW, retentionMs: 24 * HOUR });

function event(id: string, at: number, type: string, extra: Record<string, unknown> = {}): ArchivedEvent {
  const json = JSON.stringify({ specversion: '1.0', id, source: 'urn:s', type, ...extra, data: {} });
  return { acceptedAt: at, source: 'urn:s', id, type, json };
}

describe('issue 32 (filter test): the use case', () => {
  it('CESQL-7, issue 32 (filter test): all filters must match, each is answered, and an sql error deep in any/not is named, and that expression does not match (so its `not` does)', async () => {
    const request = parseFilterTestRequest(
      body({
        filters: [
          { any: [{ exact: { subject: 'x' } }, { not: { sql: 'volgnummer > 3' } }] },
          { prefix: { type: 'nl.' } },
        ],
        events: [
          { specversion: '1.0', id: '1', source: 's', type: 'nl.a', volgnummer: 2 },
          { specversion: '1.0', id: '2', source: 's', type: 'nl.a', volgnummer: 'twee' },
          { specversion: '1.0', id: '3', source: 's', type: 'other', subject: 'x' },
        ],
      }),
    );
    const answer = await testFilters(request, caller, deps());
    expect(answer.events.map((e) => [e.id, e.matches, e.filters])).toEqual([
      ['1', true, [true, true]],
      // 'twee' > 3 is a cast error: the sql filter does not match, so its `not` does, as delivery decides.
      ['2', true, [true, true]],
      ['3', false, [true, false]],
    ]);
    expect(answer.events[1]!.sqlErrors).toEqual([{ filter: 'filters[0].any[1].not.sql', error: 'cast' }]);
    expect(answer).toMatchObject({ tested: 3, matched: 2 });
  });

  it("CESQL-7, issue 32 (filter test): of the archive, only events the caller's grants cover, and operational events about its own subscriptions only", async () => {
    const archive = new MemoryEventArchive();
    await archiveAll(archive, [
      [
        event('mine', NOW - 5000, 'nl.edu.leerling.v1'),
        event('theirs', NOW - 4000, 'nl.overheid.zaak.v1'),
        event('ops-mine', NOW - 3000, 'dev.koerier.delivery.deadlettered.v1', { koeriersubscriber: 'school-a' }),
        event('ops-theirs', NOW - 2000, 'dev.koerier.delivery.deadlettered.v1', { koeriersubscriber: 'school-b' }),
        event('too-old', NOW - 25 * HOUR, 'nl.edu.leerling.v1'),
      ],
    ]);
    const answer = await testFilters(
      parseFilterTestRequest(body({ filters: [], archived: { last: 10 } })),
      caller,
      deps(archive),
    );
    expect(answer.events.map((e) => e.id)).toEqual(['ops-mine', 'mine']);
    expect(answer.archive).toEqual({ last: 10, scanned: 4, complete: true });
  });

  it('CESQL-7, issue 32 (filter test): an invalid sql filter is the 400 of a subscription, naming the filter and the position', () => {
    let refusal: unknown;
    try {
      parseFilterTestRequest(body({ filters: [{ sql: "type = 'a' AND" }], archived: { last: 1 } }));
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(KoerierError);
    const problem = (refusal as KoerierError).problem;
    expect(problem.status).toBe(400);
    expect(problem.type).toBe('/v1/problems/invalid-subscription');
    expect(problem.errors).toEqual([
      expect.objectContaining({
        attribute: 'filters[0].sql',
        rule: 'cesql',
        message: expect.stringMatching(/at position \d+/) as unknown,
      }),
    ]);
  });
});
