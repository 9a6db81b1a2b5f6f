/**
 * The router (EDU-8, EDU-IDEM-9, EDU-IDEM-15): for each accepted event, drop it if its
 * `source` + `id` was routed before within the idempotency window, find every routable
 * subscription that matches it, and queue one delivery per match, each with its own UUIDv4 key
 * fixed here. Subscriptions that take batches (and whose target declared it can, JSON-3) get the
 * events of one router invocation that match them together in one delivery (EDU-11).
 *
 * Order of effects per event: claim the marker, queue the deliveries, then mark it routed (one
 * write for the batch's events where the ledger can: settle-claims.ts). If queueing fails the
 * claim is released and the event is reported as failed, so SQS brings it back and it is routed
 * again — with the same delivery keys for the same payloads (`deliveryIdOf`).
 *
 * Every record is settled on its own (issue 8, item 1): a record that cannot be read, whose
 * marker cannot be written, whose subscriptions cannot be read or whose deliveries cannot be
 * queued is reported failed alone; the rest of the batch is routed. Only the events of one batch
 * delivery share a fate, as they travel in one message. What fails the whole call is what no
 * record can do without: reading the route index's state (`refresh`).
 *
 * Which deliveries the claimed events make is the plan's (delivery-plan.ts); here they are claimed,
 * queued and settled.
 */
import type { Clock } from '../ports/clock.js';
import type { Log } from '../ports/log.js';
import { errorMessage } from '../errors/describe-error.js';
import { EventText } from '../cloudevents/event-text.js';
import type { Outbox } from '../delivery-message/outbox.js';
import type { Entitlements } from '../subscriptions/entitlements.js';
import type { SubscriptionMatcher } from './matcher.js';
import { archiveClaimed, type ArchiveBatch } from './archive-step.js';
import {
  routedEventKey,
  type EventAcceptance,
  type RoutedEventLedger,
  type RoutedTo,
  type RoutingClaim,
} from './routed-events.js';
import { settleClaims } from './settle-claims.js';
import { correlationOf, planDeliveries, type PlannedDelivery, type PlannedEvent } from './delivery-plan.js';

export interface InboundRecord {
  /** The SQS message id: what a partial batch failure names. */
  readonly recordId: string;
  /** The stored event, JSON event format. */
  readonly body: string;
  /** Epoch ms the ingest accepted it (the archive's order, docs/REPLAY.md); default: now. */
  readonly acceptedAt?: number;
  /** The event's place in acceptance order (core/ordering/acceptance-position.ts); absent: appended as routed. */
  readonly acceptedPosition?: number | undefined;
  /** The ingest request's correlation id (core/ids/correlation-id.ts), carried into the deliveries. */
  readonly correlationId?: string | undefined;
  /** The client that published it, and the publish request's Idempotency-Key: kept on the marker for the trace. */
  readonly publisher?: string | undefined;
  readonly idempotencyKey?: string | undefined;
}

export interface RouterDependencies {
  readonly matcher: SubscriptionMatcher;
  readonly ledger: RoutedEventLedger;
  /** The owners' entitlements as the partner directory has them now: `mayReceive` checks each match (EDU-7). */
  readonly entitlements: Entitlements;
  /** Where the deliveries go: the deliveries queue, or a pull subscription's own (docs/PULL.md). */
  readonly outbox: Outbox;
  readonly now: Clock;
  /** How long a claim blocks another attempt: above the router's timeout. */
  readonly lockMs: number;
  /** The idempotency window (EDU-IDEM-7). */
  readonly ttlSeconds: number;
  /** Largest delivery message body; a batch delivery is cut before it exceeds this. */
  readonly maxMessageBytes: number;
  /** Keeps the events this batch routes, before anything is queued (archive-step.ts). Absent: no archive. */
  readonly archive?: ArchiveBatch;
  readonly log?: Log;
}

export interface RoutingReport {
  /** Records SQS should deliver again. */
  readonly failedRecordIds: readonly string[];
  readonly routed: number;
  readonly duplicates: number;
  readonly deliveries: number;
}

interface ClaimedEvent extends PlannedEvent {
  readonly record: InboundRecord;
  readonly claimId: string;
}

