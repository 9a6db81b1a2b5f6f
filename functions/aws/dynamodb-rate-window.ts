/**
 * Requests per client per minute (WH-7, EDU-20: per producer, not per IP address), counted in a
 * fixed one-minute window item per client in the `idempotency` table, whose TTL removes old
 * windows. This is the accurate limit, shared by every container; a refusal is also told to
 * `onRefused`, so the container's own throttle (functions/core/throttling) can refuse the client
 * until the window ends without another write.
 *
 * Slots are leased, not taken one by one (issue 15): a container reserves `n` slots of the window
 * with one conditional UpdateItem (`count + n <= limit`) and hands them out from memory. The
 * window never admits more than the limit, whatever the number of containers, because every slot
 * is counted in DynamoDB before it is used. A lease starts at one slot in each window and doubles
 * with each lease the container takes in that window, up to a tenth of the limit, so a quiet
 * client costs one write per request as before. A client that was busy in the minute before
 * starts the next with a lease of what it used then, so a steady publisher pays one or two writes
 * per container per minute. That also keeps one publisher's window item (one DynamoDB partition,
 * about 1,000 writes/s) far from its limit at any rate.
 *
 * A busy client need not climb the doubling one write at a time: once a lease of at least
 * `RATE_SAMPLE_SLOTS` ran out on a clock that moved, the next is sized to the rate it ran out at,
 * for `LEASE_HORIZON_MS` or what is left of the window if less (never below the doubling, never
 * above the cap). A burst of hundreds of requests a second then pays its leases in the first tens
 * of milliseconds and none after, where the doubling paid one per doubling all through it (the
 * ingest bench's rounds of 1,500 requests: 4 writes before, none now but at a minute boundary).
 * The cap is unchanged, so the bound of the price is too: slots a container leased and did not
 * use by the end of the minute are lost to that minute, so with many containers a publisher may
 * be refused somewhat before its limit (at most the cap per container; see docs/PERFORMANCE.md).
 * What changes is how soon a burst reaches the cap, so a burst that stops just after a lease may
 * strand up to the cap where the doubling would have stranded less; a lease late in the minute
 * reaches only to its end.
 *
 * A publisher allowed more than RATE_SLOTS_PER_SHARD a minute has its window split over that many
 * more items (issue 35, no hot keys): at 10,000 requests a second some 700 containers each take a
 * few leases in their first second, 2,800 writes on one item where a partition takes 1,000. Each
 * item holds its share of the limit; a container starts at a shard of its own and moves to the
 * next when one is full, so the publisher is refused only when every shard is. A publisher at the
 * default limit keeps its one item, under the key it always had.
 */
import { ConditionalCheckFailedException, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tables } from '../config/resources.js';
import type { RateDecision, RateWindow } from '../core/ingest/ports.js';
import { boundedKey, DYNAMODB_LIMITS } from '../core/ids/bounded-key.js';

export type { RateDecision } from '../core/ingest/ports.js';

const WINDOW_MS = 60_000;

/** The largest lease, as a fraction of the limit: what one container may strand at a window's end. */
export const MAX_LEASE_FRACTION = 0.1;

/** How far ahead a lease sized to the observed rate reaches: writes per container per minute at a steady rate are about 60 s / this. */
export const LEASE_HORIZON_MS = 10_000;

/** The smallest spent lease whose duration is taken as a rate: one or two requests a few ms apart say nothing about the next ten seconds. */
const RATE_SAMPLE_SLOTS = 16;

/** Clients whose leases a container remembers; past this the oldest is forgotten (its slots stay unused). */
const MAX_TRACKED_CLIENTS = 10_000;

/** A window item's share of a limit: 1,000 requests a second, the writes one partition takes. */
export const RATE_SLOTS_PER_SHARD = 60_000;

/** How many items a window of this limit is spread over. */
export function rateShardsOf(limitPerMinute: number): number {
  return Math.max(1, Math.ceil(limitPerMinute / RATE_SLOTS_PER_SHARD));
}

export interface RateWindowOptions {
  /** Told when a client is refused, with the end of the window (epoch ms) that refused it. */
  readonly onRefused?: (clientId: string, windowEndMs: number) => void;
  /** Decides which minute a request counts in (epoch ms; default `Date.now`); tests pass their own. */
  readonly clock?: () => number;
}

interface Lease {
  readonly windowStart: number;
  /** Slots leased in this window and not handed out yet. */
  remaining: number;
  /** The size of the next lease. */
  next: number;
  /** Slots handed out in this window: where the next window's first lease starts. */
  used: number;
  /** The size and grant time of the last lease, whose running out gives the observed rate. */
  lastSize: number;
  grantedAt: number;
  /** The lease being taken now, which concurrent requests of this client wait for. */
  inFlight?: Promise<void> | undefined;
  /** The window had less room than a lease: the rest of it is leased by the doubling only, as the rate says nothing about the room. */
  crowded: boolean;
  /** The window refused even one more slot: refuse until it ends. */
  exhausted: boolean;
  /** Shards of the window this container found full (it leases from the next one). */
  shardsFull: number;
}

