/**
 * Issue 30 item 1, the pure parts of the event trace: who sees which part of a trace
 * (core/trace/event-trace.ts), the delivery state derived from attempts and dead letters, the
 * 202's `duplicate` (core/http/accepted-answer.ts), and what the router hands the ledger for the
 * trace — the acceptance with the claim, the routing with the completion, a dropped duplicate's
 * note — with in-memory stores (../routing/routing-fakes.ts).
 */
import { describe, expect, it } from 'vitest';
import { scopes, type Principal } from '../../../functions/core/auth/access-tokens.js';
import type { AttemptRecord } from '../../../functions/core/delivery/delivery-records.js';
import { queueOutbox } from '../../../functions/core/delivery-message/outbox.js';
import { acceptedAnswer, MAX_ACCEPTED_ANSWER_BYTES } from '../../../functions/core/http/accepted-answer.js';
import { KoerierError } from '../../../functions/core/http/problems.js';
import { SubscriptionMatcher } from '../../../functions/core/routing/matcher.js';
import { routeInboundEvents } from '../../../functions/core/routing/route-events.js';
import type { EventIdentity } from '../../../functions/core/routing/routed-events.js';
import type { Subscription } from '../../../functions/core/subscriptions/subscription.js';
import type { EventDeliveries } from '../../../functions/core/trace/event-deliveries.js';
import { deliveryStateOf, traceEvent, type EventTraceDependencies } from '../../../functions/core/trace/event-trace.js';
import type { RoutedEventRecord } from '../../../functions/core/trace/routed-event-records.js';
import {
  candidate,
  entitledOwners,
  InMemoryLedger,
  InMemoryRouteIndex,
  SOURCE,
  storedEvent,
} from '../routing/routing-fakes.js';

const NOW = Date.UTC(2026, 10, 29, 12);
const EVENT = { source: SOURCE, id: 'e-1' };
const KEY = '0b7c6c8e-4f0a-4d7e-9c55-7a1d2f3e4b5c';
const RECORD: RoutedEventRecord = {
  state: 'routed',
  acceptance: { acceptedAt: NOW - 5000, publisher: 'school-lvs', idempotencyKey: KEY, correlationId: 'c-1' },
  routing: { routedAt: NOW - 4000, count: 3, subscriptionIds: ['push-a', 'pull-p', 'push-b'] },
  duplicates: { count: 1, latest: { acceptedAt: NOW - 1000, publisher: 'school-lvs', idempotencyKey: 'k-2' } },
};
const SUBSCRIPTIONS: Record<string, Pick<Subscription, 'id' | 'owner' | 'delivery'>> = {
  'push-a': { id: 'push-a', owner: 'vendor-a', delivery: 'push' },
  'pull-p': { id: 'pull-p', owner: 'school-lvs', delivery: 'pull' },
  'push-b': { id: 'push-b', owner: 'vendor-b', delivery: 'push' },
};

function attempt(outcome: AttemptRecord['outcome'], at: string, n = 1): AttemptRecord {
  return { subscriptionId: 'push-a', deliveryId: 'd-1', attempt: n, at, outcome, latencyMs: 3, status: 204 };
}

function deps(record: RoutedEventRecord | undefined = RECORD): EventTraceDependencies & { read: string[] } {
  const read: string[] = [];
  return {
    read,
    routedEvents: { read: async (event: EventIdentity) => (event.id === EVENT.id ? record : undefined) },
    deliveries: {
      deliveriesOf: async (id): Promise<EventDeliveries> => {
        read.push(id);
        return {
          attempts: id === 'pull-p' ? [] : [attempt('delivered', new Date(NOW - 3000).toISOString())],
          deadLetters: [],
          complete: true,
        };
      },
    },
    subscriptions: { get: async (id) => SUBSCRIPTIONS[id] as Subscription | undefined },
    now: () => NOW,
  };
}

const as = (clientId: string, ...granted: string[]): Principal => ({ clientId, scopes: new Set(granted) });

async function notFound(work: Promise<unknown>): Promise<number | undefined> {
  try {
    await work;
    return undefined;
  } catch (error) {
    return error instanceof KoerierError ? error.problem.status : undefined;
  }
}

describe('who sees which part of a trace (issue 30 item 1)', () => {
  it('SELF-1, issue 30 item 1: the publisher sees the acceptance, the duplicates and the routed count, but only its own subscriptions', async () => {
    const trace = await traceEvent(EVENT, as('school-lvs', scopes.publish), deps());
    expect(trace.accepted).toEqual({
      at: new Date(NOW - 5000).toISOString(),
      publisher: 'school-lvs',
      idempotencyKey: KEY,
      correlationId: 'c-1',
    });
    expect(trace.duplicates).toMatchObject({ count: 1, latest: { idempotencyKey: 'k-2' } });
    expect(trace.routed).toEqual({ at: new Date(NOW - 4000).toISOString(), subscriptionCount: 3 });
    expect(trace.subscriptions.map((s) => [s.id, s.state])).toEqual([['pull-p', 'queued']]);
  });

  it("SELF-1, issue 30 item 1: a subscriber sees its own subscription only, and none of the publisher's details", async () => {
    const seen = deps();
    const trace = await traceEvent(EVENT, as('vendor-a', scopes.readSubscriptions), seen);
    expect(trace.subscriptions.map((s) => [s.id, s.state, s.attemptCount])).toEqual([['push-a', 'delivered', 1]]);
    expect(trace.accepted).toEqual({ at: new Date(NOW - 5000).toISOString(), correlationId: 'c-1' });
    expect(trace).not.toHaveProperty('duplicates');
    expect(trace.routed).not.toHaveProperty('subscriptionCount');
    // Another owner's deliveries are not even read.
    expect(seen.read).toEqual(['push-a']);
  });

  it('SELF-1, issue 30 item 1: an operator sees every routed subscription', async () => {
    const trace = await traceEvent(EVENT, as('ops', scopes.admin), deps());
    expect(trace.subscriptions.map((s) => s.id)).toEqual(['push-a', 'pull-p', 'push-b']);
    expect(trace.routed?.subscriptionCount).toBe(3);
  });

  it('SELF-1, issue 30 item 1: a stranger gets the 404 of an unknown event', async () => {
    expect(await notFound(traceEvent(EVENT, as('stranger', scopes.readSubscriptions, scopes.publish), deps()))).toBe(
      404,
    );
    expect(await notFound(traceEvent({ ...EVENT, id: 'other' }, as('school-lvs', scopes.publish), deps()))).toBe(404);
  });
});