export async function routeInboundEvents(
  records: readonly InboundRecord[],
  deps: RouterDependencies,
): Promise<RoutingReport> {
  const failed = new Set<string>();
  let duplicates = 0;
  await deps.matcher.refresh();

  // A repeat within the batch shares the fate of its first copy: dropped if that one is routed.
  const firsts = new Map<string, { record: InboundRecord; event: EventText }>();
  const repeats: { recordId: string; firstId: string }[] = [];
  for (const record of records) {
    const event = new EventText(record.body);
    try {
      // Its attributes are read here, once (issue 29, item 4): what cannot be read fails this record alone.
      void event.attributes;
    } catch {
      // Not an event Koerier stored: let redrive move it to the dead-letter queue.
      deps.log?.info('inbound record unreadable', { recordId: record.recordId });
      failed.add(record.recordId);
      continue;
    }
    const first = firsts.get(routedEventKey(event));
    if (first) repeats.push({ recordId: record.recordId, firstId: first.record.recordId });
    else firsts.set(routedEventKey(event), { record, event });
  }

  const claimed: ClaimedEvent[] = [];
  // One ledger for this invocation where the ledger can mark its claims routed together.
  const ledger = deps.ledger.batch?.();
  await Promise.all(
    [...firsts.values()].map(async ({ record, event }) => {
      let claim: RoutingClaim;
      try {
        claim = await (ledger ?? deps.ledger).claim(event, {
          now: deps.now(),
          lockMs: deps.lockMs,
          ttlSeconds: deps.ttlSeconds,
          acceptance: acceptanceOf(record, deps),
        });
      } catch (error) {
        // This record's marker could not be written: it alone comes back; its neighbours go on.
        deps.log?.info('routing claim not written', { source: event.source, id: event.id, error: errorMessage(error) });
        failed.add(record.recordId);
        return;
      }
      if (claim.outcome === 'duplicate') {
        duplicates++;
        deps.log?.info('duplicate event dropped', {
          source: event.source,
          id: event.id,
          type: event.type,
          ...correlationOf(record),
        });
        await noteDuplicate(record, event, claim.first, deps);
      } else if (claim.outcome === 'busy') {
        failed.add(record.recordId);
      } else {
        claimed.push({ record, event, claimId: claim.claimId, routingId: claim.routingId });
      }
    }),
  );

  await archiveClaimed(claimed, failed, deps);
  // A batch whose archive write failed comes back whole, and its subscriptions are read on the retry.
  const archived = claimed.filter((entry) => !failed.has(entry.record.recordId));
  // In the records' order, which the lanes of ordered subscriptions keep (claims complete in any order).
  const position = new Map(records.map((record, index) => [record.recordId, index]));
  archived.sort((a, b) => position.get(a.record.recordId)! - position.get(b.record.recordId)!);
  // The route keys of the whole batch in one read where the index can; what that misses, `match` reads per key.
  await deps.matcher.prefetch(archived.map((entry) => entry.event.attributes));
  const matches = await Promise.all(
    archived.map(async (entry) => {
      try {
        return await deps.matcher.match(entry.event.attributes);
      } catch (error) {
        deps.log?.info('subscriptions not read', {
          source: entry.event.source,
          id: entry.event.id,
          error: errorMessage(error),
        });
        failed.add(entry.record.recordId);
        return [];
      }
    }),
  );
  const routes = new Map<string, RoutedTo>();
  const plan = planDeliveries(
    archived.filter((entry) => !failed.has(entry.record.recordId)),
    matches.filter((_, index) => !failed.has(archived[index]!.record.recordId)),
    deps,
    routes,
  );
  const queued = await queueDeliveries(plan, failed, deps);

  const settled = claimed.map((entry) => {
    const routedTo = routes.get(entry.record.recordId);
    return routedTo === undefined ? entry : { ...entry, routes: routedTo };
  });
  const routed = await settleClaims(settled, failed, deps.ledger, ledger, deps.log);
  for (const { recordId, firstId } of repeats) {
    if (failed.has(firstId)) failed.add(recordId);
    else duplicates++;
  }
  return { failedRecordIds: [...failed], routed, duplicates, deliveries: queued };
}

/**
 * Queues the plan in one call (SQS batches of ten). If that fails, it tries once more one delivery
 * per call, so a delivery SQS will not take fails only the records it carries, never its
 * neighbours. Deliveries the first call did store are stored again, with the same key: the
 * delivery function sends them again and the target recognises the key (EDU-IDEM-9), as after
 * any retry of a record. Returns how many deliveries are queued; adds the failed records to `failed`.
 */
async function queueDeliveries(
  plan: readonly PlannedDelivery[],
  failed: Set<string>,
  deps: RouterDependencies,
): Promise<number> {
  if (plan.length === 0) return 0;
  try {
    // One call per queue (the outbox picks them): the deliveries queue, and each pull subscription's own.
    await deps.outbox.enqueueAll(plan);
    return plan.length;
  } catch (error) {
    deps.log?.info('deliveries not queued together; queueing them one by one', {
      deliveries: plan.length,
      error: errorMessage(error),
    });
  }
  const sent = await Promise.all(
    plan.map(async (delivery) => {
      try {
        await deps.outbox.enqueue(delivery.subscription, [delivery.message]);
        return true;
      } catch (error) {
        deps.log?.info('delivery not queued', { events: delivery.recordIds.length, error: errorMessage(error) });
        for (const recordId of delivery.recordIds) failed.add(recordId);
        return false;
      }
    }),
  );
  return sent.filter(Boolean).length;
}

/** What the marker keeps of the record's acceptance; the router's now stands in for a message from elsewhere. */
function acceptanceOf(record: InboundRecord, deps: Pick<RouterDependencies, 'now'>): EventAcceptance {
  return {
    acceptedAt: record.acceptedAt ?? deps.now(),
    publisher: record.publisher,
    idempotencyKey: record.idempotencyKey,
    correlationId: record.correlationId,
  };
}

/**
 * A later acceptance of a routed event is counted on its marker for the trace ("duplicate of"). The
 * same acceptance coming back (SQS delivers a message twice, a takeover queues it again) is no new
 * one. A failure only loses the note: the event is dropped either way (EDU-IDEM-15).
 */
async function noteDuplicate(
  record: InboundRecord,
  event: EventText,
  first: EventAcceptance | undefined,
  deps: RouterDependencies,
): Promise<void> {
  if (!deps.ledger.noteDuplicate) return;
  const acceptance = acceptanceOf(record, deps);
  if (first && first.acceptedAt === acceptance.acceptedAt && first.idempotencyKey === acceptance.idempotencyKey) return;
  await deps.ledger
    .noteDuplicate(event, acceptance)
    .catch((error: unknown) =>
      deps.log?.info('duplicate not noted', { source: event.source, id: event.id, error: errorMessage(error) }),
    );
}
