/**
 * routeInboundEvents with in-memory stores (routing-fakes.ts): what gets queued for whom, what
 * counts as a duplicate, and that one record's trouble fails that record alone (issue 8, item 1).
 * The same behaviour against the emulators is in test/integration/router-routing.test.ts; these
 * run per mutant in `npm run mutate`.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeDeliveryMessage,
  encodeDeliveryMessage,
  type DeliveryMessage,
} from '../../../functions/core/delivery-message/delivery-message.js';
import { SubscriptionMatcher } from '../../../functions/core/routing/matcher.js';
import {
  routeInboundEvents,
  type InboundRecord,
  type RouterDependencies,
} from '../../../functions/core/routing/route-events.js';
import { deliveryIdOf } from '../../../functions/core/delivery-message/delivery-rules.js';
import { queueOutbox } from '../../../functions/core/delivery-message/outbox.js';
import { readIdempotencyKey } from '../../../functions/core/idempotency/index.js';
import {
  BatchReadingRouteIndex,
  candidate,
  entitledOwners,
  InMemoryLedger,
  InMemoryRouteIndex,
  SOURCE,
  storedEvent,
} from './routing-fakes.js';

const NOW = Date.UTC(2026, 2, 1, 12);

function router(
  index: InMemoryRouteIndex,
  over: Partial<RouterDependencies> & { failSend?: (bodies: readonly string[]) => boolean } = {},
) {
  const ledger = over.ledger instanceof InMemoryLedger ? over.ledger : new InMemoryLedger();
  const sendCalls: string[][] = [];
  const queued: DeliveryMessage[] = [];
  const pullQueued: { queue: string; bodies: string[] }[] = [];
  const logs: { message: string; fields: Record<string, unknown> }[] = [];
  const { failSend, ...rest } = over;
  const deps: RouterDependencies = {
    matcher: new SubscriptionMatcher(index),
    ledger,
    entitlements: entitledOwners(),
    // The real outbox over recording queues: it encodes and picks the queue (issue 29, item 3).
    outbox: queueOutbox({
      deliveryQueue: {
        send: async (bodies) => {
          sendCalls.push([...bodies]);
          if (failSend?.(bodies)) throw new Error('SQS refused');
          queued.push(...bodies.map(decodeDeliveryMessage));
        },
      },
      pullQueues: {
        send: async (subscriptionId, bodies) => {
          pullQueued.push({ queue: subscriptionId, bodies: [...bodies] });
        },
      },
    }),
    now: () => NOW,
    lockMs: 120_000,
    ttlSeconds: 7 * 24 * 3600,
    maxMessageBytes: 256 * 1024 - 8 * 1024,
    log: {
      info: (message, fields) => void logs.push({ message, fields }),
      warn: (message, fields) => void logs.push({ message, fields }),
      error: (message, fields) => void logs.push({ message, fields }),
    },
    ...rest,
  };
  return {
    deps,
    ledger,
    sendCalls,
    queued,
    pullQueued,
    logs,
    route: (records: InboundRecord[]) => routeInboundEvents(records, deps),
  };
}

const records = (...ids: string[]): InboundRecord[] =>
  ids.map((id) => ({ recordId: `r-${id}`, body: storedEvent(id) }));

describe('routing an accepted event', () => {
  it('EDU-8: an event matching two subscriptions is queued once for each, verbatim, under a UUIDv4 key, dated now', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1')).add(candidate('s-2'));
    const { route, queued, ledger } = router(index);
    const report = await route(records('e1'));
    expect(report).toEqual({ failedRecordIds: [], routed: 1, duplicates: 0, deliveries: 2 });
    expect(queued.map((m) => m.subscriptionId).sort()).toEqual(['s-1', 's-2']);
    for (const message of queued) {
      expect(message.events).toEqual([storedEvent('e1')]);
      expect(message.createdAt).toBe(NOW);
      expect(message.version).toBe(1);
      expect(readIdempotencyKey({ 'idempotency-key': message.deliveryId })).toBe(message.deliveryId);
    }
    expect(new Set(queued.map((m) => m.deliveryId)).size).toBe(2);
    expect(ledger.completed).toEqual(['e1']);
  });

  it('EDU-8: an event no subscription matches is routed with nothing queued', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1', { match: { types: ['nl.edu.other.v1'] } }));
    const { route, sendCalls, ledger } = router(index);
    expect(await route(records('e1'))).toEqual({ failedRecordIds: [], routed: 1, duplicates: 0, deliveries: 0 });
    expect(sendCalls).toEqual([]);
    expect(ledger.completed).toEqual(['e1']);
  });

  it("EDU-IDEM-7: the claim carries the router's clock, lock and idempotency window", async () => {
    const { route, ledger } = router(new InMemoryRouteIndex().add(candidate('s-1')));
    await route(records('e1'));
    expect(ledger.claims).toEqual([
      {
        event: expect.objectContaining({ id: 'e1', source: SOURCE }),
        // Issue 30 item 1: and the acceptance, for the trace (a record without one: accepted at the router's now).
        options: { now: NOW, lockMs: 120_000, ttlSeconds: 7 * 24 * 3600, acceptance: { acceptedAt: NOW } },
      },
    ]);
  });

  it('EDU-7: a subscriber no longer entitled to the event gets nothing, and the withholding is logged', async () => {
    const index = new InMemoryRouteIndex()
      .add(candidate('s-1', { owner: 'revoked' }))
      .add(candidate('s-2', { owner: 'entitled' }));
    const entitlements = entitledOwners((owner) => owner === 'entitled');
    const { route, queued, logs } = router(index, { entitlements });
    expect((await route(records('e1'))).deliveries).toBe(1);
    expect(queued.map((m) => m.subscriptionId)).toEqual(['s-2']);
    expect(entitlements.asked).toContain('revoked');
    expect(
      logs.find((l) => l.message === 'delivery withheld: the subscriber is no longer entitled')?.fields,
    ).toMatchObject({
      subscriptionId: 's-1',
      owner: 'revoked',
      id: 'e1',
    });
  });
});

describe('duplicates (CE-17, EDU-IDEM-15)', () => {
  it('EDU-IDEM-15: an event routed before is dropped: counted a duplicate, nothing queued, not failed', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1'));
    const ledger = new InMemoryLedger();
    ledger.markRouted({ source: SOURCE, id: 'e1' });
    const { route, sendCalls, logs } = router(index, { ledger });
    expect(await route(records('e1'))).toEqual({ failedRecordIds: [], routed: 0, duplicates: 1, deliveries: 0 });
    expect(sendCalls).toEqual([]);
    expect(logs.map((l) => l.message)).toContain('duplicate event dropped');
  });

  it('CE-17: the same source and id twice in one batch is routed once; the copy counts as a duplicate', async () => {
    const { route, queued } = router(new InMemoryRouteIndex().add(candidate('s-1')));
    const report = await route([...records('e1'), { recordId: 'r-copy', body: storedEvent('e1') }]);
    expect(report).toEqual({ failedRecordIds: [], routed: 1, duplicates: 1, deliveries: 1 });
    expect(queued).toHaveLength(1);
  });

  it('CE-17: when the first copy in a batch fails, its repeat fails with it, so neither is lost', async () => {
    const ledger = new InMemoryLedger();
    ledger.failing.claim.add('e1');
    const { route } = router(new InMemoryRouteIndex().add(candidate('s-1')), { ledger });
    const report = await route([...records('e1', 'e2'), { recordId: 'r-copy', body: storedEvent('e1') }]);
    expect([...report.failedRecordIds].sort()).toEqual(['r-copy', 'r-e1']);
    expect(report.routed).toBe(1);
    expect(report.duplicates).toBe(0);
  });

  it('EDU-IDEM-15: an event another attempt is routing right now comes back later, without deliveries', async () => {
    const ledger = new InMemoryLedger();
    ledger.markBusy({ source: SOURCE, id: 'e1' }, NOW + 60_000);
    const { route, sendCalls } = router(new InMemoryRouteIndex().add(candidate('s-1')), { ledger });
    expect(await route(records('e1'))).toEqual({ failedRecordIds: ['r-e1'], routed: 0, duplicates: 0, deliveries: 0 });
    expect(sendCalls).toEqual([]);
  });
});

describe("one record's trouble fails that record alone (review #1)", () => {
  it('review #1: a record that is not a stored event fails alone; the others are routed', async () => {
    const { route, queued, logs } = router(new InMemoryRouteIndex().add(candidate('s-1')));
    const report = await route([{ recordId: 'r-junk', body: '{not json' }, ...records('e1', 'e2')]);
    expect(report).toEqual({ failedRecordIds: ['r-junk'], routed: 2, duplicates: 0, deliveries: 2 });
    expect(queued).toHaveLength(2);
    expect(logs.find((l) => l.message === 'inbound record unreadable')?.fields).toEqual({ recordId: 'r-junk' });
  });

  it('review #1: a routing marker that cannot be written fails its record alone', async () => {
    const ledger = new InMemoryLedger();
    ledger.failing.claim.add('e2');
    const { route, queued, logs } = router(new InMemoryRouteIndex().add(candidate('s-1')), { ledger });
    const report = await route(records('e1', 'e2', 'e3'));
    expect(report).toEqual({ failedRecordIds: ['r-e2'], routed: 2, duplicates: 0, deliveries: 2 });
    expect(queued.flatMap((m) => m.events)).toEqual([storedEvent('e1'), storedEvent('e3')]);
    expect(logs.find((l) => l.message === 'routing claim not written')?.fields).toMatchObject({
      id: 'e2',
      error: 'ledger write failed',
    });
  });

  it('review #1: an event whose subscriptions cannot be read fails alone, and its claim is released for the retry', async () => {
    const index = new InMemoryRouteIndex()
      .add(candidate('s-1', { match: { types: ['nl.edu.leerling.ingeschreven.v1'] } }))
      .add(candidate('s-2', { match: { types: ['nl.edu.leerling.uitgeschreven.v1'] } }));
    index.failingKeys.add('eq:type|nl.edu.leerling.uitgeschreven.v1');
    const { route, queued, ledger, logs } = router(index);
    const report = await route([
      ...records('e1'),
      { recordId: 'r-e2', body: storedEvent('e2', { type: 'nl.edu.leerling.uitgeschreven.v1' }) },
    ]);
    expect(report).toEqual({ failedRecordIds: ['r-e2'], routed: 1, duplicates: 0, deliveries: 1 });
    expect(queued.map((m) => m.subscriptionId)).toEqual(['s-1']);
    expect(ledger.abandoned).toEqual(['e2']);
    expect(ledger.completed).toEqual(['e1']);
    expect(logs.map((l) => l.message)).toContain('subscriptions not read');
  });

  it('review #1: when SQS refuses the deliveries together, each is queued alone and only a refused one fails its record', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1'));
    const refuses = (bodies: readonly string[]) => bodies.length > 1 || bodies.some((b) => b.includes('"id":"e2"'));
    const { route, sendCalls, queued, ledger, logs } = router(index, { failSend: refuses });
    const report = await route(records('e1', 'e2', 'e3'));
    expect(report).toEqual({ failedRecordIds: ['r-e2'], routed: 2, duplicates: 0, deliveries: 2 });
    expect(sendCalls.map((call) => call.length)).toEqual([3, 1, 1, 1]);
    expect(queued.flatMap((m) => m.events)).toEqual([storedEvent('e1'), storedEvent('e3')]);
    expect(ledger.abandoned).toEqual(['e2']);
    expect(ledger.completed.sort()).toEqual(['e1', 'e3']);
    expect(logs.map((l) => l.message)).toEqual(
      expect.arrayContaining(['deliveries not queued together; queueing them one by one', 'delivery not queued']),
    );
  });

  it('review #1: events of one batch delivery share its fate: refused together, failed together', async () => {
    const index = new InMemoryRouteIndex()
      .add(candidate('batch', { contentMode: 'batch', batchSupported: true }))
      .add(candidate('single'));
    const refuses = (bodies: readonly string[]) =>
      bodies.length > 1 || bodies.some((b) => decodeDeliveryMessage(b).subscriptionId === 'batch');
    const { route, queued } = router(index, { failSend: refuses });
    const report = await route(records('e1', 'e2'));
    expect([...report.failedRecordIds].sort()).toEqual(['r-e1', 'r-e2']);
    expect(report.deliveries).toBe(2);
    expect(queued.map((m) => m.subscriptionId)).toEqual(['single', 'single']);
  });

  it('EDU-IDEM-9: an event routed again after its deliveries failed gets the same delivery keys', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1')).add(candidate('s-2'));
    const ledger = new InMemoryLedger();
    let refuse = true;
    const first = router(index, { ledger, failSend: () => refuse });
    const failed = await first.route(records('e1'));
    expect(failed.failedRecordIds).toEqual(['r-e1']);
    const attempted = first.sendCalls
      .flat()
      .map((b) => decodeDeliveryMessage(b).deliveryId)
      .sort();
    refuse = false;
    const again = router(index, { ledger });
    expect((await again.route(records('e1'))).failedRecordIds).toEqual([]);
    expect(again.queued.map((m) => m.deliveryId).sort()).toEqual([...new Set(attempted)]);
  });

  it('review #1: a routed marker that cannot be stored does not fail the record: its deliveries are queued', async () => {
    const ledger = new InMemoryLedger();
    ledger.failing.complete.add('e1');
    const { route, logs } = router(new InMemoryRouteIndex().add(candidate('s-1')), { ledger });
    expect(await route(records('e1'))).toEqual({ failedRecordIds: [], routed: 1, duplicates: 0, deliveries: 1 });
    expect(logs.map((l) => l.message)).toContain('routed marker not stored');
  });

  it('review #1: a claim that cannot be released leaves the record failed and the others routed', async () => {
    const ledger = new InMemoryLedger();
    ledger.failing.abandon.add('e2');
    const { route, logs } = router(new InMemoryRouteIndex().add(candidate('s-1')), {
      ledger,
      failSend: (bodies) => bodies.some((b) => b.includes('"id":"e2"')),
    });
    expect(await route(records('e1', 'e2'))).toEqual({
      failedRecordIds: ['r-e2'],
      routed: 1,
      duplicates: 0,
      deliveries: 1,
    });
    expect(logs.map((l) => l.message)).toContain('routing claim not released');
  });

  it("review #1: without the route index's state no record can be routed: the whole call fails", async () => {
    const index = new InMemoryRouteIndex();
    index.readState = async () => Promise.reject(new Error('index unreadable'));
    const { route } = router(index);
    await expect(route(records('e1'))).rejects.toThrow('index unreadable');
  });
});

describe('pull subscriptions (CARD-7, EDU-17)', () => {
  it("CARD-7: a pull subscription's events go to its own queue, one message per event in one call, with the key a push delivery would get (EDU-IDEM-2)", async () => {
    const index = new InMemoryRouteIndex()
      .add(candidate('s-pull', { delivery: 'pull', contentMode: 'batch', batchSupported: true }))
      .add(candidate('s-push'));
    const { route, queued, pullQueued } = router(index);
    expect(await route(records('e1', 'e2'))).toMatchObject({ failedRecordIds: [], routed: 2, deliveries: 4 });
    expect(queued.map((m) => m.subscriptionId)).toEqual(['s-push', 's-push']);
    expect(pullQueued.map((call) => call.queue)).toEqual(['s-pull']);
    const messages = pullQueued[0]!.bodies.map(decodeDeliveryMessage);
    expect(messages.map((m) => m.events)).toEqual([[storedEvent('e1')], [storedEvent('e2')]]);
    for (const message of messages)
      expect(readIdempotencyKey({ 'idempotency-key': message.deliveryId })).toBe(message.deliveryId);
  });
});

describe('batch deliveries (EDU-11, JSON-3)', () => {
  it('EDU-11: a subscription whose target takes batches gets the matching events of one invocation together, in order', async () => {
    const { route, queued } = router(
      new InMemoryRouteIndex().add(candidate('s-batch', { contentMode: 'batch', batchSupported: true })),
    );
    expect((await route(records('e1', 'e2', 'e3'))).deliveries).toBe(1);
    expect(queued[0]!.events).toEqual([storedEvent('e1'), storedEvent('e2'), storedEvent('e3')]);
  });

  it('JSON-3: batch mode for a target that did not declare batches gets one delivery per event', async () => {
    const { route, queued } = router(
      new InMemoryRouteIndex().add(candidate('s-batch', { contentMode: 'batch', batchSupported: false })),
    );
    expect((await route(records('e1', 'e2'))).deliveries).toBe(2);
    expect(queued.map((m) => m.events.length)).toEqual([1, 1]);
  });

  it('EDU-11: a structured subscription gets one delivery per event even when its target takes batches', async () => {
    const { route, queued } = router(
      new InMemoryRouteIndex().add(candidate('s-structured', { contentMode: 'structured', batchSupported: true })),
    );
    expect((await route(records('e1', 'e2'))).deliveries).toBe(2);
    expect(queued.map((m) => m.events.length)).toEqual([1, 1]);
  });

  it('CE-14: a batch delivery is cut before its message passes the largest queue message, never splitting an event', async () => {
    const events = ['e1', 'e2', 'e3', 'e4', 'e5'];
    const eventBytes = Buffer.byteLength(storedEvent('e1'));
    const envelope = Buffer.byteLength(
      encodeDeliveryMessage({
        version: 1,
        deliveryId: '00000000-0000-4000-8000-000000000000',
        subscriptionId: 's-batch',
        events: [],
        createdAt: NOW,
      }),
    );
    // Room for the message around the events and two events (each spliced in with a comma), not three.
    const maxMessageBytes = envelope + 2 * (eventBytes + 1);
    const { route, sendCalls, queued } = router(
      new InMemoryRouteIndex().add(candidate('s-batch', { contentMode: 'batch', batchSupported: true })),
      {
        maxMessageBytes,
      },
    );
    expect((await route(records(...events))).deliveries).toBe(3);
    expect(queued.map((m) => m.events.length)).toEqual([2, 2, 1]);
    expect(queued.flatMap((m) => m.events)).toEqual(events.map((id) => storedEvent(id)));
    for (const body of sendCalls[0]!) expect(Buffer.byteLength(body)).toBeLessThanOrEqual(maxMessageBytes);
  });

  it('CE-14: an event larger than the batch room on its own still travels, alone', async () => {
    const { route, queued } = router(
      new InMemoryRouteIndex().add(candidate('s-batch', { contentMode: 'batch', batchSupported: true })),
      {
        maxMessageBytes: 50,
      },
    );
    expect((await route(records('e1', 'e2'))).deliveries).toBe(2);
    expect(queued.map((m) => m.events.length)).toEqual([1, 1]);
  });
});

describe('what the router tells the operator, and what it needs', () => {
  it('review #1: without a log function every failure path still settles each record', async () => {
    const index = new InMemoryRouteIndex()
      .add(candidate('s-1'))
      .add(candidate('s-gov', { owner: 'revoked', match: { types: ['nl.gov.zaak.gestart.v1'] } }));
    index.failingKeys.add('eq:type|nl.edu.leerling.uitgeschreven.v1');
    const ledger = new InMemoryLedger();
    ledger.markRouted({ source: SOURCE, id: 'dup' });
    ledger.failing.claim.add('claim-fails');
    ledger.failing.complete.add('e1');
    ledger.failing.abandon.add('send-fails');
    const { deps } = router(index, {
      ledger,
      entitlements: entitledOwners((owner) => owner !== 'revoked'),
      failSend: (bodies) => bodies.length > 1 || bodies.some((b) => b.includes('"id":"send-fails"')),
    });
    const { log: _log, ...withoutLog } = deps;
    const report = await routeInboundEvents(
      [
        { recordId: 'r-junk', body: 'not json' },
        ...records('e1', 'dup', 'claim-fails', 'send-fails', 'e2'),
        { recordId: 'r-unread', body: storedEvent('unread', { type: 'nl.edu.leerling.uitgeschreven.v1' }) },
        { recordId: 'r-gov', body: storedEvent('gov', { type: 'nl.gov.zaak.gestart.v1' }) },
      ],
      withoutLog,
    );
    expect([...report.failedRecordIds].sort()).toEqual(['r-claim-fails', 'r-junk', 'r-send-fails', 'r-unread']);
    expect(report).toMatchObject({ routed: 3, duplicates: 1, deliveries: 2 });
  });

  it('CE-16: the log names each event by source, id and type, and says what happened to it', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1')).add(candidate('s-2'));
    index.failingKeys.add('eq:type|nl.edu.leerling.uitgeschreven.v1');
    const ledger = new InMemoryLedger();
    ledger.markRouted({ source: SOURCE, id: 'dup' });
    ledger.failing.complete.add('e1');
    ledger.failing.abandon.add('send-fails');
    const { route, logs } = router(index, {
      ledger,
      failSend: (bodies) => bodies.length > 2 || bodies.some((b) => b.includes('"id":"send-fails"')),
    });
    await route([
      ...records('e1', 'dup', 'send-fails'),
      { recordId: 'r-unread', body: storedEvent('unread', { type: 'nl.edu.leerling.uitgeschreven.v1' }) },
    ]);
    const fields = (message: string) => logs.filter((l) => l.message === message).map((l) => l.fields);
    expect(fields('duplicate event dropped')).toEqual([
      { source: SOURCE, id: 'dup', type: 'nl.edu.leerling.ingeschreven.v1' },
    ]);
    expect(fields('subscriptions not read')).toEqual([
      { source: SOURCE, id: 'unread', error: 'route index read failed for eq:type|nl.edu.leerling.uitgeschreven.v1' },
    ]);
    expect(fields('event routed')).toEqual([
      { source: SOURCE, id: 'e1', type: 'nl.edu.leerling.ingeschreven.v1', subscriptions: 2 },
      { source: SOURCE, id: 'send-fails', type: 'nl.edu.leerling.ingeschreven.v1', subscriptions: 2 },
    ]);
    expect(fields('deliveries not queued together; queueing them one by one')).toEqual([
      { deliveries: 4, error: 'SQS refused' },
    ]);
    expect(fields('delivery not queued')).toEqual([
      { events: 1, error: 'SQS refused' },
      { events: 1, error: 'SQS refused' },
    ]);
    expect(fields('routing claim not released')).toEqual([
      { source: SOURCE, id: 'send-fails', error: 'ledger write failed' },
    ]);
    expect(fields('routed marker not stored')).toEqual([{ source: SOURCE, id: 'e1', error: 'ledger write failed' }]);
  });

  it('review #1: an event whose subscriptions could not be read does not lend its (empty) matches to the next event', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1'));
    index.failingKeys.add('eq:type|nl.edu.leerling.uitgeschreven.v1');
    const { route, queued } = router(index);
    const report = await route([
      { recordId: 'r-unread', body: storedEvent('unread', { type: 'nl.edu.leerling.uitgeschreven.v1' }) },
      ...records('e1'),
    ]);
    expect(report.failedRecordIds).toEqual(['r-unread']);
    expect(queued.map((m) => m.events)).toEqual([[storedEvent('e1')]]);
  });

  it('EDU-IDEM-13: the same event published again after the idempotency window is a new operation, under a new key', async () => {
    const index = new InMemoryRouteIndex().add(candidate('s-1'));
    const ledger = new InMemoryLedger();
    const first = router(index, { ledger });
    await first.route(records('e1'));
    ledger.forget({ source: SOURCE, id: 'e1' });
    const again = router(index, { ledger });
    await again.route(records('e1'));
    expect(again.queued[0]!.deliveryId).not.toBe(first.queued[0]!.deliveryId);
  });

  it("EDU-IDEM-9: a batch delivery's key does not depend on the order its routing ids come in, and events never blur into each other", () => {
    const events = ['{"id":"a"}', '{"id":"b"}'];
    expect(deliveryIdOf(['r-2', 'r-1'], 's', events)).toBe(deliveryIdOf(['r-1', 'r-2'], 's', events));
    expect(deliveryIdOf(['r-1'], 's', ['{"id":"a"}{"id":"b"}'])).not.toBe(deliveryIdOf(['r-1'], 's', events));
  });

  it('CE-14: a batch is cut exactly where the next event would pass the limit, counting a comma per event', async () => {
    const eventBytes = Buffer.byteLength(storedEvent('e1'));
    const envelope = Buffer.byteLength(
      encodeDeliveryMessage({
        version: 1,
        deliveryId: '00000000-0000-4000-8000-000000000000',
        subscriptionId: 's-batch',
        events: [],
        createdAt: 0,
      }),
    );
    const batch = () =>
      new InMemoryRouteIndex().add(candidate('s-batch', { contentMode: 'batch', batchSupported: true }));
    const cut = async (maxMessageBytes: number) => {
      const { route, queued } = router(batch(), { maxMessageBytes, now: () => 0 });
      await route(records('e1', 'e2', 'e3', 'e4', 'e5'));
      return queued.map((m) => m.events.length);
    };
    expect(await cut(envelope + 2 * (eventBytes + 1))).toEqual([2, 2, 1]);
    expect(await cut(envelope + 2 * (eventBytes + 1) - 1)).toEqual([1, 1, 1, 1, 1]);
  });
});

describe('archiving what is routed (issue 13, item 1; docs/REPLAY.md)', () => {
  it('EDU-18, CE-13: the events a batch routes are handed to the archive once, as stored, with their acceptance time, before anything is queued', async () => {
    const archived: { acceptedAt: number; json: string }[][] = [];
    let queuedBeforeArchive = 0;
    const { route, queued } = router(new InMemoryRouteIndex().add(candidate('s-1')), {
      archive: async (events) => {
        queuedBeforeArchive += queued.length;
        archived.push(events.map(({ acceptedAt, event }) => ({ acceptedAt, json: event.json })));
      },
    });
    const report = await route([
      { ...records('e1')[0]!, acceptedAt: NOW - 5 },
      ...records('e2'),
      { recordId: 'r-copy', body: storedEvent('e1') },
    ]);
    expect(report.routed).toBe(2);
    expect(archived).toEqual([
      [
        { acceptedAt: NOW - 5, json: storedEvent('e1') },
        { acceptedAt: NOW, json: storedEvent('e2') },
      ],
    ]);
    expect(queuedBeforeArchive).toBe(0);
  });

  it('ORD-7: each event is archived with its acceptance position, so a replay orders events of one millisecond as the live lanes do', async () => {
    const archived: (number | undefined)[] = [];
    const { route } = router(new InMemoryRouteIndex().add(candidate('s-1')), {
      archive: async (events) => void archived.push(...events.map(({ acceptedPosition }) => acceptedPosition)),
    });
    await route([
      { ...records('e1')[0]!, acceptedAt: NOW, acceptedPosition: NOW * 1000 + 7 },
      { ...records('e2')[0]!, acceptedAt: NOW },
    ]);
    expect(archived).toEqual([NOW * 1000 + 7, undefined]);
  });

  it('EDU-18: a batch whose archive write fails is not routed: its records come back, nothing is queued or read for them, and the retry routes them once', async () => {
    let failing = true;
    const index = new InMemoryRouteIndex().add(candidate('s-1'));
    const { route, queued, ledger } = router(index, {
      archive: async () => {
        if (failing) throw new Error('S3 unavailable');
      },
    });
    const first = await route(records('e1', 'e2'));
    expect([...first.failedRecordIds].sort()).toEqual(['r-e1', 'r-e2']);
    expect(queued).toEqual([]);
    expect(ledger.completed).toEqual([]);
    // Their subscriptions are read when they come back, not now: a read now would be thrown away.
    expect(index.candidateReads).toEqual([]);
    failing = false;
    expect(await route(records('e1', 'e2'))).toMatchObject({ failedRecordIds: [], routed: 2, deliveries: 2 });
  });

  it('EDU-IDEM-15: a duplicate the router drops is not archived again', async () => {
    const archived: string[] = [];
    const { route } = router(new InMemoryRouteIndex().add(candidate('s-1')), {
      archive: async (events) => void archived.push(...events.map(({ event }) => event.id)),
    });
    await route(records('e1'));
    await route(records('e1'));
    expect(archived).toEqual(['e1']);
  });

  it('EDU-IDEM-15: a batch of nothing but duplicates makes no archive write at all', async () => {
    let writes = 0;
    const { route } = router(new InMemoryRouteIndex().add(candidate('s-1')), { archive: async () => void writes++ });
    await route(records('e1'));
    await route(records('e1'));
    expect(writes).toBe(1);
  });

  it('CE-16: a failed archive write is logged with how many events it held and why', async () => {
    const { route, logs } = router(new InMemoryRouteIndex().add(candidate('s-1')), {
      archive: async () => Promise.reject(new Error('S3 unavailable')),
    });
    await route(records('e1', 'e2'));
    expect(logs.filter((l) => l.message === 'events not archived').map((l) => l.fields)).toEqual([
      { events: 2, error: 'S3 unavailable' },
    ]);
  });

  it('review #1: without a log function a failed archive write still sends back just its records, with nothing queued', async () => {
    const { deps, queued } = router(new InMemoryRouteIndex().add(candidate('s-1')), {
      archive: async () => Promise.reject(new Error('S3 unavailable')),
    });
    const { log: _log, ...withoutLog } = deps;
    const report = await routeInboundEvents(
      [...records('e1', 'e2'), { recordId: 'r-junk', body: 'not json' }],
      withoutLog,
    );
    expect([...report.failedRecordIds].sort()).toEqual(['r-e1', 'r-e2', 'r-junk']);
    expect(queued).toEqual([]);
  });
});

describe('what travels with a routed event', () => {
  it("CE-16: the ingest request's correlation id goes into the event's delivery message and its log line; an event without one gets none", async () => {
    const { route, queued, logs } = router(new InMemoryRouteIndex().add(candidate('s-1')));
    await route([{ ...records('e1')[0]!, correlationId: 'corr-1' }, ...records('e2')]);
    const byEvent = new Map(queued.map((m) => [JSON.parse(m.events[0]!).id as string, m]));
    expect(byEvent.get('e1')?.correlationId).toBe('corr-1');
    expect(byEvent.get('e2')).not.toHaveProperty('correlationId');
    expect(
      logs.filter((l) => l.message === 'event routed').map((l) => [l.fields['id'], l.fields['correlationId']]),
    ).toEqual([
      ['e1', 'corr-1'],
      ['e2', undefined],
    ]);
  });

  it("EDU-8: the route keys of a batch's events are read together, in one request where the index can", async () => {
    const other = 'nl.edu.leerling.uitgeschreven.v1';
    const index = new BatchReadingRouteIndex()
      .add(candidate('s-1'))
      .add(candidate('s-2', { match: { types: [other] } }));
    const { route, queued } = router(index);
    await route([...records('e1', 'e2'), { recordId: 'r-e3', body: storedEvent('e3', { type: other }) }]);
    expect(index.batchReads.map((keys) => [...keys].sort())).toEqual([
      ['eq:type|nl.edu.leerling.ingeschreven.v1', `eq:type|${other}`],
    ]);
    expect(index.candidateReads).toEqual([]);
    expect(queued.map((m) => m.subscriptionId).sort()).toEqual(['s-1', 's-1', 's-2']);
  });
});
