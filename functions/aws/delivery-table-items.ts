/**
 * The items of the `deliveries` table, as `dynamodb-delivery-state.ts` reads and writes them:
 * their keys, the target item's attributes, and the list cursors.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { tables } from '../config/resources.js';
import { InvalidPageCursorError, type DeadLetter } from '../core/delivery/delivery-records.js';
import type { TargetState } from '../core/delivery/target-health.js';

export type Item = Record<string, AttributeValue>;

export const PK = tables.deliveries.partitionKey.name;
export const SK = tables.deliveries.sortKey.name;
export const TARGET = 'target';
export const PROGRESS = 'progress#';
export const ATTEMPT = 'attempt#';
export const DEAD = 'dead#';
export const PARTITION_PREFIX = 'sub#';

export function partition(subscriptionId: string): string {
  return `${PARTITION_PREFIX}${subscriptionId}`;
}

/**
 * Partitions one subscription's attempt packs are written over (issue 35, no hot keys). A pack of
 * ten attempts costs about 3 write units, so a subscriber receiving 10,000 events a second writes
 * about 3,000 units a second of history, three times what one DynamoDB partition serves (1,000);
 * the time-ordered sort keys keep every write at the end of one key range, which adaptive capacity
 * cannot split. Spread over 8 partitions, one subscriber takes 26,000 deliveries a second before
 * its history is throttled. Shard 0 is the subscription's own partition, where packs written
 * before the spread still are and are still read.
 */
export const ATTEMPT_SHARDS = 8;

export function attemptPartition(subscriptionId: string, shard: number): string {
  return shard === 0 ? partition(subscriptionId) : `${partition(subscriptionId)}#attempts#${shard}`;
}

/** The shard of a pack, from its sort key (FNV-1a): stable, and even over packs of one instant. */
export function attemptShardOf(sortKey: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < sortKey.length; i++) hash = Math.imul(hash ^ sortKey.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % ATTEMPT_SHARDS;
}

export function key(subscriptionId: string, sortKey: string): Item {
  return { [PK]: { S: partition(subscriptionId) }, [SK]: { S: sortKey } };
}

/** Zero-padded creation time first, so the listing runs oldest delivery first. */
export function deadLetterSortKey(deadLetter: Pick<DeadLetter, 'deliveryId' | 'createdAt'>): string {
  return `${DEAD}${String(deadLetter.createdAt).padStart(15, '0')}#${deadLetter.deliveryId}`;
}

export function num(value: number): AttributeValue {
  return { N: String(value) };
}

export function targetOf(item: Item): TargetState {
  const number = (name: string) => (item[name]?.N === undefined ? undefined : Number(item[name]!.N));
  const throttleRate = number('throttleRate');
  const throttleSince = number('throttleSince');
  const optional = {
    nextSendAt: number('nextSendAt'),
    lastFailureAt: number('lastFailureAt'),
    failingSince: number('failingSince'),
    probeUntil: number('probeUntil'),
    failedProbes: number('failedProbes'),
    throttle:
      throttleRate === undefined || throttleSince === undefined
        ? undefined
        : { ratePerMinute: throttleRate, since: throttleSince },
  };
  return {
    consecutiveFailures: number('consecutiveFailures') ?? 0,
    ...(Object.fromEntries(
      Object.entries(optional).filter(([, value]) => value !== undefined),
    ) as Partial<TargetState>),
  };
}

/**
 * The partition travels in the cursor: a cursor never pages through another subscription. `skip`:
 * the page ended inside this item, an attempt pack (./dynamodb-attempt-history.ts), after that many
 * of its attempts.
 */
export function encodeCursor(lastKey: Item, skip?: number): string {
  return Buffer.from(
    JSON.stringify({ pk: lastKey[PK]?.S, sk: lastKey[SK]?.S, ...(skip === undefined ? {} : { skip }) }),
  ).toString('base64url');
}

/** Our sort keys are printable ASCII of at most about 120 characters; cursors far below this. */
const MAX_CURSOR_SORT_KEY_BYTES = 256;
/** base64url of the largest `{pk, sk, skip}`: a partition of a 1,024-byte subscription id and such a sort key. */
const MAX_CURSOR_LENGTH = 2048;
/** More attempts than a 64 KB pack can hold. */
const MAX_CURSOR_SKIP = 65_536;
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * A cursor is exactly `{pk, sk}` (or, for the attempt history only, `{pk, sk, skip}`): `pk` this
 * subscription's partition, `sk` a printable key of the listed kind (its prefix) and of bounded
 * length, `skip` a whole number from 1. Anything else — garbage, other JSON, another
 * subscription's partition, an oversized or extra member — is refused here, before DynamoDB would
 * answer a ValidationException (a 500) (issue 8, item 10).
 */
export function decodePageCursor(
  cursor: string,
  subscriptionId: string,
  prefix: string,
): { sortKey: string; skip?: number } {
  if (cursor.length <= MAX_CURSOR_LENGTH) {
    try {
      const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      const members =
        typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value).sort().join() : '';
      if (members === 'pk,sk' || (members === 'pk,sk,skip' && prefix === ATTEMPT)) {
        const { pk, sk, skip } = value as { pk: unknown; sk: unknown; skip?: unknown };
        if (
          pk === partition(subscriptionId) &&
          typeof sk === 'string' &&
          sk.startsWith(prefix) &&
          sk.length > prefix.length &&
          sk.length <= MAX_CURSOR_SORT_KEY_BYTES &&
          PRINTABLE_ASCII.test(sk) &&
          (skip === undefined ||
            (Number.isInteger(skip) && (skip as number) >= 1 && (skip as number) <= MAX_CURSOR_SKIP))
        ) {
          return skip === undefined ? { sortKey: sk } : { sortKey: sk, skip: skip as number };
        }
      }
    } catch {
      // falls through to the error below
    }
  }
  throw new InvalidPageCursorError('the cursor is not one this list handed out');
}

/** A cursor of a list whose pages end between items: the key to continue after. */
export function decodeCursor(cursor: string, subscriptionId: string, prefix: string): Item {
  return key(subscriptionId, decodePageCursor(cursor, subscriptionId, prefix).sortKey);
}
