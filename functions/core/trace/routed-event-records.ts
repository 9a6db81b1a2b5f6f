/**
 * What the routed-event ledger (core/routing/routed-events.ts) tells about one event, read back for
 * the event trace and the ingest's `duplicate` (issue 30 item 1). Everything here is written by
 * writes the router already makes: the acceptance with the claim, the routing with the write that
 * marks it routed (the batch's commit). Only a dropped duplicate costs a write of its own.
 */
import type { EventAcceptance, EventIdentity } from '../routing/routed-events.js';

export interface RoutedEventRecord {
  /** `routing`: claimed and not (yet) marked routed — being routed now, or to be routed again after a failure. */
  readonly state: 'routing' | 'routed';
  /** Absent on markers written before issue 30. */
  readonly acceptance?: EventAcceptance;
  /** Where the routing went, once routed; absent before, and on markers written before issue 30. */
  readonly routing?: RecordedRouting;
  /** Later acceptances dropped as duplicates of this one (EDU-IDEM-15): how many, and the latest. */
  readonly duplicates?: { readonly count: number; readonly latest?: EventAcceptance };
}

export interface RecordedRouting {
  /** Epoch ms the deliveries were planned. */
  readonly routedAt: number;
  /** How many subscriptions it was queued for. */
  readonly count: number;
  /**
   * Which: absent when the event went to more than fit the commit's share (ROUTES_KEPT_BYTES in the
   * DynamoDB ledger), so a commit item stays far below DynamoDB's 400 KB.
   */
  readonly subscriptionIds?: readonly string[];
}

export interface RoutedEventReader {
  /** The event's marker as of `now` (epoch ms); undefined when absent or past the idempotency window. */
  read(event: EventIdentity, now: number): Promise<RoutedEventRecord | undefined>;
  /**
   * Which of `events` were accepted before (a live marker), by `routedEventKey`. One batched read
   * per hundred events; best effort: a key the store leaves unprocessed counts as not seen.
   */
  acceptedAmong(events: readonly EventIdentity[], now: number): Promise<ReadonlySet<string>>;
}
