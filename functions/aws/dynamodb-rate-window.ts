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
 * client costs one write per request as before while a busy one costs about ten writes per
 * container per minute, however many requests that is. That also keeps one publisher's window
 * item (one DynamoDB partition, about 1,000 writes/s) far from its limit at any rate. A client
 * that was busy in the minute before starts the next with a lease of what it used then, so a
 * steady publisher pays one or two writes per container per minute. The price:
 * slots a container leased and did not use by the end of the minute are lost to that minute, so
 * with many containers a publisher may be refused somewhat before its limit (at most the lease
 * size per container; see docs/PERFORMANCE.md).
 */
import { ConditionalCheckFailedException, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tables } from '../../lib/resources.js';
import type { RateDecision, RateWindow } from '../core/ingest/ports.js';
import { boundedKey, DYNAMODB_LIMITS } from '../core/ids/bounded-key.js';

export type { RateDecision } from '../core/ingest/ports.js';

const WINDOW_MS = 60_000;

/** The largest lease, as a fraction of the limit: what one container may strand at a window's end. */
export const MAX_LEASE_FRACTION = 0.1;

/** Clients whose leases a container remembers; past this the oldest is forgotten (its slots stay unused). */
const MAX_TRACKED_CLIENTS = 10_000;

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
  /** The lease being taken now, which concurrent requests of this client wait for. */
  inFlight?: Promise<void> | undefined;
  /** The window refused even one more slot: refuse until it ends. */
  exhausted: boolean;
}

export class DynamoDbRateWindow implements RateWindow {
  private readonly leases = new Map<string, Lease>();

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
      const taking = this.extend(clientId, lease, limitPerMinute);
      lease.inFlight = taking;
      try {
        await taking;
      } finally {
        lease.inFlight = undefined;
      }
    }
  }

  /** Reserves the next lease in DynamoDB, falling back to a single slot when the window has less room. */
  private async extend(clientId: string, lease: Lease, limit: number): Promise<void> {
    const largest = Math.max(1, Math.floor(limit * MAX_LEASE_FRACTION));
    const size = Math.min(lease.next, largest, limit);
    if (await this.reserve(clientId, lease.windowStart, size, limit)) {
      lease.remaining += size;
      lease.next = Math.min(size * 2, largest);
    } else if (size > 1 && (await this.reserve(clientId, lease.windowStart, 1, limit))) {
      lease.remaining += 1;
      lease.next = 1;
    } else {
      lease.exhausted = true;
    }
  }

  private async reserve(clientId: string, windowStart: number, slots: number, limit: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          // A client id comes from a token and may be long: bounded like every key built from input.
          Key: { [tables.idempotency.partitionKey.name]: { S: boundedKey('rate', [clientId, String(windowStart)], DYNAMODB_LIMITS.partitionKeyBytes) } },
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
      lease = { windowStart, remaining: 0, next, used: 0, exhausted: false };
      this.leases.delete(clientId);
      this.leases.set(clientId, lease);
      while (this.leases.size > MAX_TRACKED_CLIENTS) this.leases.delete(this.leases.keys().next().value as string);
    }
    return lease;
  }
}