describe('the delivery state of a traced subscription (issue 30 item 1)', () => {
  const at = (s: number) => new Date(NOW + s * 1000).toISOString();
  it('SELF-1, issue 30 item 1: the newest attempt or dead letter decides; nothing yet is pending (push) or queued (pull)', () => {
    expect(deliveryStateOf('push', [], [])).toBe('pending');
    expect(deliveryStateOf('pull', [], [])).toBe('queued');
    expect(deliveryStateOf('push', [attempt('retrying', at(1))], [])).toBe('retrying');
    expect(deliveryStateOf('push', [attempt('retrying', at(1)), attempt('dead-lettered', at(2), 2)], [])).toBe(
      'dead-lettered',
    );
    expect(deliveryStateOf('pull', [], [{ deadLetteredAt: at(3) }])).toBe('dead-lettered');
    // Redriven after the dead letter and delivered.
    expect(deliveryStateOf('push', [attempt('delivered', at(5))], [{ deadLetteredAt: at(3) }])).toBe('delivered');
  });
});

describe("the 202's duplicate (issue 30 item 1)", () => {
  it('SELF-1, issue 30 item 1: an event accepted before is marked duplicate and counted; the others are not', () => {
    const answer = acceptedAnswer(
      [
        { source: SOURCE, id: 'seen' },
        { source: SOURCE, id: 'new' },
      ],
      [],
      (event) => event.id === 'seen',
    );
    expect(answer).toEqual({
      acceptedCount: 2,
      accepted: [
        { source: SOURCE, id: 'seen', duplicate: true },
        { source: SOURCE, id: 'new' },
      ],
      duplicateCount: 1,
    });
  });

  it('SELF-1, issue 30 item 1, review #11: with every event a duplicate the answer stays within its budget', () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({ source: 'x'.repeat(300), id: `${'y'.repeat(200)}${i}` }));
    const answer = acceptedAnswer(events, [], () => true);
    expect(Buffer.byteLength(JSON.stringify(answer))).toBeLessThanOrEqual(MAX_ACCEPTED_ANSWER_BYTES);
    expect(answer.duplicateCount).toBe(1000);
    expect(answer.accepted.length + (answer.acceptedNotListed ?? 0)).toBe(1000);
  });
});

describe('what the router keeps for the trace (issue 30 item 1)', () => {
  function routerDeps(ledger: InMemoryLedger) {
    const index = new InMemoryRouteIndex().add(candidate('s-1')).add(candidate('s-2', { owner: 'client-b' }));
    return {
      matcher: new SubscriptionMatcher(index),
      ledger,
      entitlements: entitledOwners((owner) => owner !== 'client-b'),
      outbox: queueOutbox({ deliveryQueue: { send: async () => {} }, pullQueues: { send: async () => {} } }),
      now: () => NOW,
      lockMs: 10_000,
      ttlSeconds: 3600,
      maxMessageBytes: 200_000,
    };
  }
  const record = (id: string, key: string, acceptedAt: number) => ({
    recordId: `r-${id}-${key}`,
    body: storedEvent(id),
    acceptedAt,
    publisher: 'school-lvs',
    idempotencyKey: key,
    correlationId: 'c-1',
  });

  it('SELF-1, issue 30 item 1: the claim carries the acceptance, the completion the subscriptions it was queued for (after the entitlement check)', async () => {
    const ledger = new InMemoryLedger();
    await routeInboundEvents([record('e-1', 'k-1', NOW - 50)], routerDeps(ledger));
    expect(ledger.claims[0]!.options.acceptance).toEqual({
      acceptedAt: NOW - 50,
      publisher: 'school-lvs',
      idempotencyKey: 'k-1',
      correlationId: 'c-1',
    });
    expect(ledger.routes.get('e-1')).toEqual({ routedAt: NOW, subscriptionIds: ['s-1'] });
  });

  it('SELF-1, issue 30 item 1, EDU-IDEM-15: a later acceptance is dropped and noted; the same acceptance delivered again by SQS is not', async () => {
    const ledger = new InMemoryLedger();
    ledger.markRouted({ source: SOURCE, id: 'e-1' }, { acceptedAt: NOW - 50, idempotencyKey: 'k-1' });
    const report = await routeInboundEvents([record('e-1', 'k-1', NOW - 50)], routerDeps(ledger));
    expect(report.duplicates).toBe(1);
    expect(ledger.duplicatesNoted).toEqual([]);
    await routeInboundEvents([record('e-1', 'k-2', NOW - 10)], routerDeps(ledger));
    expect(ledger.duplicatesNoted.map((d) => d.acceptance.idempotencyKey)).toEqual(['k-2']);
  });
});