export class DynamoDbRateWindow implements RateWindow {
  private readonly leases = new Map<string, Lease>();
  /** Where this container starts in a sharded window, so containers spread over its items. */
  private readonly shardOffset = Math.floor(Math.random() * 1_000_000);

  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly options: RateWindowOptions = {},
  ) {}

  async take(clientId: string, limitPerMinute: number): Promise<RateDecision> {
    for (;;) {
      const now = (this.options.clock ?? Date.now)();
      const lease = this.leaseOf(clientId, now);
      if (lease.remaining > 0) {
        lease.remaining--;
        lease.used++;
        return { allowed: true };
      }
      if (lease.exhausted) return this.refused(clientId, lease, now);
      if (lease.inFlight) {
        await lease.inFlight;
        continue;
      }
      const taking = this.extend(clientId, lease, limitPerMinute, now);
      lease.inFlight = taking;
      try {
        await taking;
      } finally {
        lease.inFlight = undefined;
      }
    }
  }

  /** Reserves the next lease in DynamoDB, falling back to a single slot when the window has less room. */
  private async extend(clientId: string, lease: Lease, limit: number, now: number): Promise<void> {
    const shards = rateShardsOf(limit);
    const shard = (this.shardOffset + lease.shardsFull) % shards;
    // Shard 0 takes the remainder, so the shares add up to the limit exactly.
    const share = Math.floor(limit / shards) + (shard < limit % shards ? 1 : 0);
    const largest = Math.max(1, Math.floor(share * MAX_LEASE_FRACTION));
    const size = Math.min(Math.max(lease.next, this.rateSized(lease, now)), largest, share);
    if (await this.reserve(clientId, lease.windowStart, shard, size, share)) {
      lease.remaining += size;
      lease.next = Math.min(size * 2, largest);
      lease.lastSize = size;
      lease.grantedAt = now;
    } else if (size > 1 && (await this.reserve(clientId, lease.windowStart, shard, 1, share))) {
      lease.crowded = true;
      lease.remaining += 1;
      lease.next = 1;
      lease.lastSize = 1;
      lease.grantedAt = now;
    } else if (lease.shardsFull + 1 < shards) {
      lease.shardsFull++;
      lease.crowded = false;
      lease.next = 1;
      lease.lastSize = 0;
    } else {
      lease.exhausted = true;
    }
  }

  /**
   * The slots the client will use in the next `LEASE_HORIZON_MS` (or the rest of the window) at the
   * rate its last lease ran out at; 0 when that lease was too small, the clock did not move, or the
   * window has less room left than the leases it would size.
   */
  private rateSized(lease: Lease, now: number): number {
    const spentIn = now - lease.grantedAt;
    if (lease.crowded || lease.lastSize < RATE_SAMPLE_SLOTS || spentIn <= 0) return 0;
    const ahead = Math.min(LEASE_HORIZON_MS, lease.windowStart + WINDOW_MS - now);
    return Math.ceil((lease.lastSize / spentIn) * ahead);
  }

  private async reserve(
    clientId: string,
    windowStart: number,
    shard: number,
    slots: number,
    limit: number,
  ): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          // A client id comes from a token and may be long: bounded like every key built from input.
          Key: {
            [tables.idempotency.partitionKey.name]: {
              S: boundedKey(
                'rate',
                [clientId, String(windowStart), ...(shard === 0 ? [] : [String(shard)])],
                DYNAMODB_LIMITS.partitionKeyBytes,
              ),
            },
          },
          UpdateExpression: 'ADD #count :slots SET #ttl = if_not_exists(#ttl, :expires)',
          ConditionExpression: 'attribute_not_exists(#count) OR #count <= :room',
          ExpressionAttributeNames: { '#count': 'requests', '#ttl': tables.idempotency.ttlAttribute },
          ExpressionAttributeValues: {
            ':slots': { N: String(slots) },
            ':room': { N: String(limit - slots) },
            ':expires': { N: String(Math.ceil((windowStart + WINDOW_MS) / 1000) + 60) },
          },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  private refused(clientId: string, lease: Lease, now: number): RateDecision {
    const windowEnd = lease.windowStart + WINDOW_MS;
    this.options.onRefused?.(clientId, windowEnd);
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)) };
  }

  /** This container's lease of `clientId` for the window `now` falls in; a new window starts empty. */
  private leaseOf(clientId: string, now: number): Lease {
    const windowStart = now - (now % WINDOW_MS);
    let lease = this.leases.get(clientId);
    if (lease?.windowStart !== windowStart) {
      // A client as busy as in the minute before starts with a lease of what it used then (capped in `extend`).
      const next = lease?.windowStart === windowStart - WINDOW_MS ? Math.max(1, lease.used) : 1;
      lease = {
        windowStart,
        remaining: 0,
        next,
        used: 0,
        lastSize: 0,
        grantedAt: now,
        crowded: false,
        exhausted: false,
        shardsFull: 0,
      };
      this.leases.delete(clientId);
      this.leases.set(clientId, lease);
      while (this.leases.size > MAX_TRACKED_CLIENTS) this.leases.delete(this.leases.keys().next().value as string);
    }
    return lease;
  }
}
